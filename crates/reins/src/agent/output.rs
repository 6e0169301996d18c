//! Structured output: a run whose answer is a typed value.

use super::error::PromptError;
use super::output_spec::{OutputMode, OutputSpec};
use super::prompt::PromptRequest;
use super::response::PromptResponse;
use super::run_future::{RunFuture, keep_history};
use super::stream::PromptStream;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use std::future::IntoFuture;
use std::marker::PhantomData;

/// A run whose answer is a `T`. Await it for the value, or call
/// [`extended_details`](Self::extended_details) for the run's state too.
///
/// The schema comes from `T`; the model gives the answer through the output tool, or as
/// JSON text when its provider supports structured output natively. An answer that does not
/// fit `T` gets the model another turn with the error, within the run's turns.
///
/// ```
/// use reins::agent::{AgentBuilder, OUTPUT_TOOL_NAME};
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
/// struct Forecast {
///     city: String,
///     celsius: i32,
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// // The scripted model has no native structured output: it answers through the output tool.
/// let model = ScriptedModel::new([
///     Turn::tool_call(OUTPUT_TOOL_NAME, json!({"city": "Oslo", "celsius": 4})),
/// ]);
/// let agent = AgentBuilder::new(model.clone()).build();
/// let forecast = agent.prompt("Forecast for Oslo?").output::<Forecast>().await.unwrap();
/// assert_eq!(forecast, Forecast { city: "Oslo".into(), celsius: 4 });
/// // The model was offered the output tool, with `Forecast`'s schema.
/// assert!(model.requests()[0].tool_names().any(|name| name == OUTPUT_TOOL_NAME));
/// # }
/// ```
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
        let response = self.with_output_spec().extended_details().await?;
        let value = parse(&response)?;
        Ok(TypedPromptResponse { value, response })
    }

    /// Streams the run as [`PromptRequest::stream`] does, asking the model for a `T`. The
    /// stream ends with [`StreamItem::Final`](super::StreamItem::Final), whose response's
    /// `output` is the answer's JSON text; [`PromptResponse::output_as`] reads it as a `T`.
    /// Through the output tool, the answer streams as that tool's argument fragments
    /// ([`StreamItem::ToolCallDelta`](super::StreamItem::ToolCallDelta) named
    /// [`OUTPUT_TOOL_NAME`](super::OUTPUT_TOOL_NAME)); natively, as text.
    ///
    /// ```
    /// use futures::StreamExt;
    /// use reins::prelude::*;
    /// use reins::testing::{ScriptedModel, Turn};
    ///
    /// #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    /// struct Verdict { approve: bool }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let model = ScriptedModel::new([Turn::text(r#"{"approve": true}"#)]).with_native_output();
    /// let agent = AgentBuilder::new(model).build();
    /// let mut stream = agent.prompt("Approve the refund?").output::<Verdict>().stream();
    /// let (mut shown, mut verdict) = (String::new(), None);
    /// while let Some(item) = stream.next().await {
    ///     match item.expect("the run succeeds") {
    ///         StreamItem::Text(delta) => shown.push_str(&delta),
    ///         StreamItem::Final(response) => verdict = Some(response.output_as::<Verdict>()),
    ///         _ => {}
    ///     }
    /// }
    /// assert_eq!(shown, r#"{"approve": true}"#);
    /// assert_eq!(verdict.unwrap().unwrap(), Verdict { approve: true });
    /// # }
    /// ```
    pub fn stream(self) -> PromptStream {
        self.with_output_spec().stream()
    }

    /// The request, asking the model for a `T`.
    fn with_output_spec(self) -> PromptRequest {
        let mut request = self.request;
        request.options.output = Some(Box::new(OutputSpec::of::<T>(self.mode)));
        request
    }
}

impl PromptResponse {
    /// The run's answer read as a `T`: for a typed run streamed
    /// ([`TypedPromptRequest::stream`]), or awaited with
    /// [`extended_details`](PromptRequest::extended_details) after `.output::<T>()`. Fails
    /// with [`PromptError::StructuredOutput`] when the answer is not a `T`'s JSON (an untyped
    /// run's text, read as the wrong type).
    pub fn output_as<T: DeserializeOwned>(&self) -> Result<T, PromptError> {
        parse(self)
    }
}

/// The run's answer, read as a `T`.
fn parse<T: DeserializeOwned>(response: &PromptResponse) -> Result<T, PromptError> {
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        serde_json::from_str(&response.output).map_err(|error| error.to_string())
    }))
    .unwrap_or_else(|panic| Err(super::output_spec::read_panicked(&*panic)));
    read.map_err(|message| PromptError::StructuredOutput {
        message,
        history: response.state.history.clone(),
        run_id: response.state.run_id.clone(),
    })
}

impl<T: DeserializeOwned + JsonSchema + Send + 'static> IntoFuture for TypedPromptRequest<T> {
    type Output = Result<T, PromptError>;
    type IntoFuture = RunFuture<T>;

    fn into_future(self) -> Self::IntoFuture {
        RunFuture::new(self.with_output_spec().into_parts(), |mut response| {
            let value = parse(&response);
            keep_history(std::mem::take(&mut response.state.history));
            value
        })
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

impl PromptRequest {
    /// Asks for a typed answer: the schema comes from `T`, and the answer is parsed into it.
    /// The mode defaults to [`OutputMode::Auto`]. Call it last: the run's settings
    /// ([`max_turns`](Self::max_turns), [`with_history`](Self::with_history),
    /// [`durable`](Self::durable), …) are set before it, and the typed request only chooses
    /// the [`mode`](TypedPromptRequest::mode).
    ///
    /// An answer that does not fit `T` is refused and the model is asked again, told why,
    /// within the run's `max_turns`; when they run out, the run ends with
    /// [`PromptError::StructuredOutput`] naming what was wrong with the last answer.
    ///
    /// ```
    /// use reins::agent::{AgentBuilder, OUTPUT_TOOL_NAME, PromptError};
    /// use reins::testing::{ScriptedModel, Turn};
    /// use serde_json::json;
    ///
    /// #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    /// struct Forecast {
    ///     city: String,
    ///     celsius: i32,
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let model = ScriptedModel::new([
    ///     Turn::tool_call(OUTPUT_TOOL_NAME, json!({"city": "Oslo"})),
    ///     Turn::tool_call(OUTPUT_TOOL_NAME, json!({"city": "Oslo", "celsius": "cold"})),
    /// ]);
    /// let agent = AgentBuilder::new(model).build();
    /// let error = agent.prompt("Forecast for Oslo?").max_turns(2).output::<Forecast>().await;
    /// let Err(PromptError::StructuredOutput { message, .. }) = error else {
    ///     panic!("expected the answer refused, got {error:?}");
    /// };
    /// assert!(message.contains("expected i32"), "{message}");
    /// # }
    /// ```
    pub fn output<T: DeserializeOwned + JsonSchema + Send + 'static>(
        self,
    ) -> TypedPromptRequest<T> {
        TypedPromptRequest::new(self, OutputMode::Auto)
    }
}
