//! The model side of a run: the [`CompletionModel`] trait, the request reins sends on each
//! turn, and the response it gets back.

mod boxed;
mod request;
mod response;
mod stream;

pub use boxed::BoxedModel;
pub use request::CompletionRequest;
pub(crate) use request::shallow_merge;
pub use response::{CompletionResponse, FinishReason, RawResponse, Usage};
pub(crate) use stream::keep_oversized_as_text;
pub use stream::{
    CompletionStream, StreamAssembler, StreamChunk, parse_arguments, replay_response,
};

use crate::panics::declared;
use futures::future::BoxFuture;
use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

/// A chat model reins can call: once per turn, either for a whole response or as a stream.
///
/// Implement [`completion`](CompletionModel::completion); [`stream`](CompletionModel::stream)
/// defaults to one chunk per content part of the blocking response, so a model without a
/// streaming API still works in streamed runs.
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::completion::{CompletionError, CompletionModel, CompletionRequest, CompletionResponse};
/// use reins::message::{AssistantContent, OneOrMany};
///
/// /// Answers every prompt by shouting it back: a stand-in for a model behind your own API.
/// struct Shout;
///
/// impl CompletionModel for Shout {
///     async fn completion(
///         &self,
///         request: &CompletionRequest,
///     ) -> Result<CompletionResponse, CompletionError> {
///         let prompt = request
///             .history
///             .last()
///             .ok_or_else(|| CompletionError::Other("empty history".into()))?;
///         let answer = AssistantContent::text(prompt.text().to_uppercase());
///         Ok(CompletionResponse::new(OneOrMany::one(answer)))
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let agent = AgentBuilder::new(Shout).build();
/// assert_eq!(agent.prompt("hello").await.unwrap(), "HELLO");
/// // Streaming works too: the default `stream` replays the whole response.
/// let mut stream = agent.prompt("again").stream();
/// # use futures::StreamExt;
/// let mut text = String::new();
/// while let Some(item) = stream.next().await {
///     if let reins::agent::StreamItem::Text(delta) = item.unwrap() {
///         text.push_str(&delta);
///     }
/// }
/// assert_eq!(text, "AGAIN");
/// # }
/// ```
pub trait CompletionModel: Send + Sync + 'static {
    /// Sends one request and waits for the whole response.
    fn completion(
        &self,
        request: &CompletionRequest,
    ) -> impl Future<Output = Result<CompletionResponse, CompletionError>> + Send;

    /// Sends one request and returns the response as a stream of chunks. The stream must end
    /// with [`StreamChunk::Done`] carrying the assembled response; a stream that ends without
    /// it is reported as an error, never as a shorter answer.
    fn stream(
        &self,
        request: &CompletionRequest,
    ) -> impl Future<Output = Result<CompletionStream, CompletionError>> + Send {
        async move {
            let response = self.completion(request).await?;
            Ok(stream::replay_response(response))
        }
    }

    /// Whether the model can be asked for JSON matching a schema
    /// ([`CompletionRequest::output_schema`]). Structured output uses an output tool otherwise.
    /// A panic here is logged and read as `false`.
    fn supports_native_output(&self) -> bool {
        false
    }

    /// The model's name as the provider knows it, for telemetry (`gen_ai.request.model`);
    /// `None` where the model has no such name. A panic here is logged and read as `None`.
    fn model_name(&self) -> Option<&str> {
        None
    }

    /// The provider's name for telemetry (`gen_ai.provider.name`, e.g. `openai`,
    /// `anthropic`, `gcp.gemini`); `None` where unknown. A panic here is logged and read as
    /// `None`.
    fn provider_name(&self) -> Option<&str> {
        None
    }

    /// Where the model is served, so two servers answering under one provider and model
    /// name (two OpenAI-compatible servers, say) are told apart: the response cache keys by
    /// it. For a model reached over HTTP, its base URL without what may carry a credential —
    /// scheme, host, port and path, never user info, query or fragment, and never the key
    /// (`https://api.openai.com/v1`). `None` where the model has no such place (a model in
    /// this process). A panic here is logged and read as `None`.
    fn endpoint(&self) -> Option<&str> {
        None
    }
}

