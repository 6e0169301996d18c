//! What a hook method answers. Each action type has constructors named as in the hooks guide.

mod effect;

pub use effect::{DispatchAction, OutcomeAction, ToolArgs};

use super::patch::RequestPatch;
use crate::agent::StopReason;

/// The answer to `on_run_start`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RunStartAction {
    /// Start the run as it is.
    Continue,
    /// Replace the prompt; later hooks see the new one.
    Rewrite(String),
    /// End the run with [`PromptError::Cancelled`](crate::agent::PromptError::Cancelled).
    Stop(StopReason),
}

impl RunStartAction {
    /// Start the run as it is.
    pub fn continue_run() -> Self {
        RunStartAction::Continue
    }
    /// Replace the prompt.
    pub fn rewrite(prompt: impl Into<String>) -> Self {
        RunStartAction::Rewrite(prompt.into())
    }
    /// End the run.
    /// `reason` is text, or [`StopReason::because`] a typed value the caller reads back
    /// with [`PromptError::stopped_by`](crate::agent::PromptError::stopped_by).
    pub fn stop(reason: impl Into<StopReason>) -> Self {
        RunStartAction::Stop(reason.into())
    }
}

/// The answer to `on_completion_call`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CompletionCallAction {
    /// Send the request as it is.
    Continue,
    /// Change this turn's request only. (Boxed: a patch is large, and every hook's answer is
    /// moved through the stack.)
    Patch(Box<RequestPatch>),
    /// End the run.
    Stop(StopReason),
}

impl CompletionCallAction {
    /// Send the request as it is.
    pub fn continue_run() -> Self {
        CompletionCallAction::Continue
    }
    /// Change this turn's request only; the patch is not sticky.
    pub fn patch(patch: RequestPatch) -> Self {
        CompletionCallAction::Patch(Box::new(patch))
    }
    /// End the run.
    /// `reason` is text, or [`StopReason::because`] a typed value the caller reads back
    /// with [`PromptError::stopped_by`](crate::agent::PromptError::stopped_by).
    pub fn stop(reason: impl Into<StopReason>) -> Self {
        CompletionCallAction::Stop(reason.into())
    }
}

/// The answer to `on_model_select`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ModelSelectionAction {
    /// Keep the model selected so far.
    Continue,
    /// Serve the next call with the model registered under this label.
    Select(String),
    /// End the run.
    Stop(StopReason),
}

impl ModelSelectionAction {
    /// Keep the model selected so far.
    pub fn continue_run() -> Self {
        ModelSelectionAction::Continue
    }
    /// Serve the next call with the model registered under `label`.
    pub fn select(label: impl Into<String>) -> Self {
        ModelSelectionAction::Select(label.into())
    }
    /// End the run.
    /// `reason` is text, or [`StopReason::because`] a typed value the caller reads back
    /// with [`PromptError::stopped_by`](crate::agent::PromptError::stopped_by).
    pub fn stop(reason: impl Into<StopReason>) -> Self {
        ModelSelectionAction::Stop(reason.into())
    }
}

/// The answer to `on_model_turn_finished`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ModelTurnAction {
    /// Accept the turn.
    Continue,
    /// Discard the response and ask again with the same prompt and history.
    Repeat,
    /// Keep the response, add this feedback as a user message, and ask again.
    RetryWithFeedback(String),
    /// End the run.
    Stop(StopReason),
}

impl ModelTurnAction {
    /// Accept the turn.
    pub fn continue_run() -> Self {
        ModelTurnAction::Continue
    }
    /// Discard the response and ask again. Counts against `max_turns`.
    pub fn repeat() -> Self {
        ModelTurnAction::Repeat
    }
    /// Keep the response and ask again with `feedback` as a user message. Counts against
    /// `max_turns`.
    pub fn retry_with_feedback(feedback: impl Into<String>) -> Self {
        ModelTurnAction::RetryWithFeedback(feedback.into())
    }
    /// End the run.
    /// `reason` is text, or [`StopReason::because`] a typed value the caller reads back
    /// with [`PromptError::stopped_by`](crate::agent::PromptError::stopped_by).
    pub fn stop(reason: impl Into<StopReason>) -> Self {
        ModelTurnAction::Stop(reason.into())
    }
}

/// A decision about an invalid tool call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InvalidToolCallAction {
    /// Fail the run with [`PromptError::UnknownToolCall`](crate::agent::PromptError::UnknownToolCall).
    Fail,
    /// Drop the turn, add `feedback` as a user message and ask the model again.
    Retry(String),
    /// Use this tool name instead, checked again against the allowed tools.
    Repair(String),
    /// Answer the call with `reason` and answer the turn's other calls as not executed.
    Skip(String),
    /// End the run.
    Stop(StopReason),
}

impl InvalidToolCallAction {
    /// Fail the run.
    pub fn fail() -> Self {
        InvalidToolCallAction::Fail
    }
    /// Ask the model again with corrective feedback (needs `max_invalid_tool_call_retries`).
    pub fn retry(feedback: impl Into<String>) -> Self {
        InvalidToolCallAction::Retry(feedback.into())
    }
    /// Rename the called tool.
    pub fn repair(tool_name: impl Into<String>) -> Self {
        InvalidToolCallAction::Repair(tool_name.into())
    }
    /// Answer the call with `reason` without running anything.
    pub fn skip(reason: impl Into<String>) -> Self {
        InvalidToolCallAction::Skip(reason.into())
    }
    /// End the run.
    /// `reason` is text, or [`StopReason::because`] a typed value the caller reads back
    /// with [`PromptError::stopped_by`](crate::agent::PromptError::stopped_by).
    pub fn stop(reason: impl Into<StopReason>) -> Self {
        InvalidToolCallAction::Stop(reason.into())
    }
}

/// The answer to the streaming delta events.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ObservationAction {
    /// Go on.
    Continue,
    /// End the run.
    Stop(StopReason),
}

impl ObservationAction {
    /// Go on.
    pub fn continue_run() -> Self {
        ObservationAction::Continue
    }
    /// End the run.
    /// `reason` is text, or [`StopReason::because`] a typed value the caller reads back
    /// with [`PromptError::stopped_by`](crate::agent::PromptError::stopped_by).
    pub fn stop(reason: impl Into<StopReason>) -> Self {
        ObservationAction::Stop(reason.into())
    }
}
