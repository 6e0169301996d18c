//! The agent: a model, tools and hooks, and the run loop that drives them.
//!
//! Build an [`Agent`] with [`AgentBuilder`], then run it with [`Agent::prompt`]. Awaiting the
//! returned [`PromptRequest`] gives the final answer; [`PromptRequest::stream`] gives the same
//! run as a stream; [`PromptRequest::extended_details`] also returns usage, history and the
//! run's id.

mod builder;
mod driver;
mod error;
mod event_kind;
pub(crate) mod hook;
mod options;
mod output;
mod output_spec;
mod prompt;
mod response;
mod routing;
mod run_future;
mod stop;
mod stream;
mod stream_finish;
mod stream_item;
mod tools;

pub use crate::run::{
    CallRecord, PendingCall, RUN_STATE_VERSION, RunState, RunStatus, SuspendedRun, ToolDecision,
};
pub use builder::{Agent, AgentBuilder};
pub(crate) use driver::internal_call_id;
pub use driver::{EMPTY_ANSWER, MAX_MODEL_CALLS_PER_TURN};
pub use error::{FailedCall, PromptError};
pub use hook::{
    AgentHook, CompletionCallAction, CompletionCallEvent, DispatchAction, DispatchEvent,
    DispatchKind, EffectCall, EffectOutput, Entry, EntryError, Flow, HookContext, HookStack,
    InvalidToolCallAction, InvalidToolCallContext, InvalidToolCallReason, ModelSelectEvent,
    ModelSelectionAction, ModelTurnAction, ModelTurnFinished, ObservationAction, OutcomeAction,
    OutcomeEvent, ReasoningDeltaEvent, RequestPatch, RunSettledEvent, RunStartAction,
    RunStartEvent, Scratchpad, StepEvent, StepEventKind, TextDeltaEvent, ToolArgs,
    ToolCallDeltaEvent, ToolResult,
};
pub use options::{ToolErrorPolicy, UnhandledInvalidToolCall};
pub use output::{TypedPromptRequest, TypedPromptResponse};
pub use output_spec::{OUTPUT_TOOL_NAME, OutputMode};
pub use prompt::{DetailedPromptRequest, PromptRequest};
pub use response::PromptResponse;
pub use run_future::RunFuture;
pub use stop::StopReason;
pub use stream::PromptStream;
pub use stream_item::StreamItem;
