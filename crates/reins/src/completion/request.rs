use crate::message::{Document, Message, ToolChoice};
use crate::tool::ToolDefinition;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// Everything a model is sent for one turn.
///
/// ```
/// use reins::completion::{CompletionModel, CompletionRequest};
/// use reins::message::Message;
/// use reins::testing::{ScriptedModel, Turn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mut request = CompletionRequest::new(vec![Message::user("Say hi.")]);
/// request.preamble = Some("You are cheerful.".into());
/// request.temperature = Some(0.7);
/// assert_eq!(request.prompt(), Some(&Message::user("Say hi.")));
///
/// // Any model answers one directly, outside an agent.
/// let model = ScriptedModel::new([Turn::text("Hi!")]);
/// let response = model.completion(&request).await.unwrap();
/// assert_eq!(response.text(), "Hi!");
/// # }
/// ```
///
/// `history` ends with the turn's prompt. `tools` lists only the tools advertised on this turn
/// (after any [`RequestPatch`](crate::agent::RequestPatch) narrowed them).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CompletionRequest {
    /// System instructions for the model.
    pub preamble: Option<String>,
    /// The conversation so far, ending with the prompt of this turn.
    pub history: Vec<Message>,
    /// Context documents for this turn.
    #[serde(default)]
    pub documents: Vec<Document>,
    /// The tools the model may call on this turn. Shared between turns, so it is cheap to clone.
    #[serde(default)]
    pub tools: Arc<[ToolDefinition]>,
    /// Whether and which tool the model must call.
    pub tool_choice: Option<ToolChoice>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// The most output tokens the model may produce.
    pub max_tokens: Option<u64>,
    /// Provider-specific parameters, shallow-merged into the provider's request body.
    pub additional_params: Option<Value>,
    /// When set, the model is asked for a JSON answer matching this schema (native structured
    /// output). Only models whose `supports_native_output` is true receive it.
    #[serde(default)]
    pub output_schema: Option<Value>,
}

impl CompletionRequest {
    /// A request holding only a history.
    pub fn new(history: Vec<Message>) -> Self {
        CompletionRequest {
            history,
            ..Default::default()
        }
    }

    /// The last message of the history: the prompt of this turn.
    pub fn prompt(&self) -> Option<&Message> {
        self.history.last()
    }

    /// The names of the advertised tools, in order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|tool| tool.name.as_str())
    }
}

/// Merges the keys of `later` into `base`. Additional parameters are a JSON object of
/// top-level keys; anything else (e.g. `null`) adds nothing rather than replacing the base.
pub(crate) fn shallow_merge(base: Value, later: Value) -> Value {
    match (base, later) {
        (Value::Object(mut base), Value::Object(later)) => {
            base.extend(later);
            Value::Object(base)
        }
        (base @ Value::Object(_), other) => {
            tracing::warn!(ignored = %other, "additional params must be a JSON object; ignored");
            base
        }
        (_, later) => later,
    }
}
