use super::hook::Entry;
use crate::completion::Usage;
use crate::message::Message;
use serde::{Deserialize, Serialize};

/// The version of the [`RunState`] format written by this release.
pub const RUN_STATE_VERSION: u32 = 1;

/// Everything a run knows, as one serializable value: its id, history, turn counter, budgets
/// used, token usage and the entries hooks recorded. It never holds secrets (API keys live in
/// the providers, not in the run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// The format version ([`RUN_STATE_VERSION`]).
    pub version: u32,
    /// The run's id.
    pub run_id: String,
    /// The agent's name, if it has one.
    pub agent_name: Option<String>,
    /// The number of model calls made so far.
    pub turn: usize,
    /// The conversation so far.
    pub history: Vec<Message>,
    /// Tokens used so far.
    pub usage: Usage,
    /// Entries recorded by hooks, oldest first.
    pub entries: Vec<Entry>,
    /// The label of the model that served the last call.
    pub last_model: Option<String>,
    /// Invalid tool-call retries used so far.
    pub invalid_tool_call_retries: usize,
}

impl RunState {
    pub(crate) fn new(run_id: String, agent_name: Option<String>, history: Vec<Message>) -> Self {
        RunState {
            version: RUN_STATE_VERSION,
            run_id,
            agent_name,
            turn: 0,
            history,
            usage: Usage::default(),
            entries: Vec::new(),
            last_model: None,
            invalid_tool_call_retries: 0,
        }
    }
}
