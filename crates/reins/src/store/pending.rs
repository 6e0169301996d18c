//! What waits for a person: the suspended calls without a decision ([`PendingApproval`]),
//! as [`RunStore::pending_approvals`] lists them, and the runs that could not be read.

#[cfg(doc)]
use super::{Decision, RunPage, RunStore};
use super::{RecordedDecision, StoreError, decision};
use crate::run::RunState;
#[cfg(doc)]
use crate::run::ToolDecision;
use serde_json::Value;

/// A suspended tool call waiting for a decision, as listed by [`RunStore::pending_approvals`].
/// (A call a live decider is asked about during a run is a
/// [`crate::hooks::approval::PendingApproval`] instead.)
#[derive(Debug, Clone, PartialEq)]
pub struct PendingApproval {
    /// The run.
    pub run_id: String,
    /// The call's internal id, to pass to [`RunStore::decide`].
    pub internal_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// The arguments the call would execute with: the model's (as hooks repaired them), or,
    /// for a call in doubt, those it started with.
    pub arguments: Value,
    /// Why the call was suspended.
    pub reason: String,
    /// The digest a decision about this call must carry ([`Decision::binding`], made by
    /// [`Decision::new`]): over the run, the call, the tool and [`arguments`](Self::arguments).
    pub binding: String,
    /// Whether the call is in doubt: it started before a crash and no result was recorded,
    /// so its side effect may have happened. Decide with [`ToolDecision::Rerun`],
    /// [`ToolDecision::Skip`] or [`ToolDecision::SupplyResult`].
    pub in_doubt: bool,
}

/// What waits for a decision, as listed by [`RunStore::pending_approvals`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PendingApprovals {
    /// Every suspended call without a decision, of every suspended run the store could read.
    pub approvals: Vec<PendingApproval>,
    /// Every suspended run the store could not read (its state or one of its decisions): it
    /// may wait for decisions nobody sees until it is repaired. Its record was left untouched.
    pub unreadable: Vec<UnreadableRun>,
}

/// A run whose record cannot be read, as reported by [`RunStore::pending_approvals`] (a
/// suspended run) and [`RunStore::list_runs`] ([`RunPage::unreadable`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableRun {
    /// The run.
    pub run_id: String,
    /// Why it cannot be read (e.g. [`StoreError::Corrupt`] or
    /// [`StoreError::UnsupportedFormat`]).
    pub error: StoreError,
}

impl PendingApproval {
    /// The calls of the suspended run `state` that wait for a decision, given its audit
    /// trail ([`RunStore::decisions`]): what [`RunStore::pending_approvals`] lists for the
    /// run, for a program that read that one run (an inbox showing some runs out of many)
    /// and would not read every suspended run of the store for it. Of the trail, only the
    /// latest decision about each call counts (one that replaced an earlier one, see
    /// [`Decision::replacing`](super::Decision::replacing)), and none made while
    /// the run went on ([`RecordedDecision::during_run`]).
    pub fn of_run(state: &RunState, trail: &[RecordedDecision]) -> Vec<PendingApproval> {
        let call = |decision: &RecordedDecision| decision.decision.internal_call_id.clone();
        let latest: Vec<RecordedDecision> = trail
            .iter()
            .enumerate()
            .filter(|(_, decision)| !decision.during_run)
            .filter(|(at, decision)| {
                !trail[at + 1..]
                    .iter()
                    .any(|later| !later.during_run && call(later) == call(decision))
            })
            .map(|(_, decision)| decision.clone())
            .collect();
        pending_of(state, &latest)
    }
}

/// The suspended calls of a run that no decision bound to them covers yet.
fn pending_of(state: &RunState, decided: &[RecordedDecision]) -> Vec<PendingApproval> {
    state
        .pending_calls
        .iter()
        .filter(|call| call.awaits_decision())
        .filter(|call| !decided.iter().any(|d| d.binds(&state.run_id, call)))
        .map(|call| PendingApproval {
            binding: decision::binding_of(&state.run_id, call),
            run_id: state.run_id.clone(),
            internal_call_id: call.internal_call_id.clone(),
            tool_name: call.call.name.clone(),
            arguments: call.arguments().clone(),
            reason: call.suspended.clone().unwrap_or_default(),
            in_doubt: call.is_in_doubt(),
        })
        .collect()
}

/// Adds what one suspended run waits for to `listing`, or the run to its unreadable ones; only
/// a failure of the store itself ([`StoreError::Backend`]) is passed on.
pub(crate) fn collect_pending(
    listing: &mut PendingApprovals,
    run_id: &str,
    read: Result<(RunState, Vec<RecordedDecision>), StoreError>,
) -> Result<(), StoreError> {
    match read {
        Ok((state, decided)) => listing.approvals.extend(pending_of(&state, &decided)),
        Err(error @ StoreError::Backend(_)) => return Err(error),
        Err(error) => listing.unreadable.push(UnreadableRun {
            run_id: run_id.to_owned(),
            error,
        }),
    }
    Ok(())
}
