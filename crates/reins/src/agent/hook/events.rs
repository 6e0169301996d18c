//! The events hook methods receive. Each borrows from the run, so building one costs nothing.
//! (A finished tool call, which outcome hooks may rewrite, is a [`ToolResult`], in
//! `tool_result.rs`.)

use super::args_text::ArgsText;
use super::tool_result::ToolResult;
use super::{InvalidToolCallReason, StepEventKind};
use crate::agent::PromptError;
use crate::completion::{
    CompletionError, CompletionRequest, CompletionResponse, FinishReason, RawResponse, Usage,
};
use crate::message::{AssistantContent, Message, OneOrMany};
use crate::tool::ToolTraits;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// What kind of effect a dispatch executes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DispatchKind {
    /// A model call.
    Completion,
    /// A tool call.
    Tool,
    /// An embedding request.
    Embedding,
    /// A reranking request.
    Rerank,
    /// A memory read or write.
    Memory,
    /// A retrieval query.
    Retrieval,
    /// An application-defined effect.
    Custom,
}

impl DispatchKind {
    /// The event kind of dispatching this effect.
    pub fn dispatch_event_kind(self) -> StepEventKind {
        match self {
            DispatchKind::Completion => StepEventKind::CompletionDispatch,
            DispatchKind::Tool => StepEventKind::ToolDispatch,
            DispatchKind::Embedding => StepEventKind::EmbeddingDispatch,
            DispatchKind::Rerank => StepEventKind::RerankDispatch,
            DispatchKind::Memory => StepEventKind::MemoryDispatch,
            DispatchKind::Retrieval => StepEventKind::RetrievalDispatch,
            DispatchKind::Custom => StepEventKind::CustomDispatch,
        }
    }

    /// The event kind of this effect's outcome.
    pub fn outcome_event_kind(self) -> StepEventKind {
        match self {
            DispatchKind::Completion => StepEventKind::CompletionOutcome,
            DispatchKind::Tool => StepEventKind::ToolOutcome,
            DispatchKind::Embedding => StepEventKind::EmbeddingOutcome,
            DispatchKind::Rerank => StepEventKind::RerankOutcome,
            DispatchKind::Memory => StepEventKind::MemoryOutcome,
            DispatchKind::Retrieval => StepEventKind::RetrievalOutcome,
            DispatchKind::Custom => StepEventKind::CustomOutcome,
        }
    }
}

/// `on_dispatch`: an effect (model call, tool call, …) is about to be executed.
///
/// Two words: the kind and a reference to what is dispatched, so an event reaches a hook in
/// registers. (Passed in memory, the event was copied into each hook's future right after
/// the run had written it, and that copy waited for the writes to reach the cache.)
#[derive(Debug, Clone, Copy)]
pub struct DispatchEvent<'a> {
    /// What kind of effect this is; pass it to
    /// [`DispatchAction::rewrite_tool_args`](super::DispatchAction::rewrite_tool_args).
    pub kind: DispatchKind,
    pub(crate) target: &'a DispatchTarget<'a>,
}

/// An application-defined effect about to be executed: its name and payload, for
/// [`DispatchEvent::effect`].
#[derive(Debug, Clone, Copy)]
pub struct EffectCall<'a>(DispatchTarget<'a>);

impl<'a> EffectCall<'a> {
    /// The effect `name`, called with `payload`.
    pub fn new(name: &'a str, payload: &'a Value) -> Self {
        EffectCall(DispatchTarget::Effect { name, payload })
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum DispatchTarget<'a> {
    Completion {
        turn: usize,
        model: &'a str,
        request: &'a CompletionRequest,
    },
    Tool(ToolCallView<'a>),
    Effect {
        name: &'a str,
        payload: &'a Value,
    },
}

/// A tool call as hooks see it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ToolCallView<'a> {
    pub name: &'a str,
    pub tool_call_id: &'a str,
    pub internal_call_id: &'a str,
    pub args: &'a ArgsText<'a>,
    /// What the tool declares about itself.
    pub traits: Option<ToolTraits>,
    /// Where the tool comes from (an MCP server's name).
    pub origin: Option<&'a str>,
}

impl<'a> DispatchEvent<'a> {
    /// A dispatch of an application-defined effect (`kind` other than completion or tool),
    /// for effects an application routes through a [`HookStack`](super::HookStack).
    ///
    /// ```
    /// use reins::agent::{DispatchEvent, DispatchKind, EffectCall};
    /// use serde_json::json;
    ///
    /// let payload = json!({"query": "refund policy"});
    /// let call = EffectCall::new("search_docs", &payload);
    /// let event = DispatchEvent::effect(DispatchKind::Retrieval, &call);
    /// assert_eq!(event.effect_payload(), Some(("search_docs", &payload)));
    /// assert_eq!(event.tool_name(), None);
    /// ```
    pub fn effect(kind: DispatchKind, call: &'a EffectCall<'a>) -> Self {
        DispatchEvent {
            kind,
            target: &call.0,
        }
    }

