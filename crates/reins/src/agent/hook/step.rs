//! The uniform event view: one [`StepEvent`] type for every observable point of a run, and the
//! [`Flow`] answers a hook gives through [`AgentHook::on_event`](super::AgentHook::on_event).

use super::StepEventKind;
use super::events::{DispatchKind, InvalidToolCallContext, RunSettledEvent};
use super::patch::RequestPatch;
use crate::completion::{CompletionRequest, CompletionResponse, Usage};
use crate::message::{AssistantContent, Message, OneOrMany};
use crate::tool::{ToolOutcome, ToolResultExtensions};
use serde_json::Value;

/// An observable point in a run, passed to
/// [`AgentHook::on_event`](super::AgentHook::on_event).
///
/// A `StepEvent` borrows everything it carries and is `Copy`, so a hook can inspect it without
/// taking ownership and a [`HookStack`](super::HookStack) forwards the same event to each hook.
/// The streaming-only variants (`TextDelta`, `ReasoningDelta`, `ToolCallDelta`,
/// `StreamResponseFinish`) are emitted only by streamed runs.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum StepEvent<'a> {
    /// Before the first model call. Honors `Continue` and `Terminate`.
    RunStart {
        /// The user's prompt.
        prompt: &'a Message,
        /// The history before the prompt.
        history: &'a [Message],
    },
    /// Before a completion request is sent to the model. Honors `Continue`, `PatchRequest`
    /// (patch this turn's request) and `Terminate`; across a stack every hook's patch merges.
    CompletionCall {
        /// The prompt message for this turn.
        prompt: &'a Message,
        /// The chat history preceding `prompt`.
        history: &'a [Message],
        /// One-based index of this model call within the run.
        turn: usize,
    },
    /// Right before a model call is executed (after model selection). Honors `Continue`,
    /// `PatchRequest` and `Terminate`.
    CompletionDispatch {
        /// One-based index of this model call.
        turn: usize,
        /// The label of the model about to be called.
        model: &'a str,
        /// The request about to be sent.
        request: &'a CompletionRequest,
    },
    /// After a non-streaming completion response is received. Suppressed for turns recovered
    /// by invalid tool-call repair, skip or retry. Honors `Continue` and `Terminate`.
    CompletionResponse {
        /// The prompt message for this turn.
        prompt: &'a Message,
        /// The model's response, with the provider's raw response in `raw`.
        response: &'a CompletionResponse,
    },
    /// After a model turn is accepted, on both surfaces, whatever the turn produced.
    /// Suppressed for turns recovered by invalid tool-call repair, skip or retry, and fired
    /// after the medium-specific raw event when one fires. Honors `Continue` and `Terminate`.
    ModelTurnFinished {
        /// One-based index of this model call.
        turn: usize,
        /// The model's assistant content for this turn, as emitted. On a structured-output
        /// tool-mode turn this includes the output-tool call, while the run persists the turn
        /// as assistant text (the structured output) with that call dropped.
        content: &'a OneOrMany<AssistantContent>,
        /// Token usage for this turn (zeroed if the provider reported none).
        usage: Usage,
    },
    /// The model emitted a tool call that is unknown or disallowed for this turn, or whose
    /// arguments are not a JSON object. Honors `Fail`, `Retry`, `Repair`, `Skip` and
    /// `Terminate`; `Continue` defers to the next hook, and when every hook defers the default
    /// applies (an unknown or disallowed tool fails the run).
    InvalidToolCall(&'a InvalidToolCallContext),
    /// Before a tool is executed. Honors `Continue`, `RewriteArgs`, `Skip` and `Terminate`;
    /// across a stack `RewriteArgs` is chained, so `args` reflects earlier rewrites.
    ToolCall {
        /// Name of the tool about to be called.
        tool_name: &'a str,
        /// Provider-supplied tool call id, when available.
        tool_call_id: Option<&'a str>,
        /// reins' id correlating this call's events.
        internal_call_id: &'a str,
        /// JSON arguments for the call.
        args: &'a str,
    },
    /// After a tool produced a result (or a dispatch hook skipped or denied it). Honors
    /// `Continue`, `RewriteResult` and `Terminate`. `result` is the model-visible text,
    /// chained across a stack; `outcome` and `extensions` are the raw structured result
    /// throughout, so a redaction hook cannot mask the true outcome from a later hook.
    ToolResult {
        /// Name of the tool that was called.
        tool_name: &'a str,
        /// Provider-supplied tool call id, when available.
        tool_call_id: Option<&'a str>,
        /// reins' id correlating this call's events.
        internal_call_id: &'a str,
        /// JSON arguments for the call.
        args: &'a str,
        /// The model-visible tool result, reflecting earlier hooks' rewrites.
        result: &'a str,
        /// The raw structured outcome.
        outcome: &'a ToolOutcome,
        /// Metadata the tool attached, never sent to the model.
        extensions: &'a ToolResultExtensions,
    },
    /// Before an embedding, reranking, memory, retrieval or custom effect is executed.
    /// Honors `Continue`, `Skip` and `Terminate`.
    EffectDispatch {
        /// The effect's kind.
        kind: DispatchKind,
        /// The effect's name.
        name: &'a str,
        /// The effect's input.
        payload: &'a Value,
    },
    /// After an embedding, reranking, memory, retrieval or custom effect returned. Honors
    /// `Continue` and `Terminate`.
    EffectOutcome {
        /// The effect's kind.
        kind: DispatchKind,
        /// The effect's name.
        name: &'a str,
        /// The effect's output.
        output: &'a Value,
    },
    /// Streaming only: a text delta was received. Honors `Continue` and `Terminate`.
    TextDelta {
        /// The newly received text fragment.
        delta: &'a str,
        /// All text accumulated for the turn so far.
        aggregated: &'a str,
    },
    /// Streaming only: a reasoning delta was received. Honors `Continue` and `Terminate`.
    ReasoningDelta {
        /// The newly received reasoning fragment.
        delta: &'a str,
        /// All reasoning accumulated for the turn so far.
        aggregated: &'a str,
    },
    /// Streaming only: a tool-call delta was received. Honors `Continue` and `Terminate`.
    ToolCallDelta {
        /// Provider-supplied tool call id.
        tool_call_id: &'a str,
        /// reins' id correlating this call's events.
        internal_call_id: &'a str,
        /// Tool name, present on the first delta only.
        tool_name: Option<&'a str>,
        /// The newly received argument fragment.
        delta: &'a str,
    },
    /// Streaming only: the provider finished streaming a response that had text. Suppressed
    /// for turns recovered by invalid tool-call repair, skip or retry; a turn that streamed
    /// only tool calls or reasoning does not fire it. Honors `Continue` and `Terminate`.
    StreamResponseFinish {
        /// The prompt message for this turn.
        prompt: &'a Message,
        /// The assembled streamed response, with the provider's raw final response in `raw`.
        response: &'a CompletionResponse,
    },
    /// The run ended. Observe only: every `Flow` is ignored.
    RunSettled(RunSettledEvent<'a>),
}

impl StepEvent<'_> {
    /// The kind of this event.
    pub fn kind(&self) -> StepEventKind {
        match self {
            StepEvent::RunStart { .. } => StepEventKind::RunStart,
            StepEvent::CompletionCall { .. } => StepEventKind::CompletionCall,
            StepEvent::CompletionDispatch { .. } => StepEventKind::CompletionDispatch,
            StepEvent::CompletionResponse { .. } => StepEventKind::CompletionResponse,
            StepEvent::ModelTurnFinished { .. } => StepEventKind::ModelTurnFinished,
            StepEvent::InvalidToolCall(_) => StepEventKind::InvalidToolCall,
            StepEvent::ToolCall { .. } => StepEventKind::ToolDispatch,
            StepEvent::ToolResult { .. } => StepEventKind::ToolOutcome,
            StepEvent::EffectDispatch { kind, .. } => kind.dispatch_event_kind(),
            StepEvent::EffectOutcome { kind, .. } => kind.outcome_event_kind(),
            StepEvent::TextDelta { .. } => StepEventKind::TextDelta,
            StepEvent::ReasoningDelta { .. } => StepEventKind::ReasoningDelta,
            StepEvent::ToolCallDelta { .. } => StepEventKind::ToolCallDelta,
            StepEvent::StreamResponseFinish { .. } => StepEventKind::StreamResponseFinish,
            StepEvent::RunSettled(_) => StepEventKind::RunSettled,
        }
    }
}

/// A hook's answer to a [`StepEvent`]. Each event honors only the answers its docs list; an
/// answer an event does not honor is treated as `Continue` (for `InvalidToolCall`, as a
/// deferral to the next hook).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Flow {
    /// Go on.
    Continue,
    /// End the run with [`PromptError::Cancelled`](crate::agent::PromptError::Cancelled).
    Terminate(String),
    /// Patch this turn's request (`CompletionCall`, `CompletionDispatch`).
    PatchRequest(RequestPatch),
    /// Execute the tool with these arguments (`ToolCall`).
    RewriteArgs(Value),
    /// Don't execute; answer with this reason (`ToolCall`, `InvalidToolCall`, `EffectDispatch`).
    Skip(String),
    /// Substitute the result the model sees (`ToolResult`).
    RewriteResult(String),
    /// Fail the run (`InvalidToolCall`).
    Fail,
    /// Ask the model again with this feedback (`InvalidToolCall`).
    Retry(String),
    /// Use this tool name instead (`InvalidToolCall`).
    Repair(String),
}

impl Flow {
    /// `Flow::Terminate` with a reason.
    pub fn terminate(reason: impl Into<String>) -> Self {
        Flow::Terminate(reason.into())
    }
}
