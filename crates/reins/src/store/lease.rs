//! Claims on a run: the [`Lease`] a worker advances a run with, the [`ClaimedRun`] it
//! continues, the checks every store's claims share, and the process clock of the stores on
//! one machine (the PostgreSQL store reads the database server's).

#[cfg(doc)]
use super::RunStore;
use super::{RecordedDecision, StoreError};
use crate::run::{RunState, RunStatus};
use std::time::Duration;

/// How long a claim lasts without a checkpoint, unless a store is configured otherwise.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(300);

/// A worker's right to advance a run: the claim that holds it, and the run's version it last
/// wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The run.
    pub run_id: String,
    /// The claim's token: a fresh random id for every [`RunStore::create`] and
    /// [`RunStore::claim`], checked by every checkpoint. It alone holds the lease, so two
    /// claims never share one, whatever their workers are called.
    pub token: String,
    /// The name of the worker that claimed the run: a label for people (shown in
    /// [`StoreError::Busy`]), not an identity; [`RunStore::claim_from`] names it to take a
    /// dead worker's run over.
    pub owner: String,
    /// The version of the run as this worker last wrote it.
    pub version: i64,
}

/// A run loaded from a store for a worker to continue.
#[derive(Debug, Clone)]
pub struct ClaimedRun {
    /// The run's state.
    pub state: RunState,
    /// The decisions recorded for its suspended calls (the latest per call). Resume applies
    /// only those bound to their call as it stands ([`RecordedDecision::binds`]).
    pub decisions: Vec<RecordedDecision>,
    /// The lease to write checkpoints with.
    pub lease: Lease,
}

/// A fresh token for a claim.
pub(crate) fn new_token() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Whether a claim of `state` may proceed: not when the run has finished, nor while a claim's
/// lease (`holder` until `lease_until`) is live, whoever asks — unless the claim takes the
/// run over from that very holder (`taking_over`, [`RunStore::claim_from`]).
pub(crate) fn check_claimable(
    run_id: &str,
    state: &RunState,
    holder: Option<&str>,
    lease_until: i64,
    now: i64,
    taking_over: Option<&str>,
) -> Result<(), StoreError> {
    if matches!(state.status, RunStatus::Completed | RunStatus::Failed) {
        return Err(StoreError::Finished {
            run_id: run_id.to_owned(),
            status: state.status,
        });
    }
    if taking_over.is_some() && taking_over == holder {
        return Ok(());
    }
    check_unleased(run_id, holder, lease_until, now)
}

/// Refuses with [`StoreError::Busy`] while `holder`'s lease lasts (until `lease_until`).
pub(crate) fn check_unleased(
    run_id: &str,
    holder: Option<&str>,
    lease_until: i64,
    now: i64,
) -> Result<(), StoreError> {
    match holder {
        Some(holder) if lease_until > now => Err(StoreError::Busy {
            run_id: run_id.to_owned(),
            owner: holder.to_owned(),
            remaining: Duration::from_millis(u64::try_from(lease_until - now).unwrap_or(0)),
        }),
        _ => Ok(()),
    }
}

/// The time (milliseconds since the Unix epoch) before which a finished run is expired by
/// [`RunStore::expire`]`(older_than)`: runs written at or before it go.
pub(crate) fn expiry_cutoff(older_than: Duration) -> i64 {
    now_millis().saturating_sub(i64::try_from(older_than.as_millis()).unwrap_or(i64::MAX))
}

/// Milliseconds since the Unix epoch, this process's clock: the clock of the single-machine
/// stores (memory, SQLite). The PostgreSQL store reads the database server's instead.
pub(crate) fn now_millis() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    #[cfg(test)]
    let now = now.saturating_add(CLOCK_SKEW.try_with(|skew| *skew).unwrap_or(0));
    now
}

#[cfg(test)]
tokio::task_local! {
    /// How far (milliseconds, ahead when positive) this process's clock reads wrong inside a
    /// task scoped with it: a test plays a worker on a machine whose clock is off, without
    /// touching the other tests' clock.
    pub(crate) static CLOCK_SKEW: i64;
}
