//! What a typed answer looks like: the output mode, and the schema and parsing of a typed
//! run's answer. Beneath the driver (which asks for and reads it) and the typed request.

use crate::tool::{ToolDefinition, schema_of};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The name of the tool a model calls to give its typed answer in [`OutputMode::Tool`].
pub const OUTPUT_TOOL_NAME: &str = "final_output";

/// The key a non-object output type is wrapped under in the output tool's arguments (tool
/// arguments must be JSON objects).
const WRAPPED_KEY: &str = "response";

/// How the model is asked for a typed answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OutputMode {
    /// Native when the default model supports it, the output tool otherwise.
    #[default]
    Auto,
    /// The model answers by calling the output tool [`OUTPUT_TOOL_NAME`], whose parameters are
    /// the type's schema. The run then persists the turn as assistant text (the JSON answer)
    /// with that tool call dropped. An answer ends the run: other tools the model called in the
    /// same turn are not run (as with an early end in other frameworks; hooks saw them in
    /// `on_model_turn_finished`). Of several output calls in one turn, the first whose
    /// arguments read as the type is the answer.
    Tool,
    /// The model is sent the schema ([`CompletionRequest::output_schema`](crate::completion::CompletionRequest::output_schema))
    /// and answers JSON text. Only for models whose `supports_native_output` is true.
    Native,
}

/// Checks that a JSON value reads as the output type.
type Validator = dyn Fn(&Value) -> Result<(), String> + Send + Sync;

/// What the run needs to know about the expected answer, without its Rust type.
#[derive(Clone)]
pub(crate) struct OutputSpec {
    pub mode: OutputMode,
    pub schema: Value,
    /// Whether a non-object schema was wrapped under [`WRAPPED_KEY`] for the output tool.
    pub wrapped: bool,
    pub validate: Arc<Validator>,
}

impl std::fmt::Debug for OutputSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputSpec")
            .field("mode", &self.mode)
            .field("wrapped", &self.wrapped)
            .finish_non_exhaustive()
    }
}

/// Why an answer could not be read when reading it as the output type panicked.
pub(crate) fn read_panicked(panic: &(dyn std::any::Any + Send)) -> String {
    format!(
        "reading it as the output type panicked: {}",
        crate::panics::panic_message(panic)
    )
}

impl OutputSpec {
    pub fn of<T: DeserializeOwned + JsonSchema>(mode: OutputMode) -> Self {
        let schema = schema_of::<T>();
        let wrapped = schema.get("type").and_then(Value::as_str) != Some("object");
        OutputSpec {
            mode,
            schema,
            wrapped,
            // The type's own code runs here, inside the run: a panic of it is an answer that
            // cannot be read, never an unwind into the caller's task.
            validate: Arc::new(|value| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    crate::json_error_path::read_with_path::<T>(value).map(|_| ())
                }))
                .map_err(|panic| read_panicked(&*panic))?
            }),
        }
    }

    /// The output tool advertised in tool mode.
    pub fn tool_definition(&self) -> ToolDefinition {
        let parameters = if self.wrapped {
            let mut properties = Map::new();
            properties.insert(WRAPPED_KEY.to_owned(), self.schema.clone());
            json!({"type": "object", "properties": properties, "required": [WRAPPED_KEY]})
        } else {
            self.schema.clone()
        };
        ToolDefinition {
            name: OUTPUT_TOOL_NAME.to_owned(),
            description: "Give your final answer by calling this tool with it as the arguments."
                .to_owned(),
            parameters,
        }
    }

    /// Reads the answer out of the output tool's arguments, checked against the type.
    pub fn read_tool_args(&self, args: &Value) -> Result<Value, String> {
        let value = if self.wrapped {
            args.get(WRAPPED_KEY)
                .cloned()
                .ok_or_else(|| format!("missing the `{WRAPPED_KEY}` field"))?
        } else {
            args.clone()
        };
        (self.validate)(&value)?;
        Ok(value)
    }

    /// Reads the answer out of native JSON text, checked against the type.
    pub fn read_text(&self, text: &str) -> Result<Value, String> {
        let trimmed = strip_code_fence(text.trim());
        let value: Value = serde_json::from_str(trimmed)
            .map_err(|error| format!("the answer is not JSON: {error}"))?;
        (self.validate)(&value)?;
        Ok(value)
    }
}

/// Models often wrap JSON in a Markdown code fence; accept that.
fn strip_code_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenced_json_is_accepted() {
        assert_eq!(strip_code_fence("```json\n{\"a\":1}\n```"), "{\"a\":1}");
        assert_eq!(strip_code_fence("{}"), "{}");
    }
}
