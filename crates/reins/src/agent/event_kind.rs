//! The names hooks and errors share: which event ([`StepEventKind`]) and why a tool call was
//! invalid ([`InvalidToolCallReason`]). They sit beneath both `hook` and `error`, so a
//! [`PromptError`](crate::agent::PromptError) can name an event without the error module
//! importing the hook machinery that reports errors.

#[cfg(doc)]
use crate::agent::StepEvent;
use serde::{Deserialize, Serialize};

/// Every kind of event a hook can observe. [`AgentHook::observes`](crate::agent::AgentHook::observes)
/// answers per kind; the answers are read once, when the hook is registered.
///
/// A hook that says which kinds it watches is not called, and its events are not even
/// built, for the others:
///
/// ```
/// use reins::agent::{AgentBuilder, AgentHook, Flow, HookContext, StepEvent, StepEventKind};
/// use reins::testing::{ScriptedModel, Turn};
/// use std::sync::{Arc, Mutex};
///
/// /// Sees model turns, and nothing else.
/// #[derive(Clone, Default)]
/// struct Turns(Arc<Mutex<Vec<StepEventKind>>>);
///
/// impl AgentHook for Turns {
///     fn observes(&self, kind: StepEventKind) -> bool {
///         kind == StepEventKind::ModelTurnFinished
///     }
///     async fn on_event(&self, _ctx: &HookContext, event: StepEvent<'_>) -> Flow {
///         self.0.lock().unwrap().push(event.kind());
///         Flow::Continue
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let turns = Turns::default();
/// let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("Hi.")]))
///     .add_hook(turns.clone())
///     .build();
/// agent.prompt("Hello").await.unwrap();
/// assert_eq!(*turns.0.lock().unwrap(), [StepEventKind::ModelTurnFinished]);
/// # }
/// ```
// Four bytes, not one: a hook call's rule keeps its kind across the hook's await and reads it
// back with a 4-byte load, which a 1-byte store cannot be forwarded to (the load then waits
// for the store to reach the cache, about 15 cycles of every hook call).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
#[repr(u32)]
pub enum StepEventKind {
    /// `on_run_start`.
    RunStart,
    /// `on_completion_call`.
    CompletionCall,
    /// `on_model_select`.
    ModelSelect,
    /// `on_dispatch` for a model call.
    CompletionDispatch,
    /// `on_dispatch` for a tool call (the step view's `ToolCall`).
    ToolDispatch,
    /// `on_dispatch` for an embedding request (not observed by default).
    EmbeddingDispatch,
    /// `on_dispatch` for a reranking request (not observed by default).
    RerankDispatch,
    /// `on_dispatch` for a memory operation (not observed by default).
    MemoryDispatch,
    /// `on_dispatch` for a retrieval query (not observed by default).
    RetrievalDispatch,
    /// `on_dispatch` for an application-defined effect (not observed by default).
    CustomDispatch,
    /// `on_outcome` for a model call.
    CompletionOutcome,
    /// `on_outcome` for a tool call (the step view's `ToolResult`).
    ToolOutcome,
    /// `on_outcome` for an embedding request (not observed by default).
    EmbeddingOutcome,
    /// `on_outcome` for a reranking request (not observed by default).
    RerankOutcome,
    /// `on_outcome` for a memory operation (not observed by default).
    MemoryOutcome,
    /// `on_outcome` for a retrieval query (not observed by default).
    RetrievalOutcome,
    /// `on_outcome` for an application-defined effect (not observed by default).
    CustomOutcome,
    /// [`StepEvent::CompletionResponse`]: a blocking model response was received.
    CompletionResponse,
    /// [`StepEvent::StreamResponseFinish`]: a streamed response with text finished.
    StreamResponseFinish,
    /// `on_model_turn_finished`.
    ModelTurnFinished,
    /// `on_invalid_tool_call`.
    InvalidToolCall,
    /// `on_text_delta`.
    TextDelta,
    /// `on_reasoning_delta`.
    ReasoningDelta,
    /// `on_tool_call_delta`.
    ToolCallDelta,
    /// `on_run_settled`.
    RunSettled,
}

impl StepEventKind {
    /// The step view's name for [`StepEventKind::ToolDispatch`].
    #[allow(non_upper_case_globals)]
    pub const ToolCall: StepEventKind = StepEventKind::ToolDispatch;
    /// The step view's name for [`StepEventKind::ToolOutcome`].
    #[allow(non_upper_case_globals)]
    pub const ToolResult: StepEventKind = StepEventKind::ToolOutcome;

    /// Every kind, in declaration order.
    pub const ALL: [StepEventKind; 25] = [
        StepEventKind::RunStart,
        StepEventKind::CompletionCall,
        StepEventKind::ModelSelect,
        StepEventKind::CompletionDispatch,
        StepEventKind::ToolDispatch,
        StepEventKind::EmbeddingDispatch,
        StepEventKind::RerankDispatch,
        StepEventKind::MemoryDispatch,
        StepEventKind::RetrievalDispatch,
        StepEventKind::CustomDispatch,
        StepEventKind::CompletionOutcome,
        StepEventKind::ToolOutcome,
        StepEventKind::EmbeddingOutcome,
        StepEventKind::RerankOutcome,
        StepEventKind::MemoryOutcome,
        StepEventKind::RetrievalOutcome,
        StepEventKind::CustomOutcome,
        StepEventKind::CompletionResponse,
        StepEventKind::StreamResponseFinish,
        StepEventKind::ModelTurnFinished,
        StepEventKind::InvalidToolCall,
        StepEventKind::TextDelta,
        StepEventKind::ReasoningDelta,
        StepEventKind::ToolCallDelta,
        StepEventKind::RunSettled,
    ];

    /// Whether a hook observes this kind unless it overrides `observes`: everything but the
    /// dispatches and outcomes of embeddings, reranking, memory, retrieval and custom effects.
    pub fn observed_by_default(self) -> bool {
        !matches!(
            self,
            StepEventKind::EmbeddingDispatch
                | StepEventKind::RerankDispatch
                | StepEventKind::MemoryDispatch
                | StepEventKind::RetrievalDispatch
                | StepEventKind::CustomDispatch
                | StepEventKind::EmbeddingOutcome
                | StepEventKind::RerankOutcome
                | StepEventKind::MemoryOutcome
                | StepEventKind::RetrievalOutcome
                | StepEventKind::CustomOutcome
        )
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Why a tool call is invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InvalidToolCallReason {
    /// No tool of that name is registered.
    UnknownTool,
    /// The tool exists but is not allowed this turn (outside `active_tools`, or excluded by
    /// the turn's `tool_choice`).
    NotAllowed,
    /// The arguments are not a JSON object, or nest more than 100 levels of objects and
    /// arrays (kept then as their JSON text: a stored run could not be read back with them),
    /// or hold an integer beyond 64 bits, below `i64::MIN` or above `u64::MAX` (kept as the
    /// model's text: read as a number, it would be rounded to another). The context's `args`
    /// is that text; the model is told to send such a number as a string.
    MalformedArguments,
}

/// The reason in words, as an error shows it: "no tool of that name", "not allowed this
/// turn", "arguments that are not a JSON object".
impl std::fmt::Display for InvalidToolCallReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            InvalidToolCallReason::UnknownTool => "no tool of that name",
            InvalidToolCallReason::NotAllowed => "not allowed this turn",
            InvalidToolCallReason::MalformedArguments => "arguments that are not a JSON object",
        })
    }
}
