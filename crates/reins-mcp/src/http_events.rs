//! Server-sent events read from an HTTP body, each event's data bounded and weighed before
//! rmcp parses it.
//!
//! rmcp's HTTP transport takes a stream of parsed events ([`Sse`]) from its HTTP client and
//! parses each event's data as a message. The `sse_stream` parser it would use keeps an event
//! whole however long it grows, and rmcp's bound on it ends the stream, failing no request.
//! Here the events are read from the body's bytes as the SSE format says (lines ended by CR,
//! LF or CRLF; `data`, `event`, `id` and `retry` fields; a blank line ending an event), and
//! at most [`MAX_MESSAGE_BYTES`] of an event's data is kept, then only its start. A message
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

use crate::batch::batch_messages;
use crate::hidden::Credentials;
use crate::unreadable::{unreadable, unreadable_answering};
use crate::weighed::{MAX_MESSAGE_BYTES, TOO_LONG_HEAD_BYTES, Unread, is_light, refusal_answering};
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use rmcp::model::{ErrorData, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::SseError;
use sse_stream::Sse;
use std::collections::VecDeque;
use std::sync::Arc;

/// The longest value of an `event`, `id` or `retry` field kept; a longer one is ignored.
/// These are names, not messages: an `id` is sent back as a header to resume a stream.
const MAX_FIELD_BYTES: usize = 4096;

/// The byte-order mark the stream may start with, which the SSE format ignores.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

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

/// Which field the line being read sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Data,
    Event,
    Id,
    Retry,
    /// A comment, or a field the SSE format does not name: its value is skipped.
    Ignored,
}

/// Where the parser stands in the line being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LinePart {
    /// Before the colon: the field's name is being read.
    Name,
    /// Just after the colon, where one space is skipped.
    ValueStart(Field),
    Value(Field),
}

/// Reads the SSE format a chunk at a time, each byte once, keeping no more of an event than
/// [`MAX_MESSAGE_BYTES`] of data and [`MAX_FIELD_BYTES`] of each other field.
struct EventParser {
    server: Arc<str>,
    /// The server's credentials, which what is logged or answered of a message must not
    /// quote.
    credentials: Arc<Credentials>,
    asked: Option<RequestId>,
    part: LinePart,
    /// The field name being read (at most [`MAX_FIELD_BYTES`] of it), or a short value.
    name: Vec<u8>,
    value: Vec<u8>,
    /// Whether a longer value than [`MAX_FIELD_BYTES`] came: the field is ignored.
    value_too_long: bool,
    /// The last chunk ended with a CR, so an LF starting the next one ends nothing.
    after_cr: bool,
    /// No line has ended yet: a byte-order mark may start the first.
    first_line: bool,
    event: EventFields,
    /// The answer's `Content-Type`, as errors quote it.
    content_type: Option<String>,
    /// Whether a byte other than a byte-order mark or blank space has come.
    body_started: bool,
    /// Whether the body is JSON, not an event stream: nothing more is read of it.
    json_body: bool,
}

/// The fields of the event being read.
#[derive(Default)]
struct EventFields {
    /// Whether a field of it was read (a comment is not one): an event of none is not given.
    any: bool,
    kind: Option<String>,
    id: Option<String>,
    retry: Option<u64>,
    /// Its data lines joined by LF: all of it up to [`MAX_MESSAGE_BYTES`], then its start.
    data: Vec<u8>,
    data_length: usize,
    has_data: bool,
}

impl EventParser {
    fn new(
        server: Arc<str>,
        credentials: Arc<Credentials>,
        asked: Option<RequestId>,
    ) -> EventParser {
        EventParser {
            server,
            credentials,
            asked,
            part: LinePart::Name,
            name: Vec::new(),
            value: Vec::new(),
            value_too_long: false,
            after_cr: false,
            first_line: true,
            event: EventFields::default(),
            content_type: None,
            body_started: false,
            json_body: false,
        }
    }

    /// The parser of an answer whose `Content-Type` is `content_type`.
    fn labelled(mut self, content_type: Option<String>) -> EventParser {
        self.content_type = content_type;
        self
    }

