//! [`HttpModel`]: any protocol over the one HTTP path.

use super::body::{content_type, not_an_event_stream, read_json};
use super::client::HttpClient;
use super::protocol::{MAX_ANSWER_PARTS, Protocol, too_many_parts};
use super::stream::chunk_stream;
use crate::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, CompletionStream,
    keep_oversized_as_text,
};
use reqwest::Response;
use serde_json::Value;
use std::sync::Arc;
use tokio::time::Instant;

/// A model reached over HTTP, speaking protocol `P`: what every hosted provider's
/// `.completion(model)` returns (e.g. [`ChatCompletionsModel`](crate::providers::openai::ChatCompletionsModel)
/// is `HttpModel<Chat>`). Cheap to clone; clones share the connection pool.
#[derive(Debug, Clone)]
pub struct HttpModel<P> {
    client: Arc<HttpClient>,
    protocol: P,
}

impl<P: Protocol> HttpModel<P> {
    pub(crate) fn new(client: Arc<HttpClient>, protocol: P) -> Self {
        HttpModel { client, protocol }
    }

    /// The model name sent with each request.
    pub fn model(&self) -> &str {
        self.protocol.model()
    }

    /// The JSON body sent for `request` (`stream` selects the streamed form); an error when
    /// the request cannot be expressed in this protocol.
    pub fn request_body(
        &self,
        request: &CompletionRequest,
        stream: bool,
    ) -> Result<Value, CompletionError> {
        self.protocol.encode(request, stream)
    }

    /// Encodes `request` and posts it (`stream` selects the streamed form); the response,
    /// and the call's total deadline, which reading the answer must keep too.
    async fn send(
        &self,
        request: &CompletionRequest,
        stream: bool,
    ) -> Result<(Response, Instant), CompletionError> {
        let body = self.protocol.encode(request, stream)?;
        let deadline = self.client.deadline();
        let path = self.protocol.path(stream);
        let response = self.client.post(&path, &body, stream, deadline).await?;
        Ok((response, deadline))
    }

    pub(crate) fn protocol(&self) -> &P {
        &self.protocol
    }

    /// This model with its protocol's settings changed by `change`: how each protocol's model
    /// options are written.
    pub(crate) fn with_protocol(mut self, change: impl FnOnce(&mut P)) -> Self {
        change(&mut self.protocol);
        self
    }
}

impl<P: Protocol> CompletionModel for HttpModel<P> {
    async fn completion(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        let (response, deadline) = self.send(request, false).await?;
        let (raw, text) = read_json(&self.client, response, deadline).await?;
        let mut response = self
            .protocol
            .decode(raw)
            .map_err(|error| self.client.scrub_error(error))?;
        // Arguments the body held as an object were read with it: an integer beyond 64 bits
        // in them was rounded, and the call keeps the model's text instead. A body that
        // parsed is UTF-8.
        if let Ok(text) = std::str::from_utf8(&text) {
            keep_oversized_as_text(&mut response, text);
        }
        drop(text);
        // A key the server echoed in its answer goes no further (see `echoes.rs`).
        if let Some(echoes) = &self.client.echoes {
            echoes.scrub_response(&mut response);
        }
        // A whole answer holds at most as many parts as a streamed one: each tool call in it
        // is one the agent would run.
        if response.content.len() > MAX_ANSWER_PARTS {
            return Err(too_many_parts());
        }
        Ok(response)
    }

    async fn stream(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionStream, CompletionError> {
        let (response, deadline) = self.send(request, true).await?;
        let client = &self.client;
        let kind = content_type(&response);
        // A 200 that is not an event stream (a gateway's JSON error, a login page) is said
        // to be one, with what it is; a missing content type is given the benefit of the doubt.
        if kind != "(none)" && !kind.to_ascii_lowercase().starts_with("text/event-stream") {
            return Err(not_an_event_stream(client, response, &kind, deadline).await);
        }
        Ok(chunk_stream(
            Arc::clone(client),
            response,
            self.protocol.decoder(),
            deadline,
        ))
    }

    fn supports_native_output(&self) -> bool {
        self.protocol.supports_native_output()
    }

    fn model_name(&self) -> Option<&str> {
        Some(self.protocol.model())
    }

    fn provider_name(&self) -> Option<&str> {
        Some(self.protocol.provider_name())
    }

    fn endpoint(&self) -> Option<&str> {
        Some(&self.client.endpoint)
    }
}