    /// What the called tool declares about itself ([`Tool::traits`](crate::tool::Tool::traits):
    /// an MCP tool's annotations, or what a [`tool_fn`](crate::tool::tool_fn) was given), for a
    /// tool call; `None` when it declares nothing, or for another effect.
    pub fn tool_traits(&self) -> Option<ToolTraits> {
        match self.target {
            DispatchTarget::Tool(call) => call.traits,
            _ => None,
        }
    }

    /// Where the called tool comes from ([`Tool::origin`](crate::tool::Tool::origin): an MCP
    /// tool's server name), for a tool call; `None` for a tool of the application's own, or
    /// for another effect.
    pub fn tool_origin(&self) -> Option<&'a str> {
        match *self.target {
            DispatchTarget::Tool(call) => call.origin,
            _ => None,
        }
    }

    /// The tool's name, for a tool call.
    pub fn tool_name(&self) -> Option<&'a str> {
        match *self.target {
            DispatchTarget::Tool(call) => Some(call.name),
            _ => None,
        }
    }

    /// The call's arguments as JSON text (with earlier hooks' rewrites), for a tool call.
    pub fn tool_args(&self) -> Option<&'a str> {
        match *self.target {
            DispatchTarget::Tool(call) => Some(call.args.text()),
            _ => None,
        }
    }

    /// The call's arguments (with earlier hooks' rewrites) read as `T`, for a tool call:
    /// `None` for other dispatches, `Some(Err(..))` for arguments that are not a `T` (which a
    /// policy should treat as a refusal, never as approval).
    ///
    /// ```
    /// use reins::agent::{AgentHook, DispatchAction, DispatchEvent, HookContext};
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Transfer {
    ///     amount: u64,
    /// }
    ///
    /// struct SmallTransfersOnly;
    ///
    /// impl AgentHook for SmallTransfersOnly {
    ///     async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
    ///         match event.tool_args_as::<Transfer>() {
    ///             Some(Ok(transfer)) if transfer.amount > 100 => DispatchAction::deny("too large"),
    ///             Some(Err(_)) => DispatchAction::deny("unreadable transfer"),
    ///             _ => DispatchAction::proceed(),
    ///         }
    ///     }
    /// }
    /// ```
    pub fn tool_args_as<T: serde::de::DeserializeOwned>(
        &self,
    ) -> Option<Result<T, serde_json::Error>> {
        match *self.target {
            DispatchTarget::Tool(call) => Some(call.args.read_as()),
            _ => None,
        }
    }

    /// The provider's id of the call, for a tool call.
    pub fn tool_call_id(&self) -> Option<&'a str> {
        match *self.target {
            DispatchTarget::Tool(call) => Some(call.tool_call_id),
            _ => None,
        }
    }

    /// reins' id of the call, unique in the run, for a tool call.
    pub fn internal_call_id(&self) -> Option<&'a str> {
        match *self.target {
            DispatchTarget::Tool(call) => Some(call.internal_call_id),
            _ => None,
        }
    }

    /// The request about to be sent, for a model call.
    pub fn request(&self) -> Option<&'a CompletionRequest> {
        match *self.target {
            DispatchTarget::Completion { request, .. } => Some(request),
            _ => None,
        }
    }

    /// The label of the model about to be called, for a model call.
    pub fn model(&self) -> Option<&'a str> {
        match *self.target {
            DispatchTarget::Completion { model, .. } => Some(model),
            _ => None,
        }
    }

    /// The effect's name and payload, for effects other than model and tool calls.
    pub fn effect_payload(&self) -> Option<(&'a str, &'a Value)> {
        match *self.target {
            DispatchTarget::Effect { name, payload } => Some((name, payload)),
            _ => None,
        }
    }
}

