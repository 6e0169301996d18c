//! [`GuardrailTripped`]: why a guardrail stopped a run, carried as the typed cause of
//! [`PromptError::Cancelled`]'s reason.

use super::check::Stage;
use crate::agent::PromptError;
use serde::{Deserialize, Serialize};

/// A guardrail stopped the run.
///
/// [`Guardrails`](super::Guardrails) stops the run with this value as the typed cause of its
/// [`StopReason`](crate::agent::StopReason) (the reason's text is its `Display`), and
/// [`from_error`](Self::from_error) reads it back from the run's error.
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
    /// A trip of the check `check` at `stage`.
    pub fn new(stage: Stage, check: impl Into<String>, message: impl Into<String>) -> Self {
        GuardrailTripped {
            stage,
            check: check.into(),
            message: message.into(),
        }
    }

    /// The stop reason the hook ends the run with: this value as its typed cause.
    pub(crate) fn into_reason(self) -> crate::agent::StopReason {
        crate::agent::StopReason::because(self)
    }

    /// The trip that ended a run, if a guardrail ended it: `Some` for a
    /// [`PromptError::Cancelled`] a guardrail stopped, `None` for every other error.
    pub fn from_error(error: &PromptError) -> Option<Self> {
        crate::hooks::stopped_by(error)
    }
}
