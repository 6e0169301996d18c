//! What a protocol is: a codec between reins' requests and responses and one API's JSON, with
//! no I/O in it.

use crate::completion::{CompletionError, CompletionRequest, CompletionResponse, StreamChunk};
use serde_json::Value;
use std::collections::VecDeque;
use std::fmt::Debug;

pub(crate) mod sealed {
    /// Keeps the protocol traits implementable only inside reins, so they can grow.
    pub trait Sealed {}
}

/// One API's wire format: how a [`CompletionRequest`] is written and how its answer is read.
///
/// Implemented by each protocol reins speaks (Chat Completions, Responses, Anthropic Messages,
/// Gemini); [`HttpModel`](super::HttpModel) sends what it encodes and decodes what comes back.
/// Sealed: it cannot be implemented outside reins.
pub trait Protocol: sealed::Sealed + Debug + Clone + Send + Sync + 'static {
    /// Reads a streamed answer.
    type Decoder: StreamDecoder;

    /// The provider's name in telemetry (`gen_ai.provider.name`).
    const PROVIDER: &'static str;

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
}