/// Object-safe form of [`CompletionModel`], so models of different types can be registered on
/// one agent.
pub(crate) trait DynCompletionModel: Send + Sync {
    fn completion<'a>(
        &'a self,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<CompletionResponse, CompletionError>>;
    fn stream<'a>(
        &'a self,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<CompletionStream, CompletionError>>;
    fn supports_native_output(&self) -> bool;
    fn model_name(&self) -> Option<&str>;
    fn provider_name(&self) -> Option<&str>;
    fn endpoint(&self) -> Option<&str>;
}

/// The model's methods are called when their boxed future is first polled, not here: a
/// method written as a plain `fn` returning a future runs code before it returns, and the run
/// catches a model's panic around the polls of its call (failing the turn with an error).
impl<M: CompletionModel> DynCompletionModel for M {
    fn completion<'a>(
        &'a self,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<CompletionResponse, CompletionError>> {
        Box::pin(async move { CompletionModel::completion(self, request).await })
    }
    fn stream<'a>(
        &'a self,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<CompletionStream, CompletionError>> {
        Box::pin(async move { CompletionModel::stream(self, request).await })
    }
    // What a model declares about itself is read during a run, where a panic must not
    // unwind into the caller's task: one that panics declares nothing (no native structured
    // output, no names for telemetry).
    fn supports_native_output(&self) -> bool {
        declared::<M, _>("supports_native_output", || {
            CompletionModel::supports_native_output(self)
        })
        .unwrap_or(false)
    }
    fn model_name(&self) -> Option<&str> {
        declared::<M, _>("model_name", || CompletionModel::model_name(self)).flatten()
    }
    fn provider_name(&self) -> Option<&str> {
        declared::<M, _>("provider_name", || CompletionModel::provider_name(self)).flatten()
    }
    fn endpoint(&self) -> Option<&str> {
        declared::<M, _>("endpoint", || CompletionModel::endpoint(self)).flatten()
    }
}

/// A shared, type-erased model.
pub(crate) type SharedModel = Arc<dyn DynCompletionModel>;

/// Why a model call failed.
///
/// A failed call ends the run with [`PromptError::Completion`](crate::agent::PromptError::Completion)
/// once the provider's own retries are spent (unless a hook answers it, as
/// [`ModelFallback`](crate::hooks::fallback::ModelFallback) does), and the caller decides by
/// its kind:
///
/// ```
/// use reins::agent::{AgentBuilder, PromptError};
/// use reins::completion::CompletionError;
/// use reins::testing::{ScriptedModel, Turn};
///
/// /// Whether asking again later may succeed.
/// fn worth_retrying(error: &CompletionError) -> bool {
///     match error {
///         CompletionError::Http { status, .. } => *status == 429 || *status >= 500,
///         CompletionError::Transport(_) | CompletionError::Timeout(_) => true,
///         _ => false,
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let overloaded = CompletionError::Http { status: 529, body: "overloaded".into() };
/// let agent = AgentBuilder::new(ScriptedModel::new([Turn::error(overloaded)])).build();
/// match agent.prompt("Hi").await {
///     Err(PromptError::Completion { source, run_id, .. }) => {
///         assert!(worth_retrying(&source), "{source}");
///         assert!(!run_id.is_empty());
///     }
///     other => panic!("expected a failed model call, got {other:?}"),
/// }
/// # }
/// ```
///
/// It serializes as `{"<kind>": …}` (`{"timeout": "…"}`, `{"http": {"status": 503, "body":
/// "…"}}`), so a recorded run keeps its failed calls
/// ([`ResponseCache`](crate::hooks::cache::ResponseCache)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CompletionError {
    /// The provider answered with an error status; `body` is what it said. Shown, a 404 also
    /// says what to check: a base URL without its `/v1` (`http://localhost:8000` for
    /// `http://localhost:8000/v1`) and a model the server does not serve both end so.
    #[error("the provider answered HTTP {status}: {body}{}", http_hint(*status))]
    Http {
        /// The HTTP status code.
        status: u16,
        /// The provider's error body, as received.
        body: String,
    },
    /// The request could not be sent or the connection failed.
    #[error("the request to the provider failed: {0}")]
    Transport(String),
    /// The call took longer than its limit.
    #[error("the model call timed out: {0}")]
    Timeout(String),
    /// The provider sent something reins could not read; the message says what was received.
    #[error("could not read the provider's response: {0}")]
    Decode(String),
    /// The server answered with a redirect, which reins does not follow to another origin
    /// (nor at all, by default): a credential must never travel to a server it was not meant
    /// for. `location` is where the server tried to send the request.
    #[error(
        "the provider answered HTTP {status}, a redirect to `{location}`, which was not followed"
    )]
    Redirected {
        /// The HTTP status code (301, 302, 303, 307 or 308).
        status: u16,
        /// The `Location` the server gave.
        location: String,
    },
    /// The server sent more than a limit allows (a body, an event or a line of a stream);
    /// reading stopped there, so memory stays bounded.
    #[error("{what} is larger than the limit of {limit} bytes")]
    TooLarge {
        /// What was too large.
        what: String,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The request cannot be expressed for this model (e.g. an unsupported option).
    #[error("the request is not valid for this model: {0}")]
    InvalidRequest(String),
    /// Any other failure reported by the model implementation.
    #[error("{0}")]
    Other(String),
}

