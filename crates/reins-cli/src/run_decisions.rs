//! Decisions made while a run goes on — a person at the terminal, the approval webhook — kept
//! in the run's decision trail beside those of `reins runs approve|deny` and the inbox, so
//! `runs show` and the inbox say who decided each call, when and how, wherever it was
//! decided.
//!
//! The run applies such a decision at once; the store only logs it
//! ([`RunStore::log_decision`](reins::store::RunStore::log_decision)), under the lease the run
//! holds ([`LeaseKeeper::log_decision`]). A decision that suspends the run is no decision: the
//! call waits for one, recorded when it is made. A decider that does not answer in time,
//! panics, or gives no decision (an approval webhook that cannot be reached or answers
//! nonsense) is denied by the approval policy, and that denial is logged too, as the policy's
//! ([`RunDecisions::record_policy_denial`]).

use crate::lease_keeper::LeaseKeeper;
use reins::agent::ToolDecision;
use reins::hooks::approval::{ApprovalDecider, ApprovalRequest, DeciderFailure, Decision};
use reins::store::call_binding;
use std::sync::{Arc, Mutex, PoisonError};

/// Who a decision of the approval webhook is recorded as made by (the service's URL may hold
/// a token: it is not named).
pub const WEBHOOK: &str = "the approval webhook";

/// Who a denial the approval policy made itself is recorded as made by, before why (the
/// decider it asked timed out, panicked or gave no decision: a webhook that failed).
pub const POLICY: &str = "the approval policy";

/// Where a run's deciders log what they decide: the store of the run under way, once it has
/// one ([`RunDecisions::keep_in`]). Clones share it. Before (and for a run with no store)
/// nothing is logged.
#[derive(Clone, Default)]
pub struct RunDecisions {
    keeper: Arc<Mutex<Option<LeaseKeeper>>>,
}

impl RunDecisions {
    /// Logs the decisions of the run written through `keeper` from now on (a chat's next run
    /// replaces its last).
    pub fn keep_in(&self, keeper: &LeaseKeeper) {
        *self.keeper.lock().unwrap_or_else(PoisonError::into_inner) = Some(keeper.clone());
    }

    /// Logs the approval policy's own denial of `request`'s call, made because the decider
    /// asked did not answer (`failure`), in the run's trail: as made by the policy, saying
    /// why ("the approval policy: the decider timed out after 30 s").
    pub async fn record_policy_denial(
        &self,
        request: &ApprovalRequest,
        failure: &DeciderFailure,
        denial: &Decision,
    ) {
        self.record(request, denial, &format!("{POLICY}: {failure}"))
            .await;
    }

    /// Logs `decision` about `request`'s call, made by `decided_by`, in the run's trail. A
    /// failure to log is said on stderr: the decision stands, the run goes on.
    pub async fn record(&self, request: &ApprovalRequest, decision: &Decision, decided_by: &str) {
        let Some(decided) = tool_decision(decision) else {
            return;
        };
        let keeper = self
            .keeper
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let Some(keeper) = keeper else {
            return;
        };
        let recorded = reins::store::Decision {
            internal_call_id: request.internal_call_id.clone(),
            decision: decided,
            binding: call_binding(
                &request.run_id,
                &request.internal_call_id,
                &request.tool_name,
                &request.args,
            ),
            decided_by: decided_by.to_owned(),
            reason: None,
            replaces: None,
        };
        if let Err(error) = keeper.log_decision(&request.run_id, &recorded).await {
            errln!(
                "[approval] the decision about call {} is not in the run's trail: {error}",
                request.internal_call_id
            );
        }
    }
}

/// A decider's answer as the trail keeps it; `None` for a suspension (no decision yet).
fn tool_decision(decision: &Decision) -> Option<ToolDecision> {
    Some(match decision {
        Decision::Approve => ToolDecision::Approve,
        Decision::ApproveWithArgs(args) if args.is_object() => {
            ToolDecision::ApproveWithArgs { args: args.clone() }
        }
        // The policy denies such a call (a tool's arguments are an object).
        Decision::ApproveWithArgs(_) => ToolDecision::Deny {
            message: "the edited arguments are not a JSON object".to_owned(),
        },
        Decision::Deny(message) => ToolDecision::Deny {
            message: message.clone(),
        },
        Decision::Suspend(_) => return None,
    })
}

/// A decider whose every decision is logged in the run's trail as made by `decided_by`.
pub struct Logged<D> {
    inner: D,
    decisions: RunDecisions,
    decided_by: String,
}

impl<D> Logged<D> {
    /// `inner`, its decisions logged in `decisions` as made by `decided_by`.
    pub fn new(inner: D, decisions: RunDecisions, decided_by: impl Into<String>) -> Self {
        Logged {
            inner,
            decisions,
            decided_by: decided_by.into(),
        }
    }
}

impl<D: ApprovalDecider> ApprovalDecider for Logged<D> {
    async fn decide(&self, request: &ApprovalRequest) -> Decision {
        let decision = self.inner.decide(request).await;
        self.decisions
            .record(request, &decision, &self.decided_by)
            .await;
        decision
    }

    /// The inner decider's decision, logged; no entry when it gives none: the policy denies
    /// the call then, and that denial is logged as the policy's ([`Self::failed_to_answer`]).
    async fn try_decide(&self, request: &ApprovalRequest) -> Result<Decision, DeciderFailure> {
        let decision = self.inner.try_decide(request).await?;
        self.decisions
            .record(request, &decision, &self.decided_by)
            .await;
        Ok(decision)
    }

    async fn failed_to_answer(
        &self,
        request: &ApprovalRequest,
        failure: &DeciderFailure,
        denial: &Decision,
    ) {
        self.inner.failed_to_answer(request, failure, denial).await;
        self.decisions
            .record_policy_denial(request, failure, denial)
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::tool_decision;
    use reins::agent::ToolDecision;
    use reins::hooks::approval::Decision;
    use serde_json::json;

    #[test]
    fn a_suspension_is_not_a_decision() {
        assert_eq!(tool_decision(&Decision::suspend("later")), None);
        assert_eq!(
            tool_decision(&Decision::approve()),
            Some(ToolDecision::Approve)
        );
        assert_eq!(
            tool_decision(&Decision::approve_with_args(json!({"a": 1}))),
            Some(ToolDecision::ApproveWithArgs {
                args: json!({"a": 1})
            })
        );
        assert!(matches!(
            tool_decision(&Decision::approve_with_args(json!([1]))),
            Some(ToolDecision::Deny { .. })
        ));
    }
}
