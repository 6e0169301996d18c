//! What a protocol is: a codec between reins' requests and responses and one API's JSON, with
//! no I/O in it.

use crate::completion::{CompletionError, CompletionRequest, CompletionResponse, StreamChunk};
use serde_json::Value;
use std::collections::VecDeque;
use std::fmt::Debug;

/// The most parts (content blocks, output items, tool calls) one answer may have. A stream's
/// events each find their part among those before them, so a server opening parts without
/// end would make every event cost more than the last; and every tool call is one the agent
/// would run. An answer with more is a [`CompletionError::Decode`].
pub(crate) const MAX_ANSWER_PARTS: usize = 512;

/// The error of an answer with more than [`MAX_ANSWER_PARTS`] parts.
pub(crate) fn too_many_parts() -> CompletionError {
    CompletionError::Decode(format!(
        "the answer has more than {MAX_ANSWER_PARTS} parts (content blocks, items or tool calls)"
    ))
}

pub(crate) mod sealed {
    /// Keeps the protocol traits implementable only inside reins, so they can grow.
    pub trait Sealed {}
}

/// One API's wire format: how a [`CompletionRequest`] is written and how its answer is read.
///
/// Implemented by each protocol reins speaks (Chat Completions, Responses, Anthropic Messages,
/// Gemini); [`HttpModel`](super::HttpModel) sends what it encodes and decodes what comes back.
/// Sealed: it cannot be implemented outside reins.
///
/// Code can be written once for a model of any protocol:
///
/// ```
/// use reins::completion::{CompletionError, CompletionRequest};
/// use reins::message::Message;
/// use reins::providers::anthropic::Anthropic;
/// use reins::providers::openai::OpenAI;
/// use reins::providers::{HttpModel, Protocol};
/// use serde_json::Value;
///
/// /// What a hosted model would be sent for one question, whatever its wire format.
/// fn body_for<P: Protocol>(model: &HttpModel<P>, question: &str) -> Result<Value, CompletionError> {
///     let request = CompletionRequest::new(vec![Message::user(question)]);
///     model.request_body(&request, false)
/// }
///
/// let chat = OpenAI::builder().api_key("test-key").build()?.completion("gpt-4o-mini");
/// let messages = Anthropic::builder().api_key("test-key").build()?.completion("claude-sonnet-4-5");
/// assert_eq!(body_for(&chat, "Hi")?["model"], "gpt-4o-mini");
/// assert_eq!(body_for(&messages, "Hi")?["model"], "claude-sonnet-4-5");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Protocol: sealed::Sealed + Debug + Clone + Send + Sync + 'static {
    /// Reads a streamed answer.
    type Decoder: StreamDecoder;

    /// The provider's name in telemetry (`gen_ai.provider.name`): a method rather than a
    /// constant, as one protocol (Chat Completions) is spoken by many services.
    fn provider_name(&self) -> &'static str;

    /// The model name sent with each request.
    fn model(&self) -> &str;

    /// The request's path under the base URL (it may carry a query).
    fn path(&self, stream: bool) -> String;

    /// The JSON body sent for `request`; `stream` selects the streamed form.
    fn encode(&self, request: &CompletionRequest, stream: bool) -> Result<Value, CompletionError>;

    /// Reads a whole (non-streamed) answer.
    fn decode(&self, body: Value) -> Result<CompletionResponse, CompletionError>;

    /// A decoder for one streamed answer.
    fn decoder(&self) -> Self::Decoder;

    /// Whether the model can be asked for JSON matching a schema natively.
    fn supports_native_output(&self) -> bool;
}

/// Reads one streamed answer from its server-sent events. Sealed like [`Protocol`].
///
/// Each [`Protocol`] brings its own; a streamed call of an [`HttpModel`](super::HttpModel)
/// uses it to turn the server's events into [`StreamChunk`]s, which is all a caller sees of it
/// (this example needs a server speaking Chat Completions, so it is not run here):
///
/// ```no_run
/// use futures::StreamExt;
/// use reins::completion::{CompletionModel, CompletionRequest, StreamChunk};
/// use reins::message::Message;
/// use reins::providers::openai_compatible::OpenAICompatible;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let model = OpenAICompatible::builder("http://127.0.0.1:8080/v1").build()?.completion("local");
/// let request = CompletionRequest::new(vec![Message::user("Count to three.")]);
/// let mut chunks = model.stream(&request).await?;
/// while let Some(chunk) = chunks.next().await {
///     match chunk? {
///         StreamChunk::Text(delta) => print!("{delta}"),
///         StreamChunk::Done(response) => println!("\n({} output tokens)", response.usage.output_tokens),
///         _ => {}
///     }
/// }
/// # Ok(())
/// # }
/// ```
pub trait StreamDecoder: sealed::Sealed + Send + 'static {
    /// Reads one event (its `event:` name and data), queueing the chunks it carries; returns
    /// the assembled response when the event ends the answer.
    fn event(
        &mut self,
        name: Option<&str>,
        data: &str,
        out: &mut VecDeque<StreamChunk>,
    ) -> Result<Option<CompletionResponse>, CompletionError>;

    /// The connection closed before an event ended the answer: the response, for an API that
    /// ends an answer by closing the stream, or an error saying what was received.
    fn closed(self) -> Result<CompletionResponse, CompletionError>;

    /// What has arrived so far (events, text, tool calls), for the error of a stream that
    /// broke, stalled or overflowed.
    fn received(&self) -> String;

    /// Bytes the decoder keeps that no chunk it queued carries (signatures, call ids, blocks
    /// and items it does not stream, events it keeps whole), counted as they arrive: a server
    /// streaming without end into such a field is stopped by the same limit as the answer.
    fn kept(&self) -> usize;

    /// How many parts (content blocks, output items, tool calls) the answer has so far: more
    /// than 512 end the stream with a [`CompletionError::Decode`].
    fn parts(&self) -> usize;
}
