//! Ctrl-C (SIGINT) and SIGTERM: a run driven by `reins run`, `reins chat` or `reins runs
//! resume` stops at once and gives its lease back, so it can be resumed right away instead
//! of once the lease expires; `reins serve` stops its worker.
//!
//! The run's future is dropped where it waits (a model call, a tool — a shell tool's program
//! is killed with it — or a person's answer), so what it recorded stays as recorded: a tool
//! call that had started is in doubt when the run is resumed, as after a crash, and runs
//! again only if its tool says that is safe or a person approves it.

use crate::lease_keeper::LeaseKeeper;
use crate::run::{self, Ending, Output};
use futures::future::{Either, select};
use reins::agent::{PromptStream, RunStatus};
use reins::store::RunStore;
use std::pin::pin;

/// Ctrl-C, or SIGTERM (what service managers and `kill` send).
pub async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Drives `stream`, the run `run_id` writing through `keeper`, to its end, or until Ctrl-C
/// or SIGTERM: then the run is stopped, its lease given back, and the ending is
/// [`Ending::Interrupted`]. A second Ctrl-C while the lease is given back ends at once.
pub async fn drive(
    stream: PromptStream,
    output: &mut Output,
    keeper: &LeaseKeeper,
    run_id: &str,
) -> Ending {
    {
        let driving = pin!(run::drive(stream, output));
        if let Either::Left((ending, _)) = select(driving, pin!(stopped())).await {
            return ending;
        }
        // The run's future (and its stream) is dropped here.
    }
    let resumable = match select(pin!(give_back(keeper, run_id)), pin!(stopped())).await {
        Either::Left((resumable, _)) => resumable,
        Either::Right(_) => Err("was stopped while its lease was given back: it can be \
                                 resumed once the lease expires"
            .to_owned()),
    };
    output.interrupted(run_id, resumable);
    Ending::Interrupted
}

/// Gives the run's lease back: `Ok` when the run can be resumed now, else why not.
async fn give_back(keeper: &LeaseKeeper, run_id: &str) -> Result<(), String> {
    match keeper.release().await {
        Ok(true) => Ok(()),
        Ok(false) => match keeper.load(run_id).await {
            // Its last checkpoint already released it: it ended, or waits for a decision.
            Ok(state) if matches!(state.status, RunStatus::Completed | RunStatus::Failed) => {
                Err("had already ended".to_owned())
            }
            Ok(_) => Ok(()),
            Err(_) => Err("had not been stored yet".to_owned()),
        },
        Err(error) => Err(format!(
            "could not give its lease back ({error}): it can be resumed once the lease expires"
        )),
    }
}
