use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// What a tool returned, before it is rendered as text for the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum ToolOutput {
    /// Plain text, sent to the model as is.
    Text(String),
    /// A JSON value, sent to the model as compact JSON text (a JSON string is sent unquoted).
    Json(Value),
}

impl ToolOutput {
    /// The text the model sees.
    pub fn render(&self) -> String {
        match self {
            ToolOutput::Text(text) => text.clone(),
            ToolOutput::Json(Value::String(text)) => text.clone(),
            ToolOutput::Json(value) => crate::message::json_text(value),
        }
    }

    /// The text the model sees, taking the output's own text when it has one (no copy).
    pub(crate) fn into_text(self) -> String {
        match self {
            ToolOutput::Text(text) | ToolOutput::Json(Value::String(text)) => text,
            ToolOutput::Json(value) => crate::message::json_text(&value),
        }
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        ToolOutput::Text(text)
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        ToolOutput::Text(text.to_owned())
    }
}

impl From<Value> for ToolOutput {
    fn from(value: Value) -> Self {
        ToolOutput::Json(value)
    }
}

/// The structured result of one tool call: the machine-visible half that hooks inspect
/// without parsing the model-visible text.
///
/// A call never fails a run by itself: a missing tool, bad arguments, the tool's error, a
/// timeout or a panic each become a classified [`ToolFailure`], and its text is what the model
/// is shown.
///
/// ```
/// use reins::tool::{ToolCallContext, ToolFailure, ToolOutcome, ToolSet, tool_fn};
/// use serde::Deserialize;
/// use serde_json::json;
/// use std::time::Duration;
///
/// #[derive(Deserialize, schemars::JsonSchema)]
/// struct Divide {
///     a: i64,
///     b: i64,
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mut tools = ToolSet::new();
/// tools.add(tool_fn("divide", "Divides a by b.", |args: Divide| async move {
///     args.a.checked_div(args.b).ok_or("division by zero")
/// }));
/// tools.add(
///     tool_fn("wait", "Waits a minute.", |_: serde_json::Value| async {
///         tokio::time::sleep(Duration::from_secs(60)).await;
///         Ok::<_, std::convert::Infallible>("done")
///     })
///     .timeout(Duration::from_millis(10)),
/// );
/// let call = |name: &'static str, args| {
///     let tools = &tools;
///     async move {
///         let context = ToolCallContext::new("run-1", "call-1", "provider-1");
///         tools.call(name, &args, context).await
///     }
/// };
///
/// let ok = call("divide", json!({"a": 6, "b": 3})).await;
/// assert_eq!((ok.outcome, ok.output.render()), (ToolOutcome::Success, "2".to_string()));
///
/// let failed = call("divide", json!({"a": 6, "b": 0})).await;
/// assert!(matches!(failed.outcome, ToolOutcome::Failed(ToolFailure::Execution { .. })));
/// assert_eq!(failed.output.render(), "the tool failed: division by zero");
///
/// let unreadable = call("divide", json!({"a": "six"})).await;
/// assert!(matches!(
///     unreadable.outcome,
///     ToolOutcome::Failed(ToolFailure::InvalidArguments { .. })
/// ));
///
/// let slow = call("wait", json!({})).await;
/// assert_eq!(
///     slow.outcome,
///     ToolOutcome::Failed(ToolFailure::Timeout { after: Duration::from_millis(10) })
/// );
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ToolOutcome {
    /// The tool ran and returned its output.
    Success,
    /// The tool was called but failed; the failure is classified.
    Failed(ToolFailure),
    /// A hook skipped the call; the model was told `reason`.
    Skipped {
        /// What the model was told.
        reason: String,
    },
    /// A hook denied the call; the model was told `report`.
    Denied {
        /// What the model was told.
        report: String,
    },
}

impl ToolOutcome {
    /// Whether the tool ran and succeeded.
    pub fn is_success(&self) -> bool {
        matches!(self, ToolOutcome::Success)
    }

