//! Where the log's lines go: each written whole into a buffer, then to the writer, and a line
//! a failed write cut short ended before the next, so that it never swallows it.

use super::line::Line;
use std::io::{self, Write};

/// The writer, the buffer each line is written into first (kept, so a line costs no
/// allocation of its own), and whether the last line was cut short.
pub(super) struct Sink {
    writer: Box<dyn Write + Send>,
    line: Vec<u8>,
    /// The last line was cut short by a failed write: the next one ends it first.
    torn: bool,
}

impl Sink {
    pub(super) fn new(writer: Box<dyn Write + Send>) -> Self {
        Sink {
            writer,
            line: Vec::new(),
            torn: false,
        }
    }

    /// Writes `line` and a newline, and flushes; a failure is logged.
    pub(super) fn write(&mut self, line: &Line<'_>) {
        let text = &mut self.line;
        text.clear();
        // A cut line is ended first, so that it stands alone and this one stays whole.
        if self.torn {
            text.push(b'\n');
        }
        if let Err(error) = line.write_json(text) {
            tracing::warn!(%error, "an audit line could not be written as JSON");
            return;
        }
        escape_unicode_line_breaks(text);
        text.push(b'\n');
        let (written, result) = write_counted(self.writer.as_mut(), text);
        match result.and_then(|()| self.writer.flush()) {
            Ok(()) => self.torn = false,
            Err(error) => {
                // Nothing written leaves a cut line before this one still open; part of the
                // text written cuts this one (its newline first ends the one before).
                self.torn = written < text.len() && (self.torn || written > 0);
                tracing::warn!(%error, run_id = line.run_id, "the audit log could not be written");
            }
        }
    }
}

/// The characters besides `\n` that some readers end a line at (Python's `str.splitlines`,
/// editors), with the JSON escapes that stand for them. JSON lets them stand unescaped in a
/// string, where a tool's argument or error (text a model wrote) could put them: a reader
/// would see the line cut in two, neither half JSON, and skip it.
const UNICODE_LINE_BREAKS: [(&str, &[u8]); 3] = [
    ("\u{85}", b"\\u0085"),
    ("\u{2028}", b"\\u2028"),
    ("\u{2029}", b"\\u2029"),
];

/// `line`, JSON text, with each of [`UNICODE_LINE_BREAKS`] escaped: the same JSON, on one
/// line for every reader. They can only be in its strings (the rest of a line is ASCII),
/// where an escape reads back as the character.
fn escape_unicode_line_breaks(line: &mut Vec<u8>) {
    // Their UTF-8 starts with one of these two bytes; most lines hold neither.
    if memchr::memchr2(0xC2, 0xE2, line).is_none() {
        return;
    }
    let mut escaped = Vec::with_capacity(line.len() + 8);
    let mut rest = line.as_slice();
    'bytes: while let Some((&first, after)) = rest.split_first() {
        for (character, escape) in UNICODE_LINE_BREAKS {
            if let Some(tail) = rest.strip_prefix(character.as_bytes()) {
                escaped.extend_from_slice(escape);
                rest = tail;
                continue 'bytes;
            }
        }
        escaped.push(first);
        rest = after;
    }
    *line = escaped;
}

/// Writes all of `bytes` as `write_all` does, and says how many were written when it failed.
fn write_counted(writer: &mut dyn Write, bytes: &[u8]) -> (usize, io::Result<()>) {
    let mut written = 0;
    while let Some(rest) = bytes.get(written..).filter(|rest| !rest.is_empty()) {
        match writer.write(rest) {
            Ok(0) => return (written, Err(io::ErrorKind::WriteZero.into())),
            Ok(n) => written += n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return (written, Err(error)),
        }
    }
    (written, Ok(()))
}
