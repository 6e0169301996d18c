//! The events hook methods receive. Each borrows from the run, so building one costs nothing.
//! An effect's dispatch and outcome are in `effect.rs`; what a model call's dispatch says of
//! the model called, in `model_identity.rs` and (its accessors) `model_call.rs`. (A finished
//! tool call, which outcome hooks may rewrite, is a [`ToolResult`](super::ToolResult), in
//! `tool_result.rs`.)

use super::InvalidToolCallReason;
use crate::agent::PromptError;
use crate::completion::{CompletionRequest, FinishReason, RawResponse, Usage};
use crate::message::{AssistantContent, Message, OneOrMany};

mod effect;
mod model_call;
mod model_identity;

pub use effect::{DispatchEvent, DispatchKind, EffectCall, EffectOutput, OutcomeEvent};
pub(crate) use effect::{DispatchTarget, OutcomeTarget, ToolCallView};
pub(crate) use model_identity::ModelIdentity;

/// `on_run_start`: the run is about to make its first model call.
#[derive(Debug, Clone, Copy)]
pub struct RunStartEvent<'a> {
    /// The user's prompt (as rewritten by earlier hooks).
    pub prompt: &'a Message,
    /// The chat history the run starts from, before the prompt.
    pub history: &'a [Message],
}

/// `on_completion_call`: a model request is about to be built for this turn.
#[derive(Debug, Clone, Copy)]
pub struct CompletionCallEvent<'a> {
    /// The prompt of this turn: the last message of the history sent.
    pub prompt: &'a Message,
    /// The history preceding `prompt`.
    pub history: &'a [Message],
    /// The one-based index of this model call.
    pub turn: usize,
    /// The request as the agent would send it, before any patch.
    pub request: &'a CompletionRequest,
}

/// `on_model_select`: which registered model serves the next call.
#[derive(Debug, Clone, Copy)]
pub struct ModelSelectEvent<'a> {
    /// The one-based index of the coming model call.
    pub turn: usize,
    /// The label of the agent's default model.
    pub default_model: &'a str,
    /// The label selected so far (the default, or an earlier hook's choice).
    pub selected_model: &'a str,
    /// The label of the model that served the previous call, if any.
    pub previous_model: Option<&'a str>,
    /// Every registered label.
    pub available_models: &'a [String],
    /// The run's history so far (ending with this turn's prompt or tool results), so a hook
    /// can escalate once tool results arrive.
    pub history: &'a [Message],
}

/// `on_model_turn_finished`: a model turn was received, before tools run or the run ends.
#[derive(Debug, Clone, Copy)]
pub struct ModelTurnFinished<'a> {
    /// The one-based index of this model call.
    pub turn: usize,
    /// What the model produced.
    pub content: &'a OneOrMany<AssistantContent>,
    /// Tokens used by this call (zero where the provider reported none).
    pub usage: Usage,
    /// Why the model stopped, when the provider said.
    pub finish_reason: Option<&'a FinishReason>,
    /// The provider's id for the response.
    pub response_id: Option<&'a str>,
    /// The provider's raw response.
    pub raw: &'a RawResponse,
}

impl ModelTurnFinished<'_> {
    /// Whether the turn calls any tool.
    pub fn has_tool_calls(&self) -> bool {
        self.content
            .iter()
            .any(|part| matches!(part, AssistantContent::ToolCall(_)))
    }
}

/// `on_invalid_tool_call`: the model called a tool it may not call, or sent arguments that are
/// not a JSON object.
#[derive(Debug, Clone)]
pub struct InvalidToolCallContext {
    /// The tool name the model emitted.
    pub tool_name: String,
    /// The provider's id of the call.
    pub tool_call_id: String,
    /// The arguments as the model sent them (JSON text, or the raw text when it is not JSON).
    pub args: String,
    /// The tools the model may call this turn.
    pub available_tools: Vec<String>,
    /// Why the call is invalid.
    pub reason: InvalidToolCallReason,
    /// The history before the model's turn.
    pub history: Vec<Message>,
}

/// `on_text_delta`: a fragment of streamed answer text.
#[derive(Debug, Clone, Copy)]
pub struct TextDeltaEvent<'a> {
    /// The new fragment.
    pub delta: &'a str,
    /// All text of this turn so far, the fragment included.
    pub aggregated: &'a str,
}

/// `on_reasoning_delta`: a fragment of streamed reasoning.
#[derive(Debug, Clone, Copy)]
pub struct ReasoningDeltaEvent<'a> {
    /// The new fragment.
    pub delta: &'a str,
    /// All reasoning of this turn so far, the fragment included.
    pub aggregated: &'a str,
}

/// `on_tool_call_delta`: a fragment of a streamed tool call's arguments.
#[derive(Debug, Clone, Copy)]
pub struct ToolCallDeltaEvent<'a> {
    /// The provider's id of the call.
    pub tool_call_id: &'a str,
    /// reins' id of the call; the same id appears on the call's dispatch and outcome.
    pub internal_call_id: &'a str,
    /// The tool's name, on the call's first fragment only.
    pub tool_name: Option<&'a str>,
    /// The new fragment of the arguments text.
    pub delta: &'a str,
    /// The call's arguments text so far, the fragment included.
    pub aggregated: &'a str,
}

/// `on_run_settled`: the run ended.
#[derive(Debug, Clone, Copy)]
pub struct RunSettledEvent<'a> {
    /// The final answer, or the error the run ended with.
    pub result: Result<&'a str, &'a PromptError>,
    /// The history at the end of the run.
    pub history: &'a [Message],
    /// Tokens used by the whole run.
    pub usage: Usage,
    /// How many model calls the run made.
    pub turns: usize,
}
