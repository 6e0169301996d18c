//! The SSE format read a chunk at a time: lines ended by CR, LF or CRLF; `data`, `event`,
//! `id` and `retry` fields; a blank line ending an event. An event is kept bounded here, and
//! given to `weighing.rs` once it ends.

use crate::hidden::Credentials;
use crate::weighed::{MAX_MESSAGE_BYTES, TOO_LONG_HEAD_BYTES};
use rmcp::model::RequestId;
use sse_stream::Sse;
use std::collections::VecDeque;
use std::sync::Arc;

/// These are names, not messages: an `id` is sent back as a header to resume a stream.
pub(super) const MAX_FIELD_BYTES: usize = 4096;

/// The byte-order mark the stream may start with, which the SSE format ignores.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

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
pub(super) struct EventParser {
    pub(super) server: Arc<str>,
    /// The server's credentials, which what is logged or answered of a message must not
    /// quote.
    pub(super) credentials: Arc<Credentials>,
    pub(super) asked: Option<RequestId>,
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
    pub(super) content_type: Option<String>,
    /// Whether a byte other than a byte-order mark or blank space has come.
    pub(super) body_started: bool,
    /// Whether the body is JSON, not an event stream: nothing more is read of it.
    pub(super) json_body: bool,
}

/// The fields of the event being read.
#[derive(Default)]
pub(super) struct EventFields {
    /// Whether a field of it was read (a comment is not one): an event of none is not given.
    any: bool,
    pub(super) kind: Option<String>,
    pub(super) id: Option<String>,
    pub(super) retry: Option<u64>,
    /// Its data lines joined by LF: all of it up to [`MAX_MESSAGE_BYTES`], then its start.
    pub(super) data: Vec<u8>,
    pub(super) data_length: usize,
    pub(super) has_data: bool,
}

impl EventParser {
    pub(super) fn new(
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
    pub(super) fn labelled(mut self, content_type: Option<String>) -> EventParser {
        self.content_type = content_type;
        self
    }

    /// Whether `chunk` starts a JSON body; when it does, the error answering the request
    /// Reads `chunk`, adding the events it ends to `ready`.
    pub(super) fn feed(&mut self, mut chunk: &[u8], ready: &mut VecDeque<Sse>) {
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
}

#[cfg(test)]
impl EventParser {
    /// How many bytes of the event being read's data are kept.
    pub(super) fn data_kept(&self) -> usize {
        self.event.data.len()
    }
}
