use super::event_kind::{InvalidToolCallReason, StepEventKind};
use super::stop::StopReason;
use crate::completion::CompletionError;
use crate::message::Message;
use crate::run::{RunStatus, SuspendedRun};
use crate::tool::ToolFailure;

/// Why a run ended without an answer. Every variant that can happen mid-run carries the
/// history so far, so nothing the model or the tools produced is lost.
///
/// A hook's stop is [`Cancelled`](Self::Cancelled), with the typed value the hook stopped
/// with when it gave one (a ready-made hook always does):
///
/// ```
/// use reins::agent::{AgentBuilder, PromptError};
/// use reins::hooks::budget::{Budget, BudgetExceeded, BudgetLimit};
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([
///     Turn::tool_call("step", json!({})),
///     Turn::tool_call("step", json!({})),
///     Turn::text("Done."),
/// ]);
/// let step = reins::tool::tool_fn("step", "One step.", |_: serde_json::Value| async move {
///     Ok::<_, std::convert::Infallible>("ok")
/// });
/// let agent = AgentBuilder::new(model)
///     .tool(step)
///     .add_hook(Budget::new().max_model_calls(2))
///     .build();
///
/// match agent.prompt("Go.").await {
///     Err(error @ PromptError::Cancelled { .. }) => {
///         let exceeded = BudgetExceeded::from_error(&error).expect("a budget stop");
///         assert_eq!(exceeded.limit, BudgetLimit::ModelCalls);
///         // What the run did before it stopped is all there: the prompt, the first call and
///         // its result, and the second call, not run (no model call was left to read it).
///         assert_eq!(error.history().map(<[_]>::len), Some(4));
///     }
///     other => panic!("expected the budget to stop the run, got {other:?}"),
/// }
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PromptError {
    /// A hook stopped the run.
    #[error("the run was stopped by a hook: {reason}")]
    Cancelled {
        /// The reason the hook gave: its text, and the typed value behind it when the hook
        /// gave one ([`StopReason::because`]).
        reason: StopReason,
        /// The history when the run stopped.
        history: Vec<Message>,
        /// The run's id.
        run_id: String,
    },
    /// The run used all its model calls (`max_turns`) without a final answer (for a typed
    /// run whose last answer was refused: [`StructuredOutput`](Self::StructuredOutput)).
    #[error("the run reached its limit of {max_turns} model calls without a final answer")]
    MaxTurns {
        /// The limit.
        max_turns: usize,
        /// The history at the limit.
        history: Vec<Message>,
        /// The run's id.
        run_id: String,
    },
    /// The model called a tool it may not call (or sent arguments that are not a JSON object)
    /// and no hook recovered the call.
    ///
    /// Its message quotes the name as the model's server sent it, cut short and with
    /// control sequences escaped: the server chose it, and the message is shown to people.
    #[error(
        "the model made an invalid call to tool `{}`: {reason}",
        crate::observe::shown_name(tool_name)
    )]
    UnknownToolCall {
        /// The tool name the model emitted.
        tool_name: String,
        /// Why the call is invalid.
        reason: InvalidToolCallReason,
        /// The history before the invalid turn.
        history: Vec<Message>,
        /// The run's id.
        run_id: String,
    },
    /// A model call failed, and no hook answered the turn with another call's answer.
    ///
    /// When a hook had sent the turn on to other models first (a
    /// [`ModelFallback`](crate::hooks::fallback::ModelFallback)), every model's failure is
    /// here: `failed_calls` lists them in order, and the message names each model and its
    /// failure on a line of its own. A chain longer than a turn's
    /// [`MAX_MODEL_CALLS_PER_TURN`](crate::agent::MAX_MODEL_CALLS_PER_TURN) calls stops there:
    /// the failures are all here all the same, and `call_limit_reached` says so (as does the
    /// message's last line).
    #[error("{}", completion_failure(source, failed_calls, *call_limit_reached))]
    Completion {
        /// What went wrong: the last call's error.
        #[source]
        source: CompletionError,
        /// The turn's model calls that failed, oldest first, each with the label of its
        /// model: the calls a hook retried on another model
        /// ([`OutcomeAction::retry_on`](crate::agent::OutcomeAction::retry_on)), then the last,
        /// whose error is `source`. (A call whose empty answer was retried did not fail and is
        /// not listed.)
        failed_calls: Vec<FailedCall>,
        /// Whether a hook asked for another call after the last failed one (the next model
        /// of a fallback chain) when the turn had made its
        /// [`MAX_MODEL_CALLS_PER_TURN`](crate::agent::MAX_MODEL_CALLS_PER_TURN) calls, so
        /// that call was not made.
        call_limit_reached: bool,
        /// The history before the failed call.
        history: Vec<Message>,
        /// The run's id.
        run_id: String,
    },
    /// A tool failed and the run was configured to end on tool failures.
    #[error("tool `{tool_name}` failed: {failure}")]
    Tool {
        /// The tool that failed.
        tool_name: String,
        /// How it failed.
        failure: ToolFailure,
        /// The history when it failed.
        history: Vec<Message>,
        /// The run's id.
        run_id: String,
    },
    /// A hook panicked; the run ended and the process went on.
    #[error("a hook panicked during {event:?}: {message}")]
    HookPanicked {
        /// The event the hook was handling.
        event: StepEventKind,
        /// The panic message.
        message: String,
        /// The history when it panicked.
        history: Vec<Message>,
        /// The run's id.
        run_id: String,
    },
    /// A hook answered with an action the run cannot carry out (e.g. retrying a turn that
    /// called tools, or selecting a model label that is not registered).
    #[error("a hook's action was rejected: {reason}")]
    RejectedAction {
        /// Why it was rejected.
        reason: String,
        /// The history when it was rejected.
        history: Vec<Message>,
        /// The run's id.
        run_id: String,
    },
    /// The model's structured answer could not be read as the requested type: the run's
    /// answer, or, when its model calls ran out right after a refused answer, the last one
    /// (the model was told each time; the history shows what it was told).
    #[error("the structured answer could not be read: {message}")]
    StructuredOutput {
        /// What was wrong with it.
        message: String,
        /// The history of the run.
        history: Vec<Message>,
        /// The run's id.
        run_id: String,
    },
    /// A hook suspended one or more tool calls, or a durable run found calls in doubt (started
    /// before a crash, no result recorded, not declared safe to run again): the run waits for
    /// decisions. Resume it with [`Agent::resume`](super::Agent::resume) or
    /// [`Agent::resume_stored`](super::Agent::resume_stored); nothing was executed for the
    /// pending calls.
    ///
    /// Its text names the run and the waiting calls by their internal ids, not their
    /// arguments (which may hold what should not reach a log).
    #[error("{}", suspended_message(run))]
    Suspended {
        /// The run, ready to be persisted and resumed.
        run: Box<SuspendedRun>,
    },
    /// A durable run's store failed, another worker holds or took over the run, or a recorded
    /// decision is bound to other arguments than its call has now
    /// ([`StoreError::StaleDecision`](crate::store::StoreError::StaleDecision): the run was
    /// given back unchanged, nothing ran, and the call waits for a new decision).
    ///
    /// A run whose store failed a write is not recorded as failed (a failed run is final): it
    /// is given back as the store last recorded it, lease released when the store takes that
    /// write, so resuming it (after the lease expires otherwise) goes on from there.
    #[error("{}", store_failure(source))]
    Store {
        /// What went wrong.
        #[source]
        source: crate::store::StoreError,
        /// The history when it happened (empty if the run could not be loaded).
        history: Vec<Message>,
        /// The run's id.
        run_id: String,
    },
    /// The stored run to resume had already finished (completed, or failed: cancelled by a
    /// hook, ended by an error or by `max_turns`). Nothing ran and nothing was written: the
    /// store's record, its version included, is unchanged. A completed run's answer is here,
    /// so a caller that may have resumed it twice can tell "was already finished" from
    /// "finished just now" and act once.
    #[error(
        "run `{run_id}` had already {} before this resume; nothing was run again",
        if *status == RunStatus::Completed { "completed" } else { "failed" }
    )]
    AlreadyFinished {
        /// The run's id.
        run_id: String,
        /// How it finished: [`RunStatus::Completed`] or [`RunStatus::Failed`].
        status: RunStatus,
        /// A completed run's answer (its last assistant message); `None` for a failed run.
        answer: Option<String>,
        /// The run's history as stored.
        history: Vec<Message>,
    },
    /// The run was configured in a way it cannot run (e.g. native structured output on a
    /// model without it).
    #[error("the run cannot start: {0}")]
    InvalidConfiguration(String),
    /// [`PromptStream::finish`](crate::agent::PromptStream::finish) was called on a stream
    /// that had already handed out its last item: the run's response (or its error) was in
    /// that item.
    #[error("the stream had already ended: its last item held the run's response or error")]
    StreamEnded,
}

