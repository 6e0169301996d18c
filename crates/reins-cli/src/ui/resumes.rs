//! The runs the inbox resumes in the background: after a decision, the resume button or a
//! fork. A run is resumed once at a time here (its page says so instead of offering to
//! resume it again), and Ctrl-C or SIGTERM stops every one of them the way it stops
//! `reins runs resume` ([`crate::interrupt`]): each gives its lease back before the inbox
//! exits. A run another process took (its lease is live) is not resumed: the resume is
//! refused at once with who drives it ([`taken_meanwhile`]), or, when that process took it
//! between the check and the claim, the run's page says so ([`resume_failure`]).

use super::{App, refused};
use crate::approve::CliDecider;
use crate::interrupt::drive_until;
use crate::lease_keeper::LeaseKeeper;
use crate::run::Ending;
use crate::run::Output;
use crate::runs::{lease_of, lease_shown};
use axum::http::StatusCode;
use axum::response::Response;
use reins::agent::RunStatus;
use reins::store::LeaseHolder;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, MutexGuard, PoisonError};
use tokio::task::JoinSet;

/// The resumes in progress.
#[derive(Default)]
pub(super) struct Resumes {
    tasks: JoinSet<()>,
    /// The runs they resume.
    runs: HashSet<String>,
    /// Why the last resume of a run failed (a run another process took first is refused as
    /// busy): its page says so, until the run is resumed again.
    failures: HashMap<String, String>,
}

/// The inbox's resumes, locked (a panic elsewhere leaves them usable).
fn locked(app: &App) -> MutexGuard<'_, Resumes> {
    app.resumes.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether `run` is being resumed by this inbox.
pub(super) fn resumed_here(app: &App, run: &str) -> bool {
    locked(app).runs.contains(run)
}

/// Why this inbox's last resume of `run` failed, if it did.
pub(super) fn resume_failure(app: &App, run: &str) -> Option<String> {
    locked(app).failures.get(run).cloned()
}

/// Resumes `run` in the background with the decisions recorded for it, unless this inbox
/// already does; nothing is printed (the page follows the run) but an interruption. A later
/// `ask` suspends it again.
pub(super) fn spawn_resume(app: Arc<App>, run: String) {
    let mut resumes = locked(&app);
    if !resumes.runs.insert(run.clone()) {
        return;
    }
    resumes.failures.remove(&run);
    // Forget the resumes that ended, so the set holds only those still going.
    while resumes.tasks.try_join_next().is_some() {}
    let task = {
        let app = app.clone();
        async move {
            let failure = resume(&app, &run).await;
            let mut resumes = locked(&app);
            resumes.runs.remove(&run);
            if let Some(failure) = failure {
                resumes.failures.insert(run, failure);
            }
        }
    };
    resumes.tasks.spawn(task);
}

/// Resumes `run` to its next stop; why it failed, if it did.
async fn resume(app: &App, run: &str) -> Option<String> {
    match crate::assemble::assemble(&app.agent, CliDecider::suspend_only()).await {
        Ok(assembled) => {
            let keeper = LeaseKeeper::new(app.store.clone());
            let worker = crate::lease_keeper::worker_name("ui");
            let stream = assembled
                .agent
                .resume_stored(keeper.clone(), run)
                .worker(worker.clone())
                .max_turns(assembled.max_turns)
                .stream();
            let mut quiet = Output::quiet().agent_file(&app.agent.path);
            let ending = drive_until(stream, &mut quiet, &keeper, run, app.stop.stopped()).await;
            if ending != Ending::Error {
                return None;
            }
            let failure = quiet.failure().unwrap_or_default().to_owned();
            // Refused as busy: another process claimed the run after the button was pressed.
            match lease_of(&app.store, run).await {
                Ok(Some(lease)) if lease.owner != worker => Some(format!(
                    "another process took the run first ({}): {failure}",
                    lease_shown(RunStatus::Running, Some(&lease))
                )),
                _ => Some(failure),
            }
        }
        Err(error) => {
            eprintln!("reins: cannot resume run {run}: {error}");
            Some(error.to_string())
        }
    }
}

/// The answer to a resume of `run` that another process took since its page offered the
/// button: not resumed here, and who drives it until when.
pub(super) fn taken_meanwhile(run: &str, lease: &LeaseHolder) -> Response {
    let message = format!(
        "not resumed: another process took run `{run}` after this page offered to resume it, \
         and it is {}. The inbox leaves the run to that process; its page offers the resume \
         again once the process leaves it (stopped, or its lease runs out).",
        lease_shown(RunStatus::Running, Some(lease))
    );
    refused(StatusCode::CONFLICT, &message, Some(run))
}

/// Waits for every resume to end; once the inbox was stopped, each ends at that stop and
/// gives its lease back.
pub(super) async fn wait_for_all(app: &App) {
    let tasks = std::mem::take(&mut locked(app).tasks);
    tasks.join_all().await;
}
