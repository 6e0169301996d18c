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
///
/// A run's options stay in its future for the whole run, so what most runs leave unset is
/// boxed: the output spec, and how the run starts (its id, a store, decisions).
#[derive(Debug, Clone)]
pub(crate) struct RunOptions {
    pub max_turns: usize,
    pub tool_concurrency: usize,
    pub max_invalid_tool_call_retries: usize,
    pub unhandled_invalid_tool_call: UnhandledInvalidToolCall,
    pub tool_errors: ToolErrorPolicy,
    /// The typed answer asked for, if any.
    pub output: Option<Box<OutputSpec>>,
    /// Set when the caller named the run, made it durable or decided about its calls.
    pub start: Option<Box<StartOptions>>,
}

/// How a run starts, when the caller said more than its prompt.
#[derive(Debug, Clone, Default)]
pub(crate) struct StartOptions {
    /// The run's id, instead of a fresh one.
    pub run_id: Option<String>,
    /// The conversation a new run belongs to.
    pub conversation_id: Option<String>,
    /// Decisions about suspended calls, by internal call id.
    pub decisions: Vec<(String, ToolDecision)>,
    /// Where a durable run checkpoints.
    pub store: Option<SharedStore>,
    /// The worker name holding a durable run's lease.
    pub worker: Option<String>,
}

impl RunOptions {
    /// How the run starts, to be set.
    pub fn start_mut(&mut self) -> &mut StartOptions {
        self.start.get_or_insert_with(Box::default)
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_turns: DEFAULT_MAX_TURNS,
            tool_concurrency: 1,
            max_invalid_tool_call_retries: 0,
            unhandled_invalid_tool_call: UnhandledInvalidToolCall::Fail,
            tool_errors: ToolErrorPolicy::ReportToModel,
            output: None,
            start: None,
        }
    }
}