/// `on_outcome`: an effect returned.
///
/// Two words, as [`DispatchEvent`] is: the kind and a reference to the outcome.
#[derive(Debug, Clone, Copy)]
pub struct OutcomeEvent<'a> {
    /// What kind of effect this was.
    pub kind: DispatchKind,
    pub(crate) target: &'a OutcomeTarget<'a>,
}

/// What an application-defined effect returned: its name and output, for
/// [`OutcomeEvent::effect`].
#[derive(Debug, Clone, Copy)]
pub struct EffectOutput<'a>(OutcomeTarget<'a>);

impl<'a> EffectOutput<'a> {
    /// The effect `name` returned `output`.
    pub fn new(name: &'a str, output: &'a Value) -> Self {
        EffectOutput(OutcomeTarget::Effect { name, output })
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum OutcomeTarget<'a> {
    Completion {
        model: &'a str,
        response: &'a CompletionResponse,
    },
    CompletionFailed {
        model: &'a str,
        error: &'a CompletionError,
    },
    Tool(&'a ToolResult<'a>),
    Effect {
        name: &'a str,
        output: &'a Value,
    },
}

impl<'a> OutcomeEvent<'a> {
    /// The outcome of an application-defined effect.
    ///
    /// ```
    /// use reins::agent::{DispatchKind, EffectOutput, OutcomeEvent};
    /// use serde_json::json;
    ///
    /// let hits = json!(["refunds.md"]);
    /// let output = EffectOutput::new("search_docs", &hits);
    /// let event = OutcomeEvent::effect(DispatchKind::Retrieval, &output);
    /// assert_eq!(event.effect_output(), Some(("search_docs", &hits)));
    /// assert!(event.tool_outcome().is_none());
    /// ```
    pub fn effect(kind: DispatchKind, output: &'a EffectOutput<'a>) -> Self {
        OutcomeEvent {
            kind,
            target: &output.0,
        }
    }

    /// The result of a tool call that succeeded; `None` for a model response, or a tool call
    /// that failed, was skipped or was denied (see [`tool_outcome`](Self::tool_outcome)).
    pub fn tool_result(&self) -> Option<&'a ToolResult<'a>> {
        match *self.target {
            OutcomeTarget::Tool(result) if result.outcome().is_success() => Some(result),
            _ => None,
        }
    }

    /// The result of any tool call, whatever its outcome.
    pub fn tool_outcome(&self) -> Option<&'a ToolResult<'a>> {
        match *self.target {
            OutcomeTarget::Tool(result) => Some(result),
            _ => None,
        }
    }

    /// What the called tool declares about itself, for a tool call's outcome (whether it
    /// succeeded, failed, or was skipped or denied), as [`DispatchEvent::tool_traits`] gave it
    /// at dispatch; `None` when it declares nothing, or for another outcome.
    pub fn tool_traits(&self) -> Option<ToolTraits> {
        self.tool_outcome().and_then(ToolResult::tool_traits)
    }

    /// Where the called tool comes from, for a tool call's outcome, as
    /// [`DispatchEvent::tool_origin`] gave it at dispatch; `None` for a tool of the
    /// application's own, or for another outcome.
    pub fn tool_origin(&self) -> Option<&'a str> {
        self.tool_outcome().and_then(ToolResult::tool_origin)
    }

    /// The provider's response, for a model call that returned one.
    pub fn completion(&self) -> Option<&'a CompletionResponse> {
        match *self.target {
            OutcomeTarget::Completion { response, .. } => Some(response),
            _ => None,
        }
    }

    /// Why a model call failed, after the provider's own retries: the run fails with it
    /// unless a hook answers [`OutcomeAction::replace`](super::OutcomeAction::replace) (serve
    /// the turn with a response) or [`OutcomeAction::retry_on`](super::OutcomeAction::retry_on)
    /// (call a model again). `None` for a response or a tool call.
    pub fn completion_error(&self) -> Option<&'a CompletionError> {
        match *self.target {
            OutcomeTarget::CompletionFailed { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The label of the model that served (or failed) a model call; `None` for other effects.
    pub fn model(&self) -> Option<&'a str> {
        match *self.target {
            OutcomeTarget::Completion { model, .. }
            | OutcomeTarget::CompletionFailed { model, .. } => Some(model),
            _ => None,
        }
    }

    /// The effect's name and output, for effects other than model and tool calls.
    pub fn effect_output(&self) -> Option<(&'a str, &'a Value)> {
        match *self.target {
            OutcomeTarget::Effect { name, output } => Some((name, output)),
            _ => None,
        }
    }
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