/// The history an error carries, read through `$history` (a variant's own field) or `$run`
/// (a suspended run's state): one list of the variants for both accessors.
macro_rules! carried_history {
    ($error:expr, $history:ident => $own:expr, $run:ident => $suspended:expr) => {
        match $error {
            PromptError::Cancelled { $history, .. }
            | PromptError::MaxTurns { $history, .. }
            | PromptError::UnknownToolCall { $history, .. }
            | PromptError::Completion { $history, .. }
            | PromptError::Tool { $history, .. }
            | PromptError::HookPanicked { $history, .. }
            | PromptError::RejectedAction { $history, .. }
            | PromptError::StructuredOutput { $history, .. }
            | PromptError::Store { $history, .. }
            | PromptError::AlreadyFinished { $history, .. } => Some($own),
            PromptError::Suspended { $run } => Some($suspended),
            PromptError::InvalidConfiguration(_) | PromptError::StreamEnded => None,
        }
    };
}

impl PromptError {
    /// Why a hook stopped the run, for [`PromptError::Cancelled`]; `None` for every other
    /// error.
    pub fn stop_reason(&self) -> Option<&StopReason> {
        match self {
            PromptError::Cancelled { reason, .. } => Some(reason),
            _ => None,
        }
    }

    /// The typed value a hook stopped the run with ([`StopReason::because`]), if it is an
    /// `E`: how code tells a budget stop from a guardrail trip without reading text.
    pub fn stopped_by<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.stop_reason()?.cause::<E>()
    }

    /// The history the run had when it ended, if the error carries one.
    pub fn history(&self) -> Option<&[Message]> {
        carried_history!(self, history => history, run => &run.state.history)
    }

    /// The history the error carries, to be given to it (see `history`).
    pub(crate) fn history_mut(&mut self) -> Option<&mut Vec<Message>> {
        carried_history!(self, history => history, run => &mut run.state.history)
    }

    /// The id of the run that failed, if it had started.
    pub fn run_id(&self) -> Option<&str> {
        match self {
            PromptError::Cancelled { run_id, .. }
            | PromptError::MaxTurns { run_id, .. }
            | PromptError::UnknownToolCall { run_id, .. }
            | PromptError::Completion { run_id, .. }
            | PromptError::Tool { run_id, .. }
            | PromptError::HookPanicked { run_id, .. }
            | PromptError::RejectedAction { run_id, .. }
            | PromptError::StructuredOutput { run_id, .. }
            | PromptError::Store { run_id, .. }
            | PromptError::AlreadyFinished { run_id, .. } => Some(run_id),
            PromptError::Suspended { run } => Some(&run.state.run_id),
            PromptError::InvalidConfiguration(_) | PromptError::StreamEnded => None,
        }
    }
}

