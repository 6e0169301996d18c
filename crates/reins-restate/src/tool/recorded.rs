//! A tool call's journal entry: how the call ended, and what the tool attached to it (its
//! usage, extensions, an answer in place of its own), masked by the registered redactions;
//! and the call's result read back from it.

use crate::steps::{MAX_STEP_BYTES, Steps, json_size};
use reins::tool::{ToolAttachments, ToolCallContext, ToolFailure, ToolOutcome};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;

/// How one tool call ended, as journaled.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub(super) enum RecordedCall {
    Output {
        value: Value,
    },
    Error {
        message: String,
    },
    Panicked {
        message: String,
    },
    /// The call's start marker came from the journal and its result did not: an earlier
    /// attempt started the tool and died before its result was journaled.
    InDoubt,
}

/// One tool call as journaled: `{"outcome": …, …, "attached": {…}}`.
///
/// Why the attachments are journaled: a replay returns the journaled entry without running
/// the tool, so what the tool attached through its call context reaches the run only from
/// here — usage counted once (not lost when Restate replays), extensions and an answer the
/// same for the hooks on every replay.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct JournaledCall {
    #[serde(flatten)]
    pub(super) call: RecordedCall,
    /// Absent from entries journaled before reins journaled attachments: nothing attached.
    #[serde(default, skip_serializing_if = "ToolAttachments::is_empty")]
    pub(super) attached: ToolAttachments,
}

impl JournaledCall {
    /// `call`, with nothing attached.
    pub(super) fn bare(call: RecordedCall) -> Self {
        JournaledCall {
            call,
            attached: ToolAttachments::default(),
        }
    }

    /// Whether the call is in doubt.
    pub(super) fn is_in_doubt(recorded: &Value) -> bool {
        matches!(
            serde_json::from_value::<JournaledCall>(recorded.clone()),
            Ok(JournaledCall {
                call: RecordedCall::InDoubt,
                ..
            })
        )
    }

    /// The entry as it may be journaled: whole when its JSON fits in [`MAX_STEP_BYTES`];
    /// else the call fails with an error saying how large it was and what the limit is, and
    /// what the tool attached is kept: its usage always, its extensions and answer when they
    /// fit beside the error.
    ///
    /// Why not let the step fail: a step's failure is all its entry holds, so the tokens the
    /// tool spent would never be counted and its extensions never reach the hooks; and the
    /// model would read of a step, not of the tool's result.
    pub(super) fn within_journal_limit(self) -> JournaledCall {
        let size = json_size(&self);
        if size <= MAX_STEP_BYTES {
            return self;
        }
        let JournaledCall { call, attached } = self;
        let result = match &call {
            RecordedCall::Output { value } => json_size(value),
            RecordedCall::Error { message } | RecordedCall::Panicked { message } => {
                json_size(message)
            }
            RecordedCall::InDoubt => 0,
        };
        let usage_only = |attached: &ToolAttachments| {
            let mut usage = ToolAttachments::default();
            usage.usage = attached.usage;
            usage
        };
        if result <= MAX_STEP_BYTES {
            // The result fits: what the tool attached for hooks is what does not.
            let message = format!(
                "the tool's result and what it attached for hooks are {size} bytes as JSON, \
                 more than a journaled step may hold ({MAX_STEP_BYTES} bytes); neither was kept"
            );
            return JournaledCall {
                call: RecordedCall::Error { message },
                attached: usage_only(&attached),
            };
        }
        let message = format!(
            "the tool's result is {result} bytes as JSON, more than a journaled step may hold \
             ({MAX_STEP_BYTES} bytes); it was not kept: return large data by reference"
        );
        let kept = JournaledCall {
            call: RecordedCall::Error {
                message: message.clone(),
            },
            attached,
        };
        if json_size(&kept) <= MAX_STEP_BYTES {
            return kept;
        }
        let attached_size = json_size(&kept.attached);
        JournaledCall {
            call: RecordedCall::Error {
                message: format!(
                    "{message}; what it attached for hooks ({attached_size} bytes as JSON) was \
                     not kept either"
                ),
            },
            attached: usage_only(&kept.attached),
        }
    }

    /// As journaled.
    pub(super) fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(
            |error| serde_json::json!({"outcome": "error", "message": error.to_string()}),
        )
    }
}

impl Steps {
    /// `text` masked by every registered redaction; `None` when nothing in it is.
    fn masked(&self, text: &str) -> Option<String> {
        let redactions = self.redactions();
        let mut masked: Option<String> = None;
        for redaction in redactions.iter() {
            let current = masked.as_deref().unwrap_or(text);
            if let Cow::Owned(more) = redaction.redact_tool_result(current) {
                masked = Some(more);
            }
        }
        masked
    }

    /// `entry` with what the registered redactions mask masked, as it may be journaled: the
    /// text the model reads (the result, an answer's text). Extensions, which the model never
    /// reads, are journaled as a store keeps them.
    pub(super) fn masked_entry(&self, entry: JournaledCall) -> JournaledCall {
        let JournaledCall { call, mut attached } = entry;
        attached.answer = attached.answer.map(|answer| match answer {
            ToolOutcome::Skipped { reason } => ToolOutcome::Skipped {
                reason: self.masked(&reason).unwrap_or(reason),
            },
            ToolOutcome::Denied { report } => ToolOutcome::Denied {
                report: self.masked(&report).unwrap_or(report),
            },
            ToolOutcome::Failed(ToolFailure::InvalidArguments { message }) => {
                ToolOutcome::Failed(ToolFailure::InvalidArguments {
                    message: self.masked(&message).unwrap_or(message),
                })
            }
            other => other,
        });
        JournaledCall {
            call: self.masked_call(call),
            attached,
        }
    }

    /// `call` with what the registered redactions mask masked.
    fn masked_call(&self, call: RecordedCall) -> RecordedCall {
        match call {
            RecordedCall::Output { value } => {
                // The text the model reads (a JSON string unquoted, as the run loop renders it).
                let shown = match &value {
                    Value::String(text) => self.masked(text),
                    other => self.masked(&other.to_string()),
                };
                RecordedCall::Output {
                    value: shown.map_or(value, Value::String),
                }
            }
            RecordedCall::Error { message } => RecordedCall::Error {
                message: self.masked(&message).unwrap_or(message),
            },
            RecordedCall::Panicked { message } => RecordedCall::Panicked {
                message: self.masked(&message).unwrap_or(message),
            },
            RecordedCall::InDoubt => RecordedCall::InDoubt,
        }
    }
}

/// The call's result as its step recorded it; what the tool attached is attached to `call`
/// (the run's call, when there is one), on the first execution and on replay alike.
pub(super) fn replayed(recorded: Value, call: Option<&ToolCallContext>) -> Result<Value, String> {
    let entry = match serde_json::from_value::<JournaledCall>(recorded) {
        Ok(entry) => entry,
        Err(error) => return Err(format!("the journaled tool call cannot be read: {error}")),
    };
    if let Some(call) = call {
        call.attach(entry.attached);
    }
    match entry.call {
        RecordedCall::Output { value } => Ok(value),
        RecordedCall::Error { message } => Err(message),
        // A panic is replayed as a panic, so the run loop reports it the same way.
        RecordedCall::Panicked { message } => std::panic::panic_any(message),
        RecordedCall::InDoubt => Err("the call is in doubt".to_owned()),
    }
}
