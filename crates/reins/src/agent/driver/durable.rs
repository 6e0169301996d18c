//! A run's link to its store: taking a stored run (the claim, the finished-run refusal, and
//! the decisions a resumed run may apply: only those bound to their call as it stands), and
//! the journal and checkpoints a durable run writes as it goes.

use super::{Driver, Halt, final_answer};
use crate::agent::error::PromptError;
use crate::run::{RunState, RunStatus, ToolDecision};
use crate::store::{JournalEntry, Lease, RecordedDecision, SharedStore, StoreError};
use serde_json::Value;

/// A stored run claimed by this worker, with the decisions it may apply.
pub(super) struct Claimed {
    pub state: RunState,
    /// Decisions bound to their waiting calls, by internal call id.
    pub decisions: Vec<(String, ToolDecision)>,
    pub lease: Lease,
}

/// Claims a stored run for this worker. A run that had already finished is reported as
/// [`PromptError::AlreadyFinished`], with what it stored (a finished run no longer changes).
/// A recorded decision whose binding is not its call's as it stands is refused with
/// [`StoreError::StaleDecision`]: the claim is released unchanged and nothing runs.
pub(super) async fn claim(
    store: &SharedStore,
    run_id: &str,
    worker: &str,
) -> Result<Claimed, PromptError> {
    let store_error = |source, history| PromptError::Store {
        source,
        history,
        run_id: run_id.to_owned(),
    };
    let claimed = match store.claim(run_id, worker).await {
        Ok(claimed) => claimed,
        Err(StoreError::Finished { status, .. }) => {
            let state = store
                .load(run_id)
                .await
                .map_err(|source| store_error(source, Vec::new()))?;
            return Err(PromptError::AlreadyFinished {
                run_id: run_id.to_owned(),
                status,
                answer: (status == RunStatus::Completed).then(|| final_answer(&state.history)),
                history: state.history,
            });
        }
        Err(source) => return Err(store_error(source, Vec::new())),
    };
    match bound_decisions(&claimed.state, claimed.decisions) {
        Ok(decisions) => Ok(Claimed {
            state: claimed.state,
            decisions,
            lease: claimed.lease,
        }),
        Err(stale) => {
            // Give the run back as it was: it waits for a decision about what it is now.
            let released = store
                .checkpoint(&claimed.lease, &claimed.state, &[], true)
                .await;
            let source = released.err().unwrap_or(stale);
            Err(store_error(source, claimed.state.history))
        }
    }
}

/// The recorded decisions about calls that wait for one, checked against their binding.
/// Decisions about calls that no longer wait are left out.
fn bound_decisions(
    state: &RunState,
    recorded: Vec<RecordedDecision>,
) -> Result<Vec<(String, ToolDecision)>, StoreError> {
    let mut decisions = Vec::new();
    for recorded in recorded {
        let id = &recorded.decision.internal_call_id;
        let Some(call) = state
            .pending_calls
            .iter()
            .find(|call| call.internal_call_id == *id && call.awaits_decision())
        else {
            continue;
        };
        if !recorded.binds(&state.run_id, call) {
            // A call that started cannot change any more: a decision that does not bind to it
            // was made before a start, which used it, not about the call as it stands.
            if call.starts > 0 {
                continue;
            }
            return Err(StoreError::StaleDecision {
                run_id: state.run_id.clone(),
                internal_call_id: id.clone(),
            });
        }
        decisions.push((id.clone(), recorded.decision.decision));
    }
    Ok(decisions)
}

/// A durable run's link to its store.
pub(super) struct Durable {
    pub store: SharedStore,
    /// `None` until the run is created in the store.
    pub lease: Option<Lease>,
    /// Effects completed since the last checkpoint.
    pub journal: Vec<JournalEntry>,
}

impl Durable {
    pub(super) fn new(store: SharedStore, lease: Lease) -> Self {
        Durable {
            store,
            lease: Some(lease),
            journal: Vec::new(),
        }
    }
}

impl Driver<'_> {
    /// Journals an effect, to be written with the next checkpoint.
    pub(super) fn journal(&mut self, effect_id: String, kind: &str, payload: Value) {
        if let Some(durable) = &mut self.durable {
            durable.journal.push(JournalEntry {
                effect_id,
                kind: kind.to_owned(),
                payload,
            });
        }
    }

    /// Writes the run's state and the effects journaled since the last checkpoint, in one
    /// transaction (a no-op for a run without a store).
    pub(super) async fn checkpoint(&mut self, release: bool) -> Result<(), Halt> {
        let Some(durable) = &mut self.durable else {
            return Ok(());
        };
        self.state.entries = self.ctx.snapshot_entries();
        let lease = match &durable.lease {
            Some(lease) => {
                durable
                    .store
                    .checkpoint(lease, &self.state, &durable.journal, release)
                    .await
            }
            None => durable.store.create(&self.state, &self.worker).await,
        }
        .map_err(Halt::Store)?;
        durable.lease = Some(lease);
        durable.journal.clear();
        Ok(())
    }

    /// Gives the run back as the store last recorded it, lease released, after the store
    /// failed to take a write: what was not stored did not happen as far as any worker knows,
    /// so the run resumes from its last checkpoint, as after a crash, without waiting for the
    /// lease to expire. Best effort: a store still failing (or a lease another worker holds
    /// now; the write is a compare-and-swap) leaves the lease to expire.
    pub(super) async fn release_as_stored(&mut self) {
        let Some(durable) = &mut self.durable else {
            return;
        };
        let Some(lease) = durable.lease.take() else {
            return;
        };
        durable.journal.clear();
        let released = match durable.store.load(&self.state.run_id).await {
            Ok(stored) => durable.store.checkpoint(&lease, &stored, &[], true).await,
            Err(error) => Err(error),
        };
        if let Err(error) = released {
            tracing::warn!(
                target: "reins",
                run_id = %self.state.run_id,
                %error,
                "the run's lease could not be given back; it is free again when it expires"
            );
        }
    }
}
