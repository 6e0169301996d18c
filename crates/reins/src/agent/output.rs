//! Structured output: a run whose answer is a typed value.

use super::error::PromptError;
use super::prompt::{PromptRequest, PromptResponse};
use crate::tool::{ToolDefinition, schema_of};
use futures::FutureExt;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::future::IntoFuture;
use std::marker::PhantomData;
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
    /// with that tool call dropped.
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

impl OutputSpec {
    pub fn of<T: DeserializeOwned + JsonSchema>(mode: OutputMode) -> Self {
        let schema = schema_of::<T>();
        let wrapped = schema.get("type").and_then(Value::as_str) != Some("object");
        OutputSpec {
            mode,
            schema,
            wrapped,
            validate: Arc::new(|value| {
                T::deserialize(value)
                    .map(|_| ())
                    .map_err(|error| error.to_string())
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

/// A run whose answer is a `T`. Await it for the value, or call
/// [`extended_details`](Self::extended_details) for the run's state too.
#[must_use = "a prompt request does nothing until awaited"]
pub struct TypedPromptRequest<T> {
    request: PromptRequest,
    mode: OutputMode,
    output: PhantomData<fn() -> T>,
}

impl<T: DeserializeOwned + JsonSchema + Send + 'static> TypedPromptRequest<T> {
    pub(crate) fn new(request: PromptRequest, mode: OutputMode) -> Self {
        TypedPromptRequest {
            request,
            mode,
            output: PhantomData,
        }
    }

    /// Chooses how the model is asked for the answer.
    pub fn mode(mut self, mode: OutputMode) -> Self {
        self.mode = mode;
        self
    }

    /// Returns the run's state along with the value.
    pub async fn extended_details(self) -> Result<TypedPromptResponse<T>, PromptError> {
        let mut request = self.request;
        request.options.output = Some(OutputSpec::of::<T>(self.mode));
        let response = request.send().await?;
        let value = serde_json::from_str(&response.output).map_err(|error| {
            PromptError::StructuredOutput {
                message: error.to_string(),
                history: response.state.history.clone(),
                run_id: response.state.run_id.clone(),
            }
        })?;
        Ok(TypedPromptResponse { value, response })
    }
}

impl<T: DeserializeOwned + JsonSchema + Send + 'static> IntoFuture for TypedPromptRequest<T> {
    type Output = Result<T, PromptError>;
    type IntoFuture = BoxFuture<'static, Result<T, PromptError>>;

    fn into_future(self) -> Self::IntoFuture {
        async move { self.extended_details().await.map(|typed| typed.value) }.boxed()
    }
}

/// A typed answer and the run that produced it.
#[derive(Debug, Clone)]
pub struct TypedPromptResponse<T> {
    /// The answer.
    pub value: T,
    /// The run; its `output` is the answer's JSON text.
    pub response: PromptResponse,
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
