//! Ctrl-C (SIGINT) and SIGTERM: a run driven by `reins run`, `reins chat`, `reins runs
//! resume` or resumed by `reins ui` stops at once and gives its lease back, so it can be
//! resumed right away instead of once the lease expires; `reins serve` stops its worker.
//!
//! The run's future is dropped where it waits (a model call, a tool — a shell tool's program
//! is killed with it — or a person's answer), so what it recorded stays as recorded: a tool
//! call that had started is in doubt when the run is resumed, as after a crash, and runs
//! again only if its tool says that is safe or a person approves it.
//!
//! A first Ctrl-C at the approval question is the question's ([`crate::question_ctrl_c`]): it
//! leaves the call waiting and the run suspends; SIGTERM, and any other Ctrl-C, stops the run.

use crate::lease_keeper::{LeaseKeeper, ReleaseError};
use crate::question_ctrl_c::handed_to_a_question;
use crate::run::{self, Ending, Output};
use futures::future::{Either, select};
use reins::agent::{PromptStream, RunStatus};
use reins::store::RunStore;
use std::future::Future;
use std::pin::pin;
use tokio::sync::watch;

/// Ctrl-C, or SIGTERM (what service managers and `kill` send). A Ctrl-C the approval
/// question takes ([`crate::question_ctrl_c`]) is not one: it leaves a call waiting.
pub async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(mut interrupt), Ok(mut terminate)) => loop {
                tokio::select! {
                    _ = interrupt.recv() => if !handed_to_a_question() { return },
                    _ = terminate.recv() => return,
                }
            },
            _ => ctrl_c().await,
        }
    }
    #[cfg(not(unix))]
    {
        ctrl_c().await;
    }
}

/// A Ctrl-C no approval question takes.
async fn ctrl_c() {
    loop {
        if tokio::signal::ctrl_c().await.is_err() || !handed_to_a_question() {
            return;
        }
    }
}

/// Ctrl-C or SIGTERM, seen once by one listener and told to every task that waits for it
/// (the inbox's server and each run it resumes): a task that starts waiting after the signal
/// came is told at once. Clones share it.
#[derive(Clone)]
pub struct StopSignal {
    stopped: watch::Receiver<bool>,
}

impl StopSignal {
    /// Starts listening for Ctrl-C and SIGTERM. On Unix the handlers are in place when this
    /// returns, not once the listening task first runs: a signal that comes right after it is
    /// told as a stop, never left to end the process the default way.
    pub fn listen() -> Self {
        let (tell, told) = watch::channel(false);
        let signals = Signals::install();
        tokio::spawn(async move {
            signals.received().await;
            let _ = tell.send(true);
        });
        StopSignal { stopped: told }
    }

    /// Once Ctrl-C or SIGTERM came (at once if it already did).
    pub async fn stopped(&self) {
        let mut stopped = self.stopped.clone();
        // An error means the listener is gone: only when the runtime shuts down, a stop too.
        let _ = stopped.wait_for(|stopped| *stopped).await;
    }

    /// `work`'s output, or `None` when Ctrl-C or SIGTERM came first (`work` is dropped where
    /// it waits): what a command does before it serves, such as opening its store, gives way
    /// to a stop instead of delaying it.
    pub async fn unless_stopped<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        match select(pin!(work), pin!(self.stopped())).await {
            Either::Left((done, _)) => Some(done),
            Either::Right(_) => None,
        }
    }
}

/// The handlers of Ctrl-C and SIGTERM, installed by [`Signals::install`].
struct Signals {
    #[cfg(unix)]
    handlers: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl Signals {
    /// Installs the handlers now (on Unix; elsewhere Ctrl-C is listened for once awaited).
    fn install() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            // Either failing (no signal driver) leaves both to `stopped`, as before.
            let handlers = signal(SignalKind::interrupt())
                .and_then(|interrupt| Ok((interrupt, signal(SignalKind::terminate())?)))
                .ok();
            Signals { handlers }
        }
        #[cfg(not(unix))]
        {
            Signals {}
        }
    }

    /// Once Ctrl-C or SIGTERM came.
    async fn received(self) {
        #[cfg(unix)]
        if let Some((mut interrupt, mut terminate)) = self.handlers {
            loop {
                tokio::select! {
                    _ = interrupt.recv() => if !handed_to_a_question() { return },
                    _ = terminate.recv() => return,
                }
            }
        }
        stopped().await;
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
    drive_until(stream, output, keeper, run_id, stopped()).await
}

/// [`drive`], stopped when `stop` resolves rather than at a signal of its own: the inbox
/// stops every run it resumes at the one signal that stops it.
pub async fn drive_until(
    stream: PromptStream,
    output: &mut Output,
    keeper: &LeaseKeeper,
    run_id: &str,
    stop: impl Future<Output = ()>,
) -> Ending {
    {
        let driving = pin!(run::drive(stream, output));
        if let Either::Left((ending, _)) = select(driving, pin!(stop)).await {
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

/// Gives the run's lease back: `Ok` when the run can be resumed now, else why not. Waits for
/// the store only so long ([`LeaseKeeper::give_up_at`]): a store that does not answer leaves
/// the lease to expire, and the process exits all the same.
async fn give_back(keeper: &LeaseKeeper, run_id: &str) -> Result<(), String> {
    match keeper.release().await {
        Ok(true) => Ok(()),
        Ok(false) => match keeper.within_patience(keeper.load(run_id)).await {
            // Its last checkpoint already released it: it ended, or waits for a decision.
            Some(Ok(state)) if matches!(state.status, RunStatus::Completed | RunStatus::Failed) => {
                Err("had already ended".to_owned())
            }
            Some(Ok(_)) => Ok(()),
            Some(Err(_)) => Err("had not been stored yet".to_owned()),
            None => Err(left_to_expire(None)),
        },
        Err(ReleaseError::NoAnswer { expires_at_ms }) => Err(left_to_expire(expires_at_ms)),
        Err(ReleaseError::Store(error)) => Err(format!(
            "could not give its lease back ({error}): it can be resumed once the lease expires"
        )),
    }
}

/// Why a run whose store did not answer in time cannot be resumed at once.
fn left_to_expire(expires_at_ms: Option<i64>) -> String {
    let when = match expires_at_ms {
        Some(ms) => format!(" at {} at the earliest", crate::trail::utc_time(ms)),
        None => String::new(),
    };
    format!(
        "kept its lease: the run store did not answer in time to take it back, so the lease \
         was left to expire{when}; `reins runs resume` takes the run over then, or at once \
         once `reins runs list` says its owner is gone"
    )
}