    /// Whether `chunk` starts a JSON body; when it does, the error answering the request
    /// the POST sent goes to `ready`.
    fn starts_json(&mut self, chunk: &[u8], ready: &mut VecDeque<Sse>) -> bool {
        if self.body_started {
            return false;
        }
        let Some(first) = chunk
            .iter()
            .find(|byte| !b" \t\r\n\xEF\xBB\xBF".contains(byte))
        else {
            return false;
        };
        self.body_started = true;
        if !matches!(first, b'{' | b'[') {
            return false;
        }
        self.json_body = true;
        let kind = self.content_type.as_deref().unwrap_or("text/event-stream");
        let why = format!(
            "the server answered with Content-Type `{kind}`, but its body is JSON, not an \
             event stream"
        );
        let Some(asked) = self.asked.clone() else {
            tracing::warn!(target: "reins_mcp", server = %self.server, "an event stream whose body is JSON is passed over");
            return true;
        };
        tracing::warn!(target: "reins_mcp", server = %self.server, id = %asked, "an answer labelled an event stream is JSON");
        let error = JsonRpcMessage::error(ErrorData::internal_error(why, None), Some(asked));
        let error: ServerJsonRpcMessage = error;
        ready.extend(serde_json::to_string(&error).ok().map(|data| Sse {
            data: Some(data),
            ..Sse::default()
        }));
        true
    }

    /// Reads `chunk`, adding the events it ends to `ready`.
    fn feed(&mut self, mut chunk: &[u8], ready: &mut VecDeque<Sse>) {
        if self.json_body || self.starts_json(chunk, ready) {
            return;
        }
        if std::mem::take(&mut self.after_cr) {
            chunk = chunk.strip_prefix(b"\n").unwrap_or(chunk);
        }
        while !chunk.is_empty() {
            let end = chunk.iter().position(|byte| matches!(byte, b'\n' | b'\r'));
            let (content, rest) = match end {
                Some(at) => (&chunk[..at], &chunk[at..]),
                None => (chunk, &chunk[chunk.len()..]),
            };
            self.take_bytes(content);
            let Some((&ending, rest)) = rest.split_first() else {
                return;
            };
            self.end_line(ready);
            chunk = rest;
            if ending == b'\r' {
                match chunk.strip_prefix(b"\n") {
                    Some(after) => chunk = after,
                    None if chunk.is_empty() => self.after_cr = true,
                    None => {}
                }
            }
        }
    }

