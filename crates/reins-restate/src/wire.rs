//! What goes over Restate's ingress: a run's input and output, its progress, and a decision.

use reins::agent::ToolDecision;
use reins::completion::Usage;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The input of a run (the body of `POST /ReinsAgent/<run id>/run`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInput {
    /// The user's message.
    pub prompt: String,
}

/// What a completed run returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunOutput {
    /// The run's id (the workflow key).
    pub run_id: String,
    /// The final answer.
    pub answer: String,
    /// Model turns taken.
    pub turns: usize,
    /// Tokens used over the run.
    pub usage: Usage,
}

/// A tool call waiting for a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingDecision {
    /// The call's internal id (`t<turn>c<ordinal>`), to name in a decision.
    pub call: String,
    /// The tool.
    pub tool: String,
    /// The arguments the model sent, whole: the call executes with them if approved. Not
    /// masked by the agent's redaction, as a store's pending approvals are not (see the crate
    /// docs, "Secrets in the journal").
    pub arguments: Value,
    /// Why the call was suspended.
    pub reason: String,
    /// The Restate awakeable the run waits on. A decision may also resolve it directly through
    /// `POST /restate/awakeables/<id>/resolve`, skipping `decide`'s checks: a payload that is
    /// no usable decision leaves the call waiting on a fresh awakeable (listed here), and one
    /// rejected through `.../reject` fails the run.
    pub awakeable: String,
    /// The call is in doubt: it started on a worker that died before its result was
    /// journaled, and its tool does not declare a second execution safe
    /// ([`RetrySafety`](reins::tool::RetrySafety)), so its effect may or may not have happened.
    /// It waits for `rerun` (or `approve`), `approve_with_args`, `skip`, `supply_result` or
    /// `deny`, as a stored run's call in doubt does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_doubt: bool,
}

/// Where a run is, as returned by the `status` handler.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunProgress {
    /// Every journaled step so far, oldest first: `<run id>/model/<n>` for a model call, the
    /// effect id `<run id>/t<turn>c<ordinal>` for a tool call, `<run id>/approval/<call>` for
    /// a journaled decider's answer (and `<run id>/approval/<call>/failed` when it gave
    /// none and was told of the policy's denial), `<run id>/record/<name>` for [`Steps::record`].
    ///
    /// [`Steps::record`]: crate::Steps::record
    pub steps: Vec<String>,
    /// The calls the run is suspended on, waiting for a decision (empty while it runs).
    pub pending: Vec<PendingDecision>,
    /// Why the run ended without an answer, once it has (`None` while it runs or after it
    /// answered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<RunFailure>,
}

/// Why a run ended without an answer, as the `status` handler reports it (the run's output
/// carries the error's text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunFailure {
    /// It reached its turn limit.
    MaxTurns,
    /// A budget hook stopped it ([`BudgetExceeded`](reins::hooks::budget::BudgetExceeded)).
    Budget,
    /// Anything else: a model or tool failure, another hook's stop, a hook's panic.
    Error,
    /// Its invocation was cancelled through Restate (`restate invocations cancel`).
    Cancelled,
}

impl RunFailure {
    /// The kind of `error`.
    pub fn of(error: &reins::agent::PromptError) -> Self {
        if matches!(error, reins::agent::PromptError::MaxTurns { .. }) {
            RunFailure::MaxTurns
        } else if error
            .stopped_by::<reins::hooks::budget::BudgetExceeded>()
            .is_some()
        {
            RunFailure::Budget
        } else {
            RunFailure::Error
        }
    }
}

/// A decision about one suspended call (the body of `POST /ReinsAgent/<run id>/decide`), e.g.
/// `{"call": "t1c0", "decision": "approve"}`,
/// `{"call": "t1c0", "decision": "deny", "message": "not today"}` or
/// `{"call": "t1c0", "decision": "approve_with_args", "args": {"amount": 5}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionRequest {
    /// The call's internal id, as listed in [`RunProgress::pending`].
    pub call: String,
    /// The decision.
    #[serde(flatten)]
    pub decision: ToolDecision,
}
