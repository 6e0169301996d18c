//! Server-sent events read from an HTTP body, each event's data bounded and weighed before
//! rmcp parses it.
//!
//! rmcp's HTTP transport takes a stream of parsed events ([`Sse`]) from its HTTP client and
//! parses each event's data as a message. The `sse_stream` parser it would use keeps an event
//! whole however long it grows, and rmcp's bound on it ends the stream, failing no request.
//! Here the events are read from the body's bytes as the SSE format says (lines ended by CR,
//! LF or CRLF; `data`, `event`, `id` and `retry` fields; a blank line ending an event), and
//! at most [`MAX_MESSAGE_BYTES`](crate::weighed::MAX_MESSAGE_BYTES) of an event's data is kept, then only its start. A message
//! event whose data is too long or too heavy (`weighed.rs`) reaches rmcp with its data
//! replaced by the error answering its request, or with no data when it answers none; its
//! `id` and `retry` pass unchanged, so that a stream resumed later starts after it. An event
//! whose data is a batch (`batch.rs`) reaches rmcp as an event for each of its messages, the
//! last with the batch's `id` and `retry`. An answer rmcp cannot read as a message (parsed
//! here once more to know it) reaches it as the error answering its request
//! (`unreadable.rs`): rmcp would pass over it, and its request wait.
//!
//! A body labelled an event stream whose first byte (after a byte-order mark and blank
//! space) opens JSON (`{`, `[`) is JSON, not an event stream: no event of it would be read,
//! and rmcp would fail the request as a connection lost. It ends the stream at once, with
//! an error answering the request the POST sent that says what the server answered; the
//! session goes on.
//!
//! The format is read in `parser.rs`, a body that is JSON caught in `json_body.rs`, and each
//! event that ends is weighed in `weighing.rs`.

mod json_body;
mod parser;
mod weighing;

use crate::hidden::Credentials;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use parser::EventParser;
use rmcp::model::{RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::SseError;
use sse_stream::Sse;
use std::collections::VecDeque;
use std::sync::Arc;

/// The events of `body`, read as they come, each one's data bounded and weighed (see the
/// module's documentation). `asked` is the request whose HTTP POST this stream answers, if
/// any: a refused answer whose `id` was not read answers it. `credentials`, the server's, are
/// kept out of what is logged and answered of a message refused or unreadable.
pub(crate) fn weighed_events<S, E>(
    body: S,
    server: Arc<str>,
    credentials: Arc<Credentials>,
    asked: Option<RequestId>,
    content_type: Option<String>,
) -> BoxStream<'static, Result<Sse, SseError>>
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let reader = EventReader {
        body: Box::pin(body),
        parser: EventParser::new(server, credentials, asked).labelled(content_type),
        ready: VecDeque::new(),
        ended: false,
    };
    futures::stream::unfold(reader, |mut reader| async move {
        loop {
            if let Some(event) = reader.ready.pop_front() {
                return Some((Ok(event), reader));
            }
            if reader.ended {
                return None;
            }
            match reader.body.next().await {
                Some(Ok(chunk)) => {
                    reader.parser.feed(&chunk, &mut reader.ready);
                    // A JSON body: nothing more of it is read.
                    reader.ended = reader.parser.json_body;
                }
                Some(Err(error)) => {
                    // A body cut short: rmcp decides whether to reconnect. An event not yet
                    // ended is discarded, as the SSE format says.
                    reader.ended = true;
                    return Some((Err(SseError::Body(Box::new(error))), reader));
                }
                None => return None,
            }
        }
    })
    .boxed()
}

/// The state of [`weighed_events`]'s stream.
struct EventReader<S> {
    body: std::pin::Pin<Box<S>>,
    parser: EventParser,
    /// Events ended by the last chunk and not yet given to rmcp.
    ready: VecDeque<Sse>,
    ended: bool,
}

/// Whether an event of type `kind` carries a message (rmcp reads no other's data).
fn is_message(kind: Option<&str>) -> bool {
    matches!(kind, None | Some("") | Some("message"))
}

/// An event for each of `messages` (a batch's, in order), the last carrying `id` and `retry`
/// (a stream resumed after it starts after them all); one without data carries them when
/// there is no message.
pub(crate) fn message_events(
    messages: Vec<ServerJsonRpcMessage>,
    id: Option<String>,
    retry: Option<u64>,
) -> Vec<Sse> {
    let mut events: Vec<Sse> = messages
        .iter()
        .filter_map(|message| serde_json::to_string(message).ok())
        .map(|data| Sse {
            event: None,
            data: Some(data),
            id: None,
            retry: None,
        })
        .collect();
    if events.is_empty() && (id.is_some() || retry.is_some()) {
        events.push(Sse::default());
    }
    if let Some(last) = events.last_mut() {
        last.id = id;
        last.retry = retry;
    }
    events
}

#[cfg(test)]
mod tests;
