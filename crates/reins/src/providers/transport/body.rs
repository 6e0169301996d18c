//! Reading a response body within the limits: a whole JSON body, an error body, and the
//! start of a body that is not what was asked for.

use super::client::Wait;
use super::{HttpClient, excerpt};
use crate::completion::CompletionError;
use crate::json_weight::{MAX_PARSED_OVERHEAD, parses_within};
use futures::StreamExt;
use reqwest::Response;
use reqwest::header::CONTENT_TYPE;
use tokio::time::Instant;

/// The most bytes read of an error body: the excerpt quotes its start, the rest is not read.
const ERROR_BODY_BYTES: usize = 64 * 1024;

/// What went wrong reading a body.
enum ReadFailure {
    TooLarge,
    Failed(CompletionError),
}

/// Reads up to `limit` bytes of the body, each read within the idle timeout and all before the
/// deadline. Stops at the limit: `TooLarge` with what was read is returned by the caller's
/// choice (see `cut_at_limit`).
async fn read_bounded(
    client: &HttpClient,
    response: Response,
    limit: usize,
    deadline: Instant,
    cut_at_limit: bool,
) -> Result<Vec<u8>, (Vec<u8>, ReadFailure)> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    loop {
        let next = client.within(deadline, Wait::Idle, chunks.next());
        match next.await {
            Err(error) => return Err((body, ReadFailure::Failed(error))),
            Ok(None) => return Ok(body),
            Ok(Some(Err(error))) => {
                return Err((body, ReadFailure::Failed(client.transport_error(&error))));
            }
            Ok(Some(Ok(chunk))) => {
                if body.len() + chunk.len() > limit {
                    if cut_at_limit {
                        body.extend_from_slice(&chunk[..limit - body.len()]);
                        return Ok(body);
                    }
                    return Err((body, ReadFailure::TooLarge));
                }
                body.extend_from_slice(&chunk);
            }
        }
    }
}

/// Reads a whole JSON body: at most the body limit, within the idle timeout and the deadline.
/// Its text comes with it: the model's tool-call arguments in it are read with the body, and
/// an integer beyond 64 bits among them is known only from the text (see
/// `completion::keep_oversized_as_text`).
pub(crate) async fn read_json(
    client: &HttpClient,
    response: Response,
    deadline: Instant,
) -> Result<(serde_json::Value, Vec<u8>), CompletionError> {
    let limit = client.limits.body;
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Err(too_large("the response body", limit));
    }
    let content_type = content_type(&response);
    let bytes = match read_bounded(client, response, limit, deadline, false).await {
        Ok(bytes) => bytes,
        Err((_, ReadFailure::TooLarge)) => return Err(too_large("the response body", limit)),
        Err((_, ReadFailure::Failed(error))) => return Err(error),
    };
    // Refused before it is parsed: within the byte limit, its structure could take gigabytes.
    let structure_limit = limit.max(MAX_PARSED_OVERHEAD);
    if !parses_within(&bytes, structure_limit) {
        return Err(too_large(
            "the JSON structure of the response body (parsed)",
            structure_limit,
        ));
    }
    match serde_json::from_slice(&bytes) {
        Ok(value) => Ok((value, bytes)),
        Err(error) => {
            let text = String::from_utf8_lossy(&bytes);
            Err(CompletionError::Decode(client.scrub(&format!(
                "the response is not JSON ({error}); content type `{content_type}`; received: {}",
                excerpt(&text)
            ))))
        }
    }
}

/// The start of an error body, scrubbed of the key, for [`CompletionError::Http`].
pub(crate) async fn read_error_body(
    client: &HttpClient,
    response: Response,
    deadline: Instant,
) -> String {
    match read_bounded(client, response, ERROR_BODY_BYTES, deadline, true).await {
        Ok(bytes) => client.scrub(&excerpt(&String::from_utf8_lossy(&bytes))),
        Err((bytes, _)) if !bytes.is_empty() => {
            client.scrub(&excerpt(&String::from_utf8_lossy(&bytes)))
        }
        Err((_, ReadFailure::Failed(error))) => {
            format!("<the error body could not be read: {error}>")
        }
        Err((_, ReadFailure::TooLarge)) => String::new(),
    }
}

/// The error for a 200 that should have been an event stream but is not (a gateway's JSON
/// error, a login page): it names the content type and quotes the body's start.
pub(crate) async fn not_an_event_stream(
    client: &HttpClient,
    response: Response,
    content_type: &str,
    deadline: Instant,
) -> CompletionError {
    let start = read_error_body(client, response, deadline).await;
    // The content type is the server's text too: it may echo the key.
    CompletionError::Decode(client.scrub(&format!(
        "a streamed answer was asked for, but the server answered with content type \
         `{content_type}` instead of an event stream; the body starts: {start}"
    )))
}

/// The response's content type, or `(none)`: excerpted, as errors quote it (a header can be
/// tens of kilobytes long).
pub(crate) fn content_type(response: &Response) -> String {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map_or_else(|| "(none)".to_owned(), excerpt)
}

pub(crate) fn too_large(what: &str, limit: usize) -> CompletionError {
    CompletionError::TooLarge {
        what: what.to_owned(),
        limit,
    }
}
