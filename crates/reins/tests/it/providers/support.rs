//! Helpers every module of this binary shares: settings for fast tests, event-stream bodies,
//! reading what a mock server received, and draining a streamed turn.

use futures::StreamExt;
use reins::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, StreamChunk,
};
use reins::message::{AssistantContent, Message};
use reins::providers::{RetryPolicy, Timeouts};
use serde_json::Value;
use std::time::Duration;
use wiremock::{MockServer, ResponseTemplate};

/// The key every test client is built with; tests check it never shows.
pub const KEY: &str = "sk-test-very-secret-key-0123";

/// Retries that take milliseconds, so retry tests stay fast.
pub fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        max_retries: 2,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(5),
    }
}

/// Timeouts short enough for tests, long enough for a loaded CI machine.
pub fn timeouts(first_byte: Duration, idle: Duration) -> Timeouts {
    Timeouts {
        connect: Duration::from_secs(2),
        first_byte,
        idle,
        ..Timeouts::default()
    }
}

/// The timeouts of tests that do not test timeouts.
pub fn test_timeouts() -> Timeouts {
    timeouts(Duration::from_secs(10), Duration::from_secs(10))
}

/// A request of one user message.
pub fn prompt(text: &str) -> CompletionRequest {
    CompletionRequest::new(vec![Message::user(text)])
}

/// Server-sent events as one body: each event is already a complete `...\n\n` block.
pub fn sse_body(events: &[String]) -> String {
    events.concat()
}

/// A 200 answering with the given events as an event stream.
pub fn sse_response(events: &[String]) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(sse_body(events), "text/event-stream")
}

/// A 200 answering with JSON.
pub fn json_response(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

/// The JSON bodies a mock server received, in order.
pub async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|request| serde_json::from_slice(&request.body).expect("a JSON request body"))
        .collect()
}

/// A response's content parts.
pub fn parts(response: &CompletionResponse) -> Vec<AssistantContent> {
    response.content.iter().cloned().collect()
}

/// A whole streamed turn: the chunks before its end, then `Done`'s response or the error that
/// ended it. Checks the stream's own contract on the way: nothing follows `Done` or an error.
pub async fn drain(
    model: &impl CompletionModel,
    request: &CompletionRequest,
) -> (
    Vec<StreamChunk>,
    Result<CompletionResponse, CompletionError>,
) {
    let mut stream = match model.stream(request).await {
        Ok(stream) => stream,
        Err(error) => return (Vec::new(), Err(error)),
    };
    let mut chunks = Vec::new();
    let mut end = None;
    while let Some(chunk) = stream.next().await {
        assert!(end.is_none(), "nothing follows Done or an error: {chunk:?}");
        match chunk {
            Ok(StreamChunk::Done(response)) => end = Some(Ok(response)),
            Ok(chunk) => chunks.push(chunk),
            Err(error) => end = Some(Err(error)),
        }
    }
    let end = end.unwrap_or_else(|| {
        panic!("the stream ended with neither Done nor an error after {chunks:?}")
    });
    (chunks, end)
}

/// The text fragments of streamed chunks, joined.
pub fn streamed_text(chunks: &[StreamChunk]) -> String {
    chunks
        .iter()
        .filter_map(|chunk| match chunk {
            StreamChunk::Text(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The reasoning fragments of streamed chunks, joined.
pub fn streamed_reasoning(chunks: &[StreamChunk]) -> String {
    chunks
        .iter()
        .filter_map(|chunk| match chunk {
            StreamChunk::Reasoning(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// Runs `future`, failing the test when it does not finish within `seconds`: a guard against
/// a hang, not a timing assertion.
pub async fn within<T>(seconds: u64, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(seconds), future)
        .await
        .unwrap_or_else(|_| panic!("did not finish within {seconds} s"))
}

/// A mock server answering every POST with `template`.
pub async fn answering(template: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(template)
        .mount(&server)
        .await;
    server
}

/// One call, blocking or streamed: the response, or the error (whether `stream()` refused or
/// the stream ended with it).
pub async fn call(
    model: &impl CompletionModel,
    request: &CompletionRequest,
    stream: bool,
) -> Result<CompletionResponse, CompletionError> {
    if stream {
        drain(model, request).await.1
    } else {
        model.completion(request).await
    }
}

/// A loopback address where nothing listens: its port was just freed.
pub fn unreachable_root() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{address}")
}
