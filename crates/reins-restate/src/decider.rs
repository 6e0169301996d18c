//! [`JournaledDecider`]: an approval decider whose every answer is one journaled step, so a
//! replayed run takes the decision it took the first time instead of asking again.

use crate::steps::Steps;
use futures::FutureExt;
use recorded::RecordedOutcome;
use reins::hooks::approval::{ApprovalDecider, ApprovalRequest, DeciderFailure, Decision};
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
/// What the step journals is the decider's outcome
/// ([`try_decide`](ApprovalDecider::try_decide)): its decision, or why it gave none — it
/// said so ([`DeciderFailure::NoDecision`]: a webhook whose service failed), it panicked, or
/// it did not answer within [`timeout`](JournaledDecider::timeout). A replay returns the
/// same outcome, so an approval policy denies the call itself on both, as the policy's
/// denial and not as one the decider made. The inner decider is told of that denial
/// ([`failed_to_answer`](ApprovalDecider::failed_to_answer)) once too, as the step
/// `<run id>/approval/<internal call id>/failed`. Give the policy's own
/// [`timeout`](reins::hooks::approval::ApprovalPolicy::timeout) a margin over this one, so
/// that the outcome a replay sees is the journaled one. A step that cannot be journaled is
/// a failure too ([`DeciderFailure::NoDecision`]), and the call is denied.
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

    /// How long the decider may take before it has failed ([`DeciderFailure::TimedOut`])
    /// and the call is denied, inside the step (so the failure is journaled).
    /// [`DEFAULT_DECIDER_TIMEOUT`] unless set.
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

impl<D: ApprovalDecider> JournaledDecider<D> {
    /// Asks the inner decider once; a panic or a late answer is the decider's failure.
    async fn ask(&self, request: &ApprovalRequest) -> RecordedOutcome {
        // Called inside the future, so a panic before the decider returns its future (a
        // closure's own code) is caught too.
        let asked = AssertUnwindSafe(async { self.inner.try_decide(request).await }).catch_unwind();
        let outcome = match tokio::time::timeout(self.timeout, asked).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => Err(DeciderFailure::Panicked),
            Err(_) => Err(DeciderFailure::TimedOut(self.timeout)),
        };
        outcome.into()
    }
}

impl<D: ApprovalDecider> ApprovalDecider for JournaledDecider<D> {
    /// The decision [`try_decide`](Self::try_decide) journals, or, when the decider gave
    /// none, a denial saying why (the words an approval policy uses for its own denial).
    async fn decide(&self, request: &ApprovalRequest) -> Decision {
        self.try_decide(request).await.unwrap_or_else(|failure| {
            Decision::deny(format!("`{}` was not run: {failure}", request.tool_name))
        })
    }

    /// The inner decider's decision, or why it gave none, as journaled in the step
    /// `<run id>/approval/<call>`: a replay returns the same, without asking again.
    async fn try_decide(&self, request: &ApprovalRequest) -> Result<Decision, DeciderFailure> {
        // Not `record`: the crate's own step names stay out of the callers' namespace.
        let step = self
            .steps
            .step_name(&format!("approval/{}", request.internal_call_id));
        match self.steps.journal_value(step, || self.ask(request)).await {
            Ok(recorded) => recorded.into(),
            Err(error) => {
                tracing::warn!(
                    run_id = %request.run_id,
                    tool = %request.tool_name,
                    error = %error,
                    "the approval could not be journaled; the call is denied"
                );
                Err(DeciderFailure::NoDecision(
                    "its approval could not be journaled".to_owned(),
                ))
            }
        }
    }

    /// Tells the inner decider, once: as the step `<run id>/approval/<call>/failed`, which
    /// a replay reads instead of telling it again (a decider that logs the policy's denial
    /// in a trail logs it once).
    async fn failed_to_answer(
        &self,
        request: &ApprovalRequest,
        failure: &DeciderFailure,
        denial: &Decision,
    ) {
        let step = self
            .steps
            .step_name(&format!("approval/{}/failed", request.internal_call_id));
        let tell = || async {
            let told = AssertUnwindSafe(async {
                self.inner.failed_to_answer(request, failure, denial).await;
            })
            .catch_unwind();
            // Whether the inner decider returned; journaled, so a replay does not ask.
            matches!(tokio::time::timeout(self.timeout, told).await, Ok(Ok(())))
        };
        match self.steps.journal_value::<bool, _, _>(step, tell).await {
            Ok(true) => {}
            Ok(false) => tracing::warn!(
                run_id = %request.run_id,
                tool = %request.tool_name,
                "the approval decider panicked or did not return when told of the policy's denial"
            ),
            Err(error) => tracing::warn!(
                run_id = %request.run_id,
                tool = %request.tool_name,
                error = %error,
                "the approval decider could not be told of the policy's denial"
            ),
        }
    }
}

mod recorded;

#[cfg(test)]
mod tests;
