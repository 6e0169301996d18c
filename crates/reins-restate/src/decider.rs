//! [`JournaledDecider`]: an approval decider whose every answer is one journaled step, so a
//! replayed run takes the decision it took the first time instead of asking again.

use crate::steps::Steps;
use futures::FutureExt;
use reins::hooks::approval::{ApprovalDecider, ApprovalRequest, Decision};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

/// An [`ApprovalDecider`] whose answers are journaled steps on Restate (and plain answers
/// when embedded).
///
/// A hook runs again on every replay of a Restate invocation, and a decider that asks the
/// outside world (a web service, a person) may answer differently the second time. Wrapped,
/// the decider is asked once per call, as the step `<run id>/approval/<internal call id>`;
/// a replay reads its answer from the journal. Use it for a
/// [`WebhookDecider`](reins::hooks::approval::WebhookDecider) or any decider that does more
/// than read the request.
///
/// The decider fails closed inside the step: a panic, or no answer within
/// [`timeout`](JournaledDecider::timeout), is journaled as a denial. Give the policy's own
/// [`timeout`](reins::hooks::approval::ApprovalPolicy::timeout) a margin over this one, so
/// that the denial a replay sees is the journaled one. A step that cannot be journaled
/// denies the call too.
///
/// A step cannot suspend halfway: a decider that takes longer than Restate's abort timeout
/// (10 minutes by default) is aborted and asked again. A decider that waits for a person
/// should answer [`Decision::suspend`] instead, and let the run wait for `decide` in Restate.
///
/// ```
/// use reins::hooks::approval::{ApprovalPolicy, Decision, Rule, decider_fn};
/// use reins_restate::Steps;
/// use std::time::Duration;
///
/// let steps = Steps::embedded(); // an `AgentService` passes its own
/// let ask_service = decider_fn(|request| async move {
///     Decision::deny(format!("{} needs a ticket", request.tool_name))
/// });
/// let policy = ApprovalPolicy::new()
///     .rule(Rule::ask("deploy"))
///     .decider(steps.decider(ask_service).timeout(Duration::from_secs(30)))
///     .timeout(Duration::from_secs(40));
/// # let _ = policy;
/// ```
#[derive(Debug, Clone)]
pub struct JournaledDecider<D> {
    inner: D,
    steps: Steps,
    timeout: Duration,
}

/// How long a [`JournaledDecider`] waits for its decider unless told otherwise.
pub const DEFAULT_DECIDER_TIMEOUT: Duration = Duration::from_secs(60);

impl<D> JournaledDecider<D> {
    /// Wraps `inner`; prefer [`Steps::decider`].
    pub fn new(inner: D, steps: Steps) -> Self {
        JournaledDecider {
            inner,
            steps,
            timeout: DEFAULT_DECIDER_TIMEOUT,
        }
    }

    /// How long the decider may take before the call is denied, inside the step (so the
    /// denial is journaled). [`DEFAULT_DECIDER_TIMEOUT`] unless set.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

impl Steps {
    /// Wraps an approval decider so that each of its answers is one journaled step.
    pub fn decider<D: ApprovalDecider>(&self, decider: D) -> JournaledDecider<D> {
        JournaledDecider::new(decider, self.clone())
    }
}

/// One decision as journaled.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
enum RecordedDecision {
    Approve,
    ApproveWithArgs { args: Value },
    Deny { message: String },
    Suspend { reason: String },
}

impl From<Decision> for RecordedDecision {
    fn from(decision: Decision) -> Self {
        match decision {
            Decision::Approve => RecordedDecision::Approve,
            Decision::ApproveWithArgs(args) => RecordedDecision::ApproveWithArgs { args },
            Decision::Deny(message) => RecordedDecision::Deny { message },
            Decision::Suspend(reason) => RecordedDecision::Suspend { reason },
        }
    }
}

impl From<RecordedDecision> for Decision {
    fn from(recorded: RecordedDecision) -> Self {
        match recorded {
            RecordedDecision::Approve => Decision::Approve,
            RecordedDecision::ApproveWithArgs { args } => Decision::ApproveWithArgs(args),
            RecordedDecision::Deny { message } => Decision::Deny(message),
            RecordedDecision::Suspend { reason } => Decision::Suspend(reason),
        }
    }
}

impl<D: ApprovalDecider> JournaledDecider<D> {
    /// Asks the inner decider once, turning a panic or a late answer into a denial.
    async fn ask(&self, request: &ApprovalRequest) -> RecordedDecision {
        let tool = &request.tool_name;
        // Called inside the future, so a panic before the decider returns its future (a
        // closure's own code) is caught too.
        let asked = AssertUnwindSafe(async { self.inner.decide(request).await }).catch_unwind();
        let decision = match tokio::time::timeout(self.timeout, asked).await {
            Ok(Ok(decision)) => decision,
            Ok(Err(_)) => Decision::deny(format!(
                "`{tool}` was not run: the approval failed (the approver panicked)"
            )),
            Err(_) => Decision::deny(format!(
                "`{tool}` was not run: no approval decision within {:?}",
                self.timeout
            )),
        };
        decision.into()
    }
}

impl<D: ApprovalDecider> ApprovalDecider for JournaledDecider<D> {
    async fn decide(&self, request: &ApprovalRequest) -> Decision {
        // Not `record`: the crate's own step names stay out of the callers' namespace.
        let step = self
            .steps
            .step_name(&format!("approval/{}", request.internal_call_id));
        match self.steps.journal_value(step, || self.ask(request)).await {
            Ok(recorded) => RecordedDecision::into(recorded),
            Err(error) => {
                tracing::warn!(
                    run_id = %request.run_id,
                    tool = %request.tool_name,
                    error = %error,
                    "the approval could not be journaled; the call is denied"
                );
                Decision::deny(format!(
                    "`{}` was not run: its approval could not be journaled",
                    request.tool_name
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests;
