//! `error.type` of a failed model call, tool call or run: a low-cardinality name of why (a
//! model call's is its error's own, [`CompletionError::error_type`]).
//!
//! [`CompletionError::error_type`]: crate::completion::CompletionError::error_type

use crate::agent::driver::Halt;
use crate::agent::error::PromptError;
use crate::tool::ToolFailure;
use std::borrow::Cow;

/// `error.type` of a failed model call or a run that stopped: a low-cardinality name.
pub(super) fn halt_error_type(halt: &Halt) -> Cow<'static, str> {
    Cow::Borrowed(match halt {
        Halt::Stop(_) => "stopped_by_hook",
        Halt::Panic(_) => "hook_panicked",
        Halt::MaxTurns => "max_turns",
        Halt::RefusedAnswer(_) => "structured_output",
        Halt::InvalidCall { .. } => "invalid_tool_call",
        Halt::Completion(error) => return error.error_type(),
        Halt::FailedCalls(failed) => return failed.last.error.error_type(),
        Halt::Tool { failure, .. } => tool_failure_type(failure),
        Halt::Rejected(_) => "rejected_action",
        Halt::Suspended => "suspended",
        Halt::Store(_) => "store",
    })
}

/// A failed tool call's `error.type`. Every variant is named, with no catch-all: a new kind
/// of failure must get a name of its own here (the enum is this crate's, so a missing arm
/// fails to compile) rather than pass as another.
pub(super) fn tool_failure_type(failure: &ToolFailure) -> &'static str {
    match failure {
        ToolFailure::Timeout { .. } => "tool_timeout",
        ToolFailure::NotFound { .. } => "tool_not_found",
        ToolFailure::InvalidArguments { .. } => "tool_invalid_arguments",
        ToolFailure::Execution { .. } => "tool_execution",
        ToolFailure::Panicked { .. } => "tool_panicked",
    }
}

/// A failed run's `error.type`. As for a tool's failure, every variant is named, with no
/// catch-all: a new kind of error must get a name of its own.
pub(super) fn prompt_error_type(error: &PromptError) -> Cow<'static, str> {
    Cow::Borrowed(match error {
        PromptError::Cancelled { .. } => "stopped_by_hook",
        PromptError::MaxTurns { .. } => "max_turns",
        PromptError::UnknownToolCall { .. } => "invalid_tool_call",
        PromptError::Completion { source, .. } => return source.error_type(),
        PromptError::Tool { failure, .. } => tool_failure_type(failure),
        PromptError::HookPanicked { .. } => "hook_panicked",
        PromptError::RejectedAction { .. } => "rejected_action",
        PromptError::StructuredOutput { .. } => "structured_output",
        PromptError::Suspended { .. } => "suspended",
        PromptError::Store { .. } => "store",
        PromptError::AlreadyFinished { .. } => "already_finished",
        PromptError::InvalidConfiguration(_) => "invalid_configuration",
        PromptError::StreamEnded => "stream_ended",
    })
}
