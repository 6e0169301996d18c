//! Why a run stopped without an answer ([`Halt`]), the [`PromptError`] it ends with, and how
//! the run's last checkpoint records its end ([`Ended`]).

use crate::agent::error::{FailedCall, PromptError};
use crate::agent::hook::{HookFailure, InvalidToolCallReason};
use crate::agent::stop::StopReason;
use crate::completion::CompletionError;
use crate::run::{RunState, RunStatus, SuspendedRun};
use crate::store::StoreError;
use crate::tool::ToolFailure;

/// Why the loop stopped without an answer; turned into a [`PromptError`] with the history.
pub(super) enum Halt {
    Stop(StopReason),
    Panic(HookFailure),
    MaxTurns,
    /// The run's model calls ran out with its last typed answer refused, for this reason.
    RefusedAnswer(String),
    InvalidCall {
        tool_name: String,
        reason: InvalidToolCallReason,
    },
    Completion(CompletionError),
    /// A model call failed, after the turn's earlier calls that failed (if any): the turn's
    /// failed calls, oldest first, the last one's error being the run's. (Boxed: made once, at
    /// a run's end, it need not widen every `Halt`.)
    FailedCalls(Box<FailedCalls>),
    Tool {
        tool_name: String,
        failure: ToolFailure,
    },
    Rejected(String),
    Suspended,
    Store(StoreError),
}

/// A turn's failed model calls: the last, whose error ends the run, and the ones before it a
/// hook retried on another model.
pub(super) struct FailedCalls {
    pub earlier: Vec<FailedCall>,
    pub last: FailedCall,
    /// Whether a hook asked for another call after the last, not made: the turn had made
    /// all its calls.
    pub call_limit_reached: bool,
}

/// How a run's loop ended, as its last checkpoint records it.
pub(super) enum Ended {
    /// With an answer.
    Answered(String),
    /// Suspended, or its last checkpoint failed: the error is made with the run's state.
    Halted(Halt),
    /// Failed: the error, made before the last checkpoint (which keeps its message), without
    /// its history yet.
    Failed(PromptError),
}

impl From<HookFailure> for Halt {
    fn from(failure: HookFailure) -> Self {
        Halt::Panic(failure)
    }
}

impl Halt {
    pub(super) fn into_error(self, mut state: RunState, max_turns: usize) -> PromptError {
        let run_id = state.run_id.clone();
        state.status = RunStatus::Failed;
        match self {
            Halt::Suspended => {
                state.status = RunStatus::Suspended;
                PromptError::Suspended {
                    run: Box::new(SuspendedRun { state }),
                }
            }
            Halt::Stop(reason) => PromptError::Cancelled {
                reason,
                history: state.history,
                run_id,
            },
            Halt::Panic(failure) => PromptError::HookPanicked {
                event: failure.kind,
                message: failure.message,
                history: state.history,
                run_id,
            },
            Halt::MaxTurns => PromptError::MaxTurns {
                max_turns,
                history: state.history,
                run_id,
            },
            Halt::RefusedAnswer(problem) => PromptError::StructuredOutput {
                message: format!(
                    "no answer was given in the requested type within the run's {max_turns} \
                     model calls; the last one was refused: {problem}"
                ),
                history: state.history,
                run_id,
            },
            Halt::InvalidCall { tool_name, reason } => PromptError::UnknownToolCall {
                tool_name,
                reason,
                history: state.history,
                run_id,
            },
            Halt::Completion(source) => PromptError::Completion {
                source,
                failed_calls: Vec::new(),
                call_limit_reached: false,
                history: state.history,
                run_id,
            },
            Halt::FailedCalls(failed) => {
                let FailedCalls {
                    mut earlier,
                    last,
                    call_limit_reached,
                } = *failed;
                let source = last.error.clone();
                earlier.push(last);
                PromptError::Completion {
                    source,
                    failed_calls: earlier,
                    call_limit_reached,
                    history: state.history,
                    run_id,
                }
            }
            Halt::Tool { tool_name, failure } => PromptError::Tool {
                tool_name,
                failure,
                history: state.history,
                run_id,
            },
            Halt::Rejected(reason) => PromptError::RejectedAction {
                reason,
                history: state.history,
                run_id,
            },
            Halt::Store(source) => PromptError::Store {
                source,
                history: state.history,
                run_id,
            },
        }
    }
}
