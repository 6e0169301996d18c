//! One JSON-RPC message a line, read bounded from a peer's output: the server's standard
//! output for the client (`stdio.rs`), the client's standard input for a served tool set
//! (`serve/stdio.rs`). At most [`MAX_MESSAGE_BYTES`] of a line is kept, then only its start,
//! so a line of any length takes bounded memory and can still be answered by its `id`. And
//! a message written as a line ([`json_line`]), for either side.

use crate::weighed::{MAX_MESSAGE_BYTES, TOO_LONG_HEAD_BYTES};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The byte-order mark a line may start with (RFC 8259 lets a parser ignore it).
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The line being read: kept across reads, since rmcp stops reading in the middle of one
/// whenever it has something to send.
#[derive(Default)]
pub(crate) struct LineBuffer {
    kept: Vec<u8>,
    /// The line's length so far, counting what was not kept.
    length: usize,
}

/// A line read.
pub(crate) enum ReadLine {
    /// A whole line, in the buffer.
    Whole,
    /// A line over [`MAX_MESSAGE_BYTES`]: its start is in the buffer.
    TooLong,
    /// The input ended (or could not be read).
    End,
}

impl LineBuffer {
    /// Reads up to the end of the next line from `input`, keeping at most
    /// [`MAX_MESSAGE_BYTES`] of it (then only its start). Cancellation-safe: what was read
    /// of a line stays in the buffer for the next call. A line read is taken with
    /// [`take`](LineBuffer::take) before the next is read.
    pub(crate) async fn read_from<R: AsyncBufRead + Unpin>(&mut self, input: &mut R) -> ReadLine {
        loop {
            let available = match input.fill_buf().await {
                Ok(available) if !available.is_empty() => available,
                // The end, or an error reading: either way the peer said its last. A last
                // line without its newline is a line all the same (as rmcp's codec reads it).
                _ if self.length > MAX_MESSAGE_BYTES => return ReadLine::TooLong,
                _ if self.length > 0 => return ReadLine::Whole,
                _ => return ReadLine::End,
            };
            let newline = available.iter().position(|byte| *byte == b'\n');
            let content = &available[..newline.unwrap_or(available.len())];
            if self.length.saturating_add(content.len()) <= MAX_MESSAGE_BYTES {
                self.kept.extend_from_slice(content);
            } else if self.length <= MAX_MESSAGE_BYTES {
                // The line just became too long: only its start is kept, and its memory given back.
                self.kept.extend_from_slice(content);
                self.kept.truncate(TOO_LONG_HEAD_BYTES);
                self.kept.shrink_to_fit();
            }
            self.length = self.length.saturating_add(content.len());
            let consumed = newline.map_or(available.len(), |at| at + 1);
            input.consume(consumed);
            if newline.is_some() {
                return if self.length > MAX_MESSAGE_BYTES {
                    ReadLine::TooLong
                } else {
                    ReadLine::Whole
                };
            }
        }
    }

    /// The line read (its start, when too long), without the CR and byte-order mark around
    /// it, and its whole length; the buffer is left empty for the next line.
    pub(crate) fn take(&mut self) -> (Vec<u8>, usize) {
        let line = std::mem::take(self);
        let mut text = line.kept;
        if text.ends_with(b"\r") {
            text.pop();
        }
        if text.starts_with(UTF8_BOM) {
            text.drain(..UTF8_BOM.len());
        }
        (text, line.length)
    }
}

/// `message` as JSON text and the line feed that ends it.
pub(crate) fn json_line(message: &impl serde::Serialize) -> serde_json::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    Ok(line)
}
