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
///
/// One hook can watch and steer every step through this view: here, a trace of the run's
/// steps that also ends the run when a tool is about to be called a third time.
///
/// ```
/// use reins::agent::{AgentBuilder, AgentHook, Flow, HookContext, PromptError, StepEvent};
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
/// use std::sync::{Arc, Mutex};
///
/// #[derive(Clone, Default)]
/// struct Trace(Arc<Mutex<Vec<String>>>);
///
/// impl AgentHook for Trace {
///     async fn on_event(&self, ctx: &HookContext, event: StepEvent<'_>) -> Flow {
///         let line = match event {
///             StepEvent::CompletionCall { turn, .. } => format!("model call {turn}"),
///             StepEvent::ToolCall { tool_name, args, .. } => format!("{tool_name}({args})"),
///             StepEvent::ToolResult { result, .. } => format!("-> {result}"),
///             _ => return Flow::Continue,
///         };
///         self.0.lock().unwrap().push(line);
///         let calls = ctx.scratchpad().update(|calls: &mut u32| {
///             *calls += u32::from(matches!(event, StepEvent::ToolCall { .. }));
///             *calls
///         });
///         if calls > 2 { Flow::terminate("too many tool calls") } else { Flow::Continue }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([
///     Turn::tool_call("ping", json!({"n": 1})),
///     Turn::tool_call("ping", json!({"n": 2})),
///     Turn::tool_call("ping", json!({"n": 3})),
///     Turn::text("Done."),
/// ]);
/// let ping = reins::tool::tool_fn("ping", "Pings.", |_: serde_json::Value| async move {
///     Ok::<_, std::convert::Infallible>("pong")
/// });
/// let trace = Trace::default();
/// let agent = AgentBuilder::new(model).tool(ping).add_hook(trace.clone()).build();
/// let error = agent.prompt("Ping three times.").await.unwrap_err();
/// assert!(matches!(error, PromptError::Cancelled { .. }), "{error:?}");
/// assert_eq!(
///     *trace.0.lock().unwrap(),
///     [
///         "model call 1", r#"ping({"n":1})"#, "-> pong",
///         "model call 2", r#"ping({"n":2})"#, "-> pong",
///         "model call 3", r#"ping({"n":3})"#,
///     ]
/// );
/// # }
/// ```
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
/// deferral to the next hook). See [`StepEvent`] for a hook that answers with it.
///
/// ```
/// use reins::agent::{Flow, StepEvent};
///
/// /// Never lets the model call `shell`; hides `token=` values from the model.
/// fn answer(event: StepEvent<'_>) -> Flow {
///     match event {
///         StepEvent::ToolCall { tool_name: "shell", .. } => Flow::Skip("no shell here".into()),
///         StepEvent::ToolResult { result, .. } if result.contains("token=") => {
///             Flow::RewriteResult("[a token was hidden]".into())
///         }
///         _ => Flow::Continue,
///     }
/// }
///
/// let outcome = reins::tool::ToolOutcome::Success;
/// let extensions = Default::default();
/// let result = StepEvent::ToolResult {
///     tool_name: "env",
///     tool_call_id: None,
///     internal_call_id: "t1c0",
///     args: "{}",
///     result: "token=abc",
///     outcome: &outcome,
///     extensions: &extensions,
/// };
/// assert_eq!(answer(result), Flow::RewriteResult("[a token was hidden]".into()));
/// ```
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
