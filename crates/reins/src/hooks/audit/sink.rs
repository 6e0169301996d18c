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
