//! The runs the inbox resumes in the background: after a decision, the resume button or a
//! fork. A run is resumed once at a time here (its page says so instead of offering to
//! resume it again), and Ctrl-C or SIGTERM stops every one of them the way it stops
//! `reins runs resume` ([`crate::interrupt`]): each gives its lease back before the inbox
//! exits.

use super::App;
use crate::approve::CliDecider;
use crate::interrupt::drive_until;
use crate::lease_keeper::LeaseKeeper;
use crate::run::Output;
use std::collections::HashSet;
use std::sync::{Arc, MutexGuard, PoisonError};
use tokio::task::JoinSet;

/// The resumes in progress.
#[derive(Default)]
pub(super) struct Resumes {
    tasks: JoinSet<()>,
    /// The runs they resume.
    runs: HashSet<String>,
}

/// The inbox's resumes, locked (a panic elsewhere leaves them usable).
fn locked(app: &App) -> MutexGuard<'_, Resumes> {
    app.resumes.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether `run` is being resumed by this inbox.
pub(super) fn resumed_here(app: &App, run: &str) -> bool {
    locked(app).runs.contains(run)
}

/// Resumes `run` in the background with the decisions recorded for it, unless this inbox
/// already does; nothing is printed (the page follows the run) but an interruption. A later
/// `ask` suspends it again.
pub(super) fn spawn_resume(app: Arc<App>, run: String) {
    let mut resumes = locked(&app);
    if !resumes.runs.insert(run.clone()) {
        return;
    }
    // Forget the resumes that ended, so the set holds only those still going.
    while resumes.tasks.try_join_next().is_some() {}
    let task = {
        let app = app.clone();
        async move {
            resume(&app, &run).await;
            locked(&app).runs.remove(&run);
        }
    };
    resumes.tasks.spawn(task);
}

async fn resume(app: &App, run: &str) {
    match crate::assemble::assemble(&app.agent, CliDecider::suspend_only()).await {
        Ok(assembled) => {
            let keeper = LeaseKeeper::new(app.store.clone());
            let stream = assembled
                .agent
                .resume_stored(keeper.clone(), run)
                .max_turns(assembled.max_turns)
                .stream();
            let mut quiet = Output::quiet().agent_file(&app.agent.path);
            drive_until(stream, &mut quiet, &keeper, run, app.stop.stopped()).await;
        }
        Err(error) => eprintln!("reins: cannot resume run {run}: {error}"),
    }
}

/// Waits for every resume to end; once the inbox was stopped, each ends at that stop and
/// gives its lease back.
pub(super) async fn wait_for_all(app: &App) {
    let tasks = std::mem::take(&mut locked(app).tasks);
    tasks.join_all().await;
}