/// What a person should check after an error status that usually means a mistake in the
/// client's settings rather than a failing server.
fn http_hint(status: u16) -> &'static str {
    match status {
        404 => {
            " (no such endpoint or model: check the base URL, which for a Chat Completions \
             server usually ends in `/v1`, and the model's name)"
        }
        _ => "",
    }
}

impl CompletionError {
    /// A low-cardinality name of the failure, without its text: an HTTP failure's status code
    /// as text (`429`, `503`: the conventions ask for the provider's error code, and a status
    /// is what every provider's error has), else the variant's (`transport`, `timeout`, ...;
    /// `_OTHER` for [`CompletionError::Other`], the conventions' name for an unknown error).
    /// It is a failed call's `error.type`, and what reins's own logs say of a failure inside
    /// a run: the text can hold the provider's error body, which may echo the prompt, and a
    /// log event inside a span is recorded on it whether content is recorded or not.
    pub(crate) fn error_type(&self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            CompletionError::Http { status, .. } => return Cow::Owned(status.to_string()),
            CompletionError::Transport(_) => "transport",
            CompletionError::Timeout(_) => "timeout",
            CompletionError::Decode(_) => "decode",
            CompletionError::Redirected { .. } => "redirected",
            CompletionError::TooLarge { .. } => "too_large",
            CompletionError::InvalidRequest(_) => "invalid_request",
            CompletionError::Other(_) => "_OTHER",
        })
    }

    /// What went wrong, in a few words a person reads, without the failure's text (for the
    /// same reason as [`error_type`](CompletionError::error_type)): what reins's own logs say
    /// of a failure beside its `error.type` (`the server had an error: HTTP 503`).
    pub(crate) fn kind_in_words(&self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            CompletionError::Http { status, .. } => {
                let what = match status {
                    429 => "the server is limiting requests",
                    529 => "the server is overloaded",
                    500..=599 => "the server had an error",
                    400..=499 => "the server refused the request",
                    _ => "the server answered an error",
                };
                return Cow::Owned(format!("{what}: HTTP {status}"));
            }
            CompletionError::Transport(_) => "could not reach the server",
            CompletionError::Timeout(_) => "no answer in time",
            CompletionError::Decode(_) => "the answer could not be read",
            CompletionError::Redirected { .. } => "the server redirected the call elsewhere",
            CompletionError::TooLarge { .. } => "the answer was larger than the limit",
            CompletionError::InvalidRequest(_) => "the request is not valid for this model",
            CompletionError::Other(_) => "the model failed",
        })
    }
}
