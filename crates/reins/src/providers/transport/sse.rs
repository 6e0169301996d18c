//! An incremental Server-Sent Events decoder: bytes in, events out, in one pass.
//!
//! It follows the WHATWG event-stream rules that matter for model APIs: lines end in `\n`,
//! `\r\n` or `\r`; `data:` lines of one event join with `\n`; a blank line ends the event;
//! lines starting with `:` are comments; one space after the colon is dropped; `event:` names
//! the event; one byte order mark starting the stream is dropped. `id:` and `retry:` are read
//! and ignored. Input may be split anywhere, even inside a UTF-8 sequence or between `\r` and
//! `\n`.
//!
//! Memory is bounded: a line longer than the line limit, or an event whose data grows past
//! the event limit, is an error as soon as the limit is crossed (a server that never sends a
//! newline cannot make the decoder buffer without end).

use memchr::memchr2;

/// One decoded event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` name, if the event had one.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Why the byte stream cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// The bytes are not a valid event stream.
    #[error("invalid server-sent events: {0}")]
    Invalid(String),
    /// A line grew past the line limit without ending.
    #[error("a line of the event stream is longer than {limit} bytes")]
    LineTooLong {
        /// The limit, in bytes.
        limit: usize,
    },
    /// An event's data grew past the event limit.
    #[error("an event of the stream is larger than {limit} bytes")]
    EventTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
}

/// Decodes an event stream incrementally. Feed chunks with [`SseDecoder::feed`]; call
/// [`SseDecoder::finish`] at the end of the stream to learn whether it ended mid-event.
#[derive(Debug)]
pub struct SseDecoder {
    max_line: usize,
    max_event: usize,
    /// Bytes of an unfinished line.
    partial: Vec<u8>,
    /// The last chunk ended with `\r`: a `\n` starting the next chunk belongs to it.
    after_cr: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    /// No line has been read yet: a byte order mark starting it is dropped.
    first_line: bool,
    /// The first line that is no event-stream field (a JSON error body sent as an event
    /// stream), excerpted: what the server meant, for the error of a stream that then ends.
    stray: Option<String>,
}

impl Default for SseDecoder {
    fn default() -> Self {
        SseDecoder::with_limits(usize::MAX, usize::MAX)
    }
}

impl SseDecoder {
    /// A decoder at the start of a stream, without limits.
    pub fn new() -> Self {
        SseDecoder::default()
    }

    /// A decoder that fails on a line longer than `max_line` bytes or an event whose data is
    /// larger than `max_event` bytes.
    pub fn with_limits(max_line: usize, max_event: usize) -> Self {
        SseDecoder {
            max_line,
            max_event,
            partial: Vec::new(),
            after_cr: false,
            event: None,
            data: String::new(),
            has_data: false,
            first_line: true,
            stray: None,
        }
    }

    /// The first line that was not part of the event-stream format (neither a field nor a
    /// comment), excerpted; such lines are skipped, as the standard says, but a stream that
    /// ends without its answer says what it held.
    pub fn stray_line(&self) -> Option<&str> {
        self.stray.as_deref()
    }

    /// Decodes `chunk`, calling `emit` for every event it completes.
    pub fn feed(&mut self, chunk: &[u8], mut emit: impl FnMut(SseEvent)) -> Result<(), SseError> {
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(end) = memchr2(b'\n', b'\r', rest) {
            let line_end = end;
            let mut next = end + 1;
            if rest[end] == b'\r' {
                if end + 1 < rest.len() {
                    if rest[end + 1] == b'\n' {
                        next = end + 2;
                    }
                } else {
                    self.after_cr = true;
                }
            }
            if self.partial.len() + line_end > self.max_line {
                return Err(SseError::LineTooLong {
                    limit: self.max_line,
                });
            }
            if self.partial.is_empty() {
                self.line(&rest[..line_end], &mut emit)?;
            } else {
                self.partial.extend_from_slice(&rest[..line_end]);
                let line = std::mem::take(&mut self.partial);
                self.line(&line, &mut emit)?;
                self.partial = line;
                self.partial.clear();
            }
            rest = &rest[next..];
        }
        if self.partial.len() + rest.len() > self.max_line {
            return Err(SseError::LineTooLong {
                limit: self.max_line,
            });
        }
        self.partial.extend_from_slice(rest);
        Ok(())
    }

