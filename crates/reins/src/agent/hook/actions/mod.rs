//! What a hook method answers. Each action type has constructors named as in the hooks guide.

mod effect;

pub use effect::{DispatchAction, OutcomeAction, ToolArgs};

use super::patch::RequestPatch;
use crate::agent::StopReason;

/// The answer to `on_run_start`.
///
/// An input check: a prompt with a card number never reaches the model, and the caller
/// reads why as a typed value; a prompt with stray whitespace is tidied first.
///
/// ```
/// use reins::agent::{PromptError, RunStartAction, RunStartEvent, StopReason};
/// use reins::prelude::*;
/// use reins::testing::{ScriptedModel, Turn};
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("the prompt holds a card number")]
/// struct CardNumber;
///
/// struct InputCheck;
///
/// impl AgentHook for InputCheck {
///     async fn on_run_start(&self, _ctx: &HookContext, event: RunStartEvent<'_>) -> RunStartAction {
///         let prompt = event.prompt.text();
///         let digits = prompt.chars().filter(char::is_ascii_digit).count();
///         if digits >= 13 {
///             RunStartAction::stop(StopReason::because(CardNumber))
///         } else if prompt.trim() != prompt {
///             RunStartAction::rewrite(prompt.trim())
///         } else {
///             RunStartAction::continue_run()
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([Turn::text("Hello!")]);
/// let agent = AgentBuilder::new(model.clone()).add_hook(InputCheck).build();
///
/// let error = agent.prompt("Pay with 4111 1111 1111 1111").await.unwrap_err();
/// assert!(error.stopped_by::<CardNumber>().is_some());
/// assert!(model.requests().is_empty(), "the model saw nothing");
///
/// agent.prompt("  Hi there  ").await.unwrap();
/// assert_eq!(model.requests()[0].history.last().unwrap().text(), "Hi there");
/// # }
/// ```
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
///
/// The large model plans the first turn; a small one, registered as `"small"`, reads the
/// tools' results after it:
///
/// ```
/// use reins::agent::{ModelSelectEvent, ModelSelectionAction};
/// use reins::prelude::*;
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// struct SmallAfterPlanning;
///
/// impl AgentHook for SmallAfterPlanning {
///     fn on_model_select(&self, _ctx: &HookContext, event: ModelSelectEvent<'_>) -> ModelSelectionAction {
///         match event.turn {
///             1 => ModelSelectionAction::continue_run(),
///             _ => ModelSelectionAction::select("small"),
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let large = ScriptedModel::new([Turn::tool_call("lookup", json!({"id": 7}))]);
/// let small = ScriptedModel::new([Turn::text("Order 7 shipped.")]);
/// let lookup = tool_fn("lookup", "Looks an order up.", |_: serde_json::Value| async {
///     Ok::<_, std::convert::Infallible>("shipped")
/// });
/// let agent = AgentBuilder::new(large.clone())
///     .named_model("small", small.clone())
///     .tool(lookup)
///     .add_hook(SmallAfterPlanning)
///     .build();
/// let run = agent.prompt("Where is order 7?").extended_details().await.unwrap();
///
/// assert_eq!(run.output, "Order 7 shipped.");
/// assert_eq!((large.requests().len(), small.requests().len()), (1, 1));
/// assert_eq!(run.state.last_model.as_deref(), Some("small"));
/// # }
/// ```
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
///
/// ```
/// use reins::message::AssistantContent;
/// use reins::prelude::*;
/// use reins::testing::{ScriptedModel, Turn};
///
/// /// Sends an answer back until it is a full sentence.
/// struct FullSentences;
///
/// impl AgentHook for FullSentences {
///     async fn on_model_turn_finished(
///         &self,
///         _ctx: &HookContext,
///         turn: ModelTurnFinished<'_>,
///     ) -> ModelTurnAction {
///         let text: String = turn
///             .content
///             .iter()
///             .filter_map(|part| match part {
///                 AssistantContent::Text(text) => Some(text.text.as_str()),
///                 _ => None,
///             })
///             .collect();
///         if text.is_empty() || text.ends_with('.') {
///             ModelTurnAction::continue_run()
///         } else {
///             ModelTurnAction::retry_with_feedback("Answer in a full sentence.")
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([
///     Turn::text("Paris"),
///     Turn::text("The capital of France is Paris."),
/// ]);
/// let agent = AgentBuilder::new(model.clone()).add_hook(FullSentences).build();
/// let answer = agent.prompt("What is the capital of France?").await.unwrap();
///
/// assert_eq!(answer, "The capital of France is Paris.");
/// // The model was asked again with its first answer and the feedback.
/// let retried = &model.requests()[1].history;
/// assert_eq!(retried.last().unwrap().text(), "Answer in a full sentence.");
/// # }
/// ```
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
///
/// ```
/// use reins::agent::{InvalidToolCallAction, InvalidToolCallContext};
/// use reins::prelude::*;
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// /// Repairs a tool name the model spelled in another case (`GetWeather` for
/// /// `get_weather`); fails the run for any other unknown name.
/// struct SpellingRepair;
///
/// impl AgentHook for SpellingRepair {
///     async fn on_invalid_tool_call(
///         &self,
///         _ctx: &HookContext,
///         call: &InvalidToolCallContext,
///     ) -> Option<InvalidToolCallAction> {
///         let plain = |name: &str| name.replace('_', "").to_lowercase();
///         let meant = call
///             .available_tools
///             .iter()
///             .find(|tool| plain(tool) == plain(&call.tool_name));
///         Some(match meant {
///             Some(tool) => InvalidToolCallAction::repair(tool.clone()),
///             None => InvalidToolCallAction::fail(),
///         })
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let weather = tool_fn("get_weather", "The weather in a city.", |_: serde_json::Value| async {
///     Ok::<_, std::convert::Infallible>("sunny")
/// });
/// let model = ScriptedModel::new([
///     Turn::tool_call("GetWeather", json!({"city": "Oslo"})),
///     Turn::text("It is sunny in Oslo."),
/// ]);
/// let agent = AgentBuilder::new(model.clone())
///     .tool(weather)
///     .add_hook(SpellingRepair)
///     .build();
/// assert_eq!(agent.prompt("Weather in Oslo?").await.unwrap(), "It is sunny in Oslo.");
/// assert_eq!(model.requests()[1].history.last().unwrap().text(), "sunny");
/// # }
/// ```
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