/// A model call that failed: the label of the model it went to and its error (see
/// [`PromptError::Completion`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FailedCall {
    /// The label the model is registered under (`"default"`: the agent's own model).
    pub model: String,
    /// Why the call failed (a provider's error, as redacted and cut short as the provider
    /// gives it).
    pub error: CompletionError,
}

impl FailedCall {
    /// The call to `model` that failed with `error`.
    pub fn new(model: impl Into<String>, error: CompletionError) -> Self {
        FailedCall {
            model: model.into(),
            error,
        }
    }
}

/// What [`PromptError::Completion`] says: the error alone when one model was called, else a
/// line naming the models, then one line per failed call with its model's label (a line break
/// in an error's text is shown as `\n`, so each call stays on its line); then, when the turn
/// ran out of calls, a line saying so.
fn completion_failure(
    source: &CompletionError,
    failed_calls: &[FailedCall],
    call_limit_reached: bool,
) -> String {
    use std::fmt::Write;
    let mut message = failed_calls_text(source, failed_calls);
    if call_limit_reached {
        // Writing to a String cannot fail.
        let _ = write!(
            message,
            "\n  the turn made its limit of {} model calls, so the next model was not tried",
            crate::agent::MAX_MODEL_CALLS_PER_TURN
        );
    }
    message
}

