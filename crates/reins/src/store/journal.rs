//! [`JournalEntry`]: one effect a run completed, as its journal keeps it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One completed effect, journaled with the checkpoint that follows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// The effect's stable id: `<run id>/t<turn>` for a model turn, `<run id>/<internal call
    /// id>` for a tool call.
    pub effect_id: String,
    /// `model_turn` or `tool_call`.
    pub kind: String,
    /// What the effect produced (the assistant content, or the call's result).
    pub payload: Value,
}