    /// Takes bytes of a line, none of them a line ending.
    fn take_bytes(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            match self.part {
                LinePart::Name => {
                    let colon = bytes.iter().position(|byte| *byte == b':');
                    let name = &bytes[..colon.unwrap_or(bytes.len())];
                    let room = MAX_FIELD_BYTES.saturating_sub(self.name.len());
                    self.name.extend_from_slice(&name[..name.len().min(room)]);
                    let Some(colon) = colon else {
                        return;
                    };
                    let field = self.field();
                    if field == Field::Data {
                        self.start_data_line();
                    }
                    self.part = LinePart::ValueStart(field);
                    bytes = &bytes[colon + 1..];
                }
                LinePart::ValueStart(field) => {
                    bytes = bytes.strip_prefix(b" ").unwrap_or(bytes);
                    self.part = LinePart::Value(field);
                }
                LinePart::Value(Field::Data) => return self.push_data(bytes),
                LinePart::Value(Field::Ignored) => return,
                LinePart::Value(_) => {
                    let room = MAX_FIELD_BYTES.saturating_sub(self.value.len());
                    self.value_too_long |= bytes.len() > room;
                    self.value
                        .extend_from_slice(&bytes[..bytes.len().min(room)]);
                    return;
                }
            }
        }
    }

    /// The field the name read so far names.
    fn field(&self) -> Field {
        let name = self.name.as_slice();
        let name = match self.first_line {
            true => name.strip_prefix(UTF8_BOM).unwrap_or(name),
            false => name,
        };
        match name {
            b"data" => Field::Data,
            b"event" => Field::Event,
            b"id" => Field::Id,
            b"retry" => Field::Retry,
            _ => Field::Ignored,
        }
    }

    /// A data line starts: it is joined to the one before by an LF.
    fn start_data_line(&mut self) {
        if std::mem::replace(&mut self.event.has_data, true) {
            self.push_data(b"\n");
        }
        self.event.any = true;
    }

    /// Adds `bytes` to the event's data, keeping only its start once it is too long.
    fn push_data(&mut self, bytes: &[u8]) {
        let event = &mut self.event;
        if event.data_length <= MAX_MESSAGE_BYTES {
            let room = MAX_MESSAGE_BYTES - event.data_length;
            event
                .data
                .extend_from_slice(&bytes[..bytes.len().min(room)]);
            if bytes.len() > room {
                // The data just became too long: only its start is kept, its memory given back.
                event.data.truncate(TOO_LONG_HEAD_BYTES);
                event.data.shrink_to_fit();
            }
        }
        event.data_length = event.data_length.saturating_add(bytes.len());
    }

    /// The line being read ends: its field is set, or the event given when it was blank.
    fn end_line(&mut self, ready: &mut VecDeque<Sse>) {
        match self.part {
            LinePart::Name if self.name.is_empty() => {
                if std::mem::take(&mut self.event.any) {
                    let event = std::mem::take(&mut self.event);
                    let event = self.finished(event);
                    self.unbatched(event, ready);
                }
            }
            // A line without a colon names a field whose value is empty.
            LinePart::Name => match self.field() {
                Field::Data => self.start_data_line(),
                field => self.set(field),
            },
            LinePart::ValueStart(field) | LinePart::Value(field) => self.set(field),
        }
        self.part = LinePart::Name;
        self.name.clear();
        self.value.clear();
        self.value_too_long = false;
        self.first_line = false;
    }

    /// Sets the event's `field` to the value read, unless it was too long (or, for `retry`,
    /// not a number; for `id`, holds a NUL: the SSE format ignores both).
    fn set(&mut self, field: Field) {
        if self.value_too_long || field == Field::Ignored || field == Field::Data {
            return;
        }
        let value = String::from_utf8_lossy(&self.value).into_owned();
        let event = &mut self.event;
        match field {
            Field::Event => event.kind = Some(value),
            Field::Id if !value.contains('\0') => event.id = Some(value),
            Field::Retry => match value.parse::<u64>() {
                Ok(retry) if value.bytes().all(|byte| byte.is_ascii_digit()) => {
                    event.retry = Some(retry)
                }
                _ => return,
            },
            _ => return,
        }
        event.any = true;
    }

    /// The event rmcp is given for `event`: its data weighed when it is a message.
    fn finished(&self, event: EventFields) -> Sse {
        let is_message = is_message(event.kind.as_deref());
        let data = match event.has_data {
            false => None,
            true if event.data_length > MAX_MESSAGE_BYTES => {
                let why = Unread::TooLong {
                    bytes: event.data_length,
                };
                self.refused(&event.data, why, is_message)
            }
            true if is_message && !is_light(&event.data) => {
                let why = Unread::TooHeavy {
                    bytes: event.data_length,
                };
                self.refused(&event.data, why, is_message)
            }
            true => {
                let answer = is_message
                    .then(|| unreadable(&event.data))
                    .flatten()
                    .and_then(|error| self.unreadable(&event.data, &error));
                Some(answer.unwrap_or_else(|| String::from_utf8_lossy(&event.data).into_owned()))
            }
        };
        Sse {
            event: event.kind,
            data,
            id: event.id,
            retry: event.retry,
        }
    }

    /// The data that stands for an answer rmcp cannot read (`error` says why): the error
    /// answering its request. `None` when it answers none: rmcp passes over it as it is.
    fn unreadable(&self, text: &[u8], error: &serde_json::Error) -> Option<String> {
        let answer = unreadable_answering(
            text,
            error,
            &self.server,
            &self.credentials,
            self.asked.as_ref(),
        )?;
        serde_json::to_string(&answer).ok()
    }

    /// Adds `event` to `ready`: as an event for each of its messages when its data is a
    /// batch, else as it is.
    fn unbatched(&self, event: Sse, ready: &mut VecDeque<Sse>) {
        let batch = match (&event.data, is_message(event.event.as_deref())) {
            (Some(data), true) => batch_messages(data.as_bytes(), &self.server),
            _ => None,
        };
        match batch {
            Some(messages) => ready.extend(message_events(messages, event.id, event.retry)),
            None => ready.push_back(event),
        }
    }

    /// The data that stands for a message refused unread: the error answering its request,
    /// or none.
    fn refused(&self, text: &[u8], why: Unread, is_message: bool) -> Option<String> {
        if !is_message {
            // rmcp does not read other events' data as messages: nothing is answered.
            tracing::warn!(target: "reins_mcp", server = %self.server, "{why}");
            return None;
        }
        let answer = refusal_answering(
            text,
            why,
            &self.server,
            &self.credentials,
            self.asked.as_ref(),
        )?;
        match serde_json::to_string(&answer) {
            Ok(answer) => Some(answer),
            Err(error) => {
                tracing::warn!(target: "reins_mcp", server = %self.server, %error, "{why}");
                None
            }
        }
    }
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
