//! What one run is asked to do beyond its agent's configuration: where it starts, its
//! limits and policies. Beneath both the request that collects them (`prompt.rs`) and the
//! driver that follows them, so neither imports the other's way round.

use super::output_spec::OutputSpec;
use crate::message::Message;
use crate::run::{RunState, ToolDecision};
use crate::store::SharedStore;

/// How many model calls a run may make unless `max_turns` says otherwise.
pub(crate) const DEFAULT_MAX_TURNS: usize = 10;

/// What happens to an unknown or disallowed tool call that no hook decided about.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum UnhandledInvalidToolCall {
    /// Fail the run with [`PromptError::UnknownToolCall`](crate::agent::PromptError::UnknownToolCall) (the default).
    #[default]
    Fail,
    /// Drop the call from the turn, as if the model had not made it.
    Ignore,
}

/// What a tool's failure (error, timeout, panic, bad arguments) does to the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ToolErrorPolicy {
    /// Tell the model what went wrong, as the tool's result, and go on (the default).
    #[default]
    ReportToModel,
    /// End the run with [`PromptError::Tool`](crate::agent::PromptError::Tool).
    Fail,
}

/// Where a run starts from.
#[derive(Debug)]
pub(crate) enum RunStart {
    /// A new run: a prompt after an optional earlier conversation.
    New {
        prompt: Message,
        history: Vec<Message>,
    },
    /// A saved run, continued.
    Resume(Box<RunState>),
    /// A run stored in the request's store, continued by id.
    Stored(String),
}

/// What a run was asked to do, beyond the agent's configuration.
#[derive(Debug, Clone)]
pub(crate) struct RunOptions {
    pub max_turns: usize,
    pub tool_concurrency: usize,
    pub max_invalid_tool_call_retries: usize,
    pub unhandled_invalid_tool_call: UnhandledInvalidToolCall,
    pub tool_errors: ToolErrorPolicy,
    pub run_id: Option<String>,
    pub output: Option<OutputSpec>,
    /// Decisions about suspended calls, by internal call id.
    pub decisions: Vec<(String, ToolDecision)>,
    /// Where a durable run checkpoints.
    pub store: Option<SharedStore>,
    /// The worker name holding a durable run's lease.
    pub worker: Option<String>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_turns: DEFAULT_MAX_TURNS,
            tool_concurrency: 1,
            max_invalid_tool_call_retries: 0,
            unhandled_invalid_tool_call: UnhandledInvalidToolCall::Fail,
            tool_errors: ToolErrorPolicy::ReportToModel,
            run_id: None,
            output: None,
            decisions: Vec::new(),
            store: None,
            worker: None,
        }
    }
}
