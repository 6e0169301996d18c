//! Taking a stored run: the claim, the finished-run refusal, and the decisions a resumed run
//! may apply (only those bound to their call as it stands).

use super::final_answer;
use crate::agent::error::PromptError;
use crate::run::{RunState, RunStatus, ToolDecision};
use crate::store::{Lease, RecordedDecision, SharedStore, StoreError};

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
            return Err(StoreError::StaleDecision {
                run_id: state.run_id.clone(),
                internal_call_id: id.clone(),
            });
        }
        decisions.push((id.clone(), recorded.decision.decision));
    }
    Ok(decisions)
}