    /// The outcome's own free text, the part that can quote what a tool or a hook said (a
    /// secret among it): a failure's message ([`ToolFailure::Execution`],
    /// [`InvalidArguments`](ToolFailure::InvalidArguments),
    /// [`Panicked`](ToolFailure::Panicked)), a skip's reason or a denial's report; `None` for
    /// a success, a timeout and a missing tool, whose outcome says only what happened.
    pub fn text(&self) -> Option<&str> {
        match self {
            ToolOutcome::Failed(
                ToolFailure::Execution { message }
                | ToolFailure::InvalidArguments { message }
                | ToolFailure::Panicked { message },
            ) => Some(message),
            ToolOutcome::Skipped { reason } => Some(reason),
            ToolOutcome::Denied { report } => Some(report),
            ToolOutcome::Success
            | ToolOutcome::Failed(ToolFailure::Timeout { .. } | ToolFailure::NotFound { .. }) => {
                None
            }
        }
    }

    /// The same outcome (its status and kind) with `text` as its own [`text`](Self::text);
    /// an outcome without one is returned unchanged.
    pub(crate) fn with_text(mut self, text: String) -> Self {
        match &mut self {
            ToolOutcome::Failed(
                ToolFailure::Execution { message }
                | ToolFailure::InvalidArguments { message }
                | ToolFailure::Panicked { message },
            ) => *message = text,
            ToolOutcome::Skipped { reason } => *reason = text,
            ToolOutcome::Denied { report } => *report = text,
            ToolOutcome::Success
            | ToolOutcome::Failed(ToolFailure::Timeout { .. } | ToolFailure::NotFound { .. }) => {}
        }
        self
    }
}

/// Why a tool call failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolFailure {
    /// The tool did not finish within its timeout.
    #[error("the tool timed out after {} ms", after.as_millis())]
    Timeout {
        /// The limit that was exceeded.
        after: Duration,
    },
    /// No tool of that name is registered.
    #[error("no tool named `{name}` exists")]
    NotFound {
        /// The name that was called.
        name: String,
    },
    /// The arguments did not match the tool's parameters.
    #[error("invalid arguments: {message}")]
    InvalidArguments {
        /// What was wrong with them.
        message: String,
    },
    /// The tool ran and returned an error.
    #[error("the tool failed: {message}")]
    Execution {
        /// The tool's error, as text.
        message: String,
    },
    /// The tool panicked; the run went on.
    #[error("the tool panicked: {message}")]
    Panicked {
        /// The panic message.
        message: String,
    },
}

/// Metadata a tool attaches to its result that is never sent to the model: timings, cost,
/// provider ids, anything an application or a hook wants to read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolResultExtensions {
    entries: BTreeMap<String, Value>,
}

impl ToolResultExtensions {
    /// No metadata.
    pub fn new() -> Self {
        ToolResultExtensions::default()
    }

    /// Sets `key` to `value`, returning the previous value.
    pub fn insert(&mut self, key: impl Into<String>, value: Value) -> Option<Value> {
        self.entries.insert(key.into(), value)
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.get(key)
    }

    /// Whether there is no metadata.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// All entries, ordered by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.entries
            .iter()
            .map(|(key, value)| (key.as_str(), value))
    }
}

#[cfg(test)]
mod tests {
    use super::ToolOutput;
    use serde_json::json;

    #[test]
    fn an_output_taken_as_text_is_the_text_it_renders() {
        let outputs = [
            ToolOutput::Text("plain".to_owned()),
            ToolOutput::Json(json!("a JSON string, unquoted")),
            ToolOutput::Json(json!({"sum": 3, "parts": [1, 2]})),
            ToolOutput::Json(json!(null)),
        ];
        for output in outputs {
            let rendered = output.render();
            assert_eq!(output.into_text(), rendered);
        }
    }
}