    /// Ends the stream. A final event without its closing blank line is still delivered
    /// (servers often omit it).
    pub fn finish(&mut self, mut emit: impl FnMut(SseEvent)) -> Result<(), SseError> {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line, &mut emit)?;
        }
        self.dispatch(&mut emit);
        Ok(())
    }

    fn line(&mut self, line: &[u8], emit: &mut impl FnMut(SseEvent)) -> Result<(), SseError> {
        // The standard drops one leading BOM: left in, it would hide the first field's name
        // and silently lose the first event.
        let line = if std::mem::take(&mut self.first_line) {
            line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line)
        } else {
            line
        };
        if line.is_empty() {
            self.dispatch(emit);
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                let value = std::str::from_utf8(value).map_err(|_| {
                    SseError::Invalid(format!(
                        "a data line is not UTF-8: {}",
                        super::excerpt(&String::from_utf8_lossy(line))
                    ))
                })?;
                if self.data.len() + value.len() + 1 > self.max_event {
                    return Err(SseError::EventTooLarge {
                        limit: self.max_event,
                    });
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            b"event" => {
                let value = std::str::from_utf8(value)
                    .map_err(|_| SseError::Invalid("an event name is not UTF-8".to_owned()))?;
                self.event = Some(value.to_owned());
            }
            b"id" | b"retry" => {}
            _ => {
                if self.stray.is_none() {
                    self.stray = Some(super::excerpt(&String::from_utf8_lossy(line)));
                }
            }
        }
        Ok(())
    }

    fn dispatch(&mut self, emit: &mut impl FnMut(SseEvent)) {
        if self.has_data {
            emit(SseEvent {
                event: self.event.take(),
                data: std::mem::take(&mut self.data),
            });
        }
        self.event = None;
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(input: &[u8], piece: usize) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::new();
        let mut events = Vec::new();
        for chunk in input.chunks(piece.max(1)) {
            decoder.feed(chunk, |e| events.push(e)).unwrap();
        }
        decoder.finish(|e| events.push(e)).unwrap();
        events
    }

    #[test]
    fn events_decode_the_same_however_the_input_is_split() {
        let input = "event: message_start\ndata: {\"a\":1}\n\n: keep-alive\n\ndata: line one\r\ndata:line two\r\n\r\ndata: é ü\r\rdata: [DONE]\n\n".as_bytes();
        let expected = vec![
            SseEvent {
                event: Some("message_start".into()),
                data: "{\"a\":1}".into(),
            },
            SseEvent {
                event: None,
                data: "line one\nline two".into(),
            },
            SseEvent {
                event: None,
                data: "é ü".into(),
            },
            SseEvent {
                event: None,
                data: "[DONE]".into(),
            },
        ];
        for piece in 1..input.len() {
            assert_eq!(
                decode_in_pieces(input, piece),
                expected,
                "piece size {piece}"
            );
        }
    }

    #[test]
    fn a_last_event_without_a_blank_line_is_delivered() {
        assert_eq!(
            decode_in_pieces(b"data: tail", 3),
            vec![SseEvent {
                event: None,
                data: "tail".into()
            }]
        );
    }

    #[test]
    fn a_line_that_never_ends_fails_at_the_limit() {
        let mut decoder = SseDecoder::with_limits(64, 1024);
        assert_eq!(decoder.feed(&[b'x'; 40], |_| {}), Ok(()));
        assert_eq!(
            decoder.feed(&[b'x'; 40], |_| {}),
            Err(SseError::LineTooLong { limit: 64 })
        );
        let mut decoder = SseDecoder::with_limits(64, 1024);
        assert_eq!(
            decoder.feed(&[b'x'; 100], |_| {}),
            Err(SseError::LineTooLong { limit: 64 })
        );
    }

    #[test]
    fn an_event_of_many_lines_fails_at_the_event_limit() {
        let mut decoder = SseDecoder::with_limits(64, 100);
        let error = decoder.feed(&b"data: 0123456789\n".repeat(20), |_| {});
        assert_eq!(error, Err(SseError::EventTooLarge { limit: 100 }));
    }

    #[test]
    fn invalid_utf8_is_an_error_naming_the_line() {
        let mut decoder = SseDecoder::new();
        let error = decoder.feed(b"data: \xff\xfe\n\n", |_| {}).unwrap_err();
        assert!(error.to_string().contains("not UTF-8"));
    }

    #[test]
    fn a_leading_byte_order_mark_is_ignored_however_the_input_is_split() {
        let input = "\u{feff}data: first\n\ndata: \u{feff}kept\n\n".as_bytes();
        for piece in 1..input.len() {
            let data: Vec<String> = decode_in_pieces(input, piece)
                .into_iter()
                .map(|event| event.data)
                .collect();
            assert_eq!(data, ["first", "\u{feff}kept"], "piece size {piece}");
        }
    }

    #[test]
    fn the_first_line_that_is_no_field_is_kept_for_errors() {
        let mut decoder = SseDecoder::new();
        let input = ": comment\nid: 7\nretry: 10\n{\"error\": \"quota\"}\nnonsense\n";
        decoder.feed(input.as_bytes(), |_| {}).unwrap();
        assert_eq!(decoder.stray_line(), Some("{\"error\": \"quota\"}"));
        let mut clean = SseDecoder::new();
        clean.feed(b"id: 1\nretry: 5\ndata: x\n\n", |_| {}).unwrap();
        assert_eq!(clean.stray_line(), None);
    }
}