/// The failed calls' part of [`completion_failure`].
fn failed_calls_text(source: &CompletionError, failed_calls: &[FailedCall]) -> String {
    use std::fmt::Write;
    if failed_calls.len() < 2 {
        return format!("the model call failed: {source}");
    }
    let models: Vec<&str> = failed_calls
        .iter()
        .map(|call| call.model.as_str())
        .collect();
    let mut message = format!(
        "the model call failed on every model tried ({}):",
        models.join(", ")
    );
    for call in failed_calls {
        let error = call.error.to_string();
        let one_line = error.replace('\r', "").replace('\n', "\\n");
        // Writing to a String cannot fail.
        let _ = write!(message, "\n  {}: {one_line}", call.model);
    }
    message
}

/// What [`PromptError::Suspended`] says: `run \`ID\` is suspended: calls t1c0, t1c1 wait
/// for a decision (…what to do…)`.
fn suspended_message(run: &SuspendedRun) -> String {
    let ids: Vec<&str> = run
        .pending()
        .map(|call| call.internal_call_id.as_str())
        .collect();
    let calls = match ids.as_slice() {
        [] => "it waits".to_owned(),
        [one] => format!("call {one} waits"),
        many => format!("calls {} wait", many.join(", ")),
    };
    format!(
        "run `{}` is suspended: {calls} for a decision (record it with RunStore::decide or \
         give it with PromptRequest::decide, then resume the run)",
        run.run_id()
    )
}

/// What [`PromptError::Store`] says: the store's error, after "the run store failed" unless
/// the store's own message already says that the store failed or panicked.
fn store_failure(source: &crate::store::StoreError) -> String {
    use crate::store::StoreError;
    match source {
        StoreError::Backend(_) | StoreError::Panicked(_) | StoreError::LeaseLapsed { .. } => {
            source.to_string()
        }
        other => format!("the run store failed: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::{FailedCall, PromptError};
    use crate::completion::CompletionError;
    use crate::store::StoreError;

    fn store_error(source: StoreError) -> String {
        PromptError::Store {
            source,
            history: Vec::new(),
            run_id: "r1".to_owned(),
        }
        .to_string()
    }

    fn completion_error(failed_calls: Vec<FailedCall>) -> String {
        let source = failed_calls
            .last()
            .map(|call| call.error.clone())
            .unwrap_or(CompletionError::Other("none".to_owned()));
        PromptError::Completion {
            source,
            failed_calls,
            call_limit_reached: false,
            history: Vec::new(),
            run_id: "r1".to_owned(),
        }
        .to_string()
    }

    #[test]
    fn one_failed_call_reads_as_before_and_several_one_line_each() {
        let other = |text: &str| CompletionError::Other(text.to_owned());
        assert_eq!(
            completion_error(vec![FailedCall::new("default", other("boom"))]),
            "the model call failed: boom"
        );
        // A model's error text with line breaks stays on its model's line.
        assert_eq!(
            completion_error(vec![
                FailedCall::new("default", other("first\nsecond\r\nthird")),
                FailedCall::new("backup", other("down")),
            ]),
            "the model call failed on every model tried (default, backup):\n  \
             default: first\\nsecond\\nthird\n  \
             backup: down"
        );
    }

    #[test]
    fn a_store_failure_is_named_once() {
        assert_eq!(
            store_error(StoreError::Backend("database is locked".to_owned())),
            "the run store failed: database is locked"
        );
        assert_eq!(
            store_error(StoreError::Panicked("store bug".to_owned())),
            "the run store panicked: store bug"
        );
        assert_eq!(
            store_error(StoreError::NotFound("r1".to_owned())),
            "the run store failed: no run `r1` is stored"
        );
    }
}
