//! [`GuardrailTripped`]: why a guardrail stopped a run, and the reason format that carries it
//! through [`PromptError::Cancelled`].

use super::check::Stage;
use crate::agent::PromptError;
use serde::{Deserialize, Serialize};

/// A guardrail stopped the run.
///
/// A hook can only stop a run with a text reason, so [`Guardrails`](super::Guardrails) writes
/// this value into the reason of [`PromptError::Cancelled`] in a stable format, and
/// [`from_error`](Self::from_error) reads it back:
///
/// ```text
/// guardrail tripped: {"stage":"answer","check":"no_secrets","message":"…"}
/// ```
///
/// that is, [`REASON_PREFIX`](Self::REASON_PREFIX) followed by this value as one line of JSON
/// with the fields `stage` (`input`, `answer` or `tool_args`), `check` and `message`.
///
/// ```
/// use reins::hooks::guardrail::{GuardrailTripped, Stage};
///
/// let tripped = GuardrailTripped {
///     stage: Stage::ToolArgs,
///     check: "no_rm".into(),
///     message: "refusing `rm -rf /`".into(),
/// };
/// let reason = tripped.to_reason();
/// assert!(reason.starts_with(GuardrailTripped::REASON_PREFIX));
/// assert_eq!(GuardrailTripped::from_reason(&reason), Some(tripped));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("guardrail `{check}` tripped on the {stage}: {message}")]
pub struct GuardrailTripped {
    /// Where the check ran.
    pub stage: Stage,
    /// The name the check was registered under.
    pub check: String,
    /// What the check said (or why it counts as tripped: it panicked, failed or timed out).
    pub message: String,
}

impl GuardrailTripped {
    /// The start of every reason a guardrail writes.
    pub const REASON_PREFIX: &'static str = "guardrail tripped: ";

    /// A trip of the check `check` at `stage`.
    pub fn new(stage: Stage, check: impl Into<String>, message: impl Into<String>) -> Self {
        GuardrailTripped {
            stage,
            check: check.into(),
            message: message.into(),
        }
    }

    /// The reason the hook stops the run with: the prefix, then this value as JSON.
    pub fn to_reason(&self) -> String {
        // Serializing a struct of strings and a unit enum cannot fail; fall back to the
        // Display text rather than panic, which `from_reason` then simply does not read.
        match serde_json::to_string(self) {
            Ok(json) => format!("{}{json}", Self::REASON_PREFIX),
            Err(_) => format!("{}{self}", Self::REASON_PREFIX),
        }
    }

    /// Reads a reason written by [`to_reason`](Self::to_reason); `None` for any other text.
    pub fn from_reason(reason: &str) -> Option<Self> {
        let json = reason.strip_prefix(Self::REASON_PREFIX)?;
        serde_json::from_str(json).ok()
    }

    /// The trip that ended a run, if a guardrail ended it: `Some` for a
    /// [`PromptError::Cancelled`] whose reason a guardrail wrote, `None` for every other error.
    pub fn from_error(error: &PromptError) -> Option<Self> {
        Self::from_reason(crate::hooks::cancelled_reason(error)?)
    }
}
