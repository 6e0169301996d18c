//! The CLI's own lines on stderr (its notices, `[tool]` lines, prompts) and the libraries'
//! warnings ([`crate::warnings`]), written so that each starts on a line of its own: with the
//! "thinking" spinner's line cleared while it is written ([`crate::spinner::suspend`], the
//! spinner drawn again after it), and after a line feed when a line is left open, such as
//! the answer streaming to the terminal (`assistant: Hel`) or a prompt waiting for input.
//!
//! Where a line is open is tracked from what the CLI writes: on stderr through this module,
//! on stdout through [`crate::output`]. When both are terminals they are taken to be the same
//! screen, so the answer's text on stdout leaves stderr's line open too; otherwise each has
//! its own line (stdout piped to a file does not open a line on the terminal).
//!
//! Use `errln!` rather than `eprintln!` for a line written while a run may be
//! going on.

use std::fmt;
use std::io::{IsTerminal, Write};
use std::sync::{LazyLock, Mutex, PoisonError};

/// Which of the process's outputs was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
}

/// Whether each output's last line is open (its last byte written was not a line feed).
#[derive(Debug, Default)]
struct OpenLines {
    /// Whether stdout and stderr show on one screen, so that a line either leaves open is
    /// open on both.
    shared: bool,
    stdout: bool,
    stderr: bool,
}

impl OpenLines {
    fn new(shared: bool) -> Self {
        OpenLines {
            shared,
            ..OpenLines::default()
        }
    }

    /// Records that `text` was written on `stream` (nothing, for empty text).
    fn wrote(&mut self, stream: Stream, text: &str) {
        let Some(last) = text.chars().last() else {
            return;
        };
        let open = last != '\n';
        if self.shared {
            self.stdout = open;
            self.stderr = open;
        } else {
            match stream {
                Stream::Stdout => self.stdout = open,
                Stream::Stderr => self.stderr = open,
            }
        }
    }

    /// Records that the person ended the line on the terminal (typed Enter after a prompt).
    fn ended_by_input(&mut self) {
        self.stderr = false;
        if self.shared {
            self.stdout = false;
        }
    }

    /// What a line written on stderr starts with: a line feed when stderr's line is open.
    fn line_start(&self) -> &'static str {
        if self.stderr { "\n" } else { "" }
    }
}

static OPEN_LINES: LazyLock<Mutex<OpenLines>> = LazyLock::new(|| {
    let shared = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    Mutex::new(OpenLines::new(shared))
});

/// Writes `text` on stdout with `write` (which returns whether it wrote), recording where the
/// line is left. Held while writing, so that a line on stderr cannot come between the
/// write and its record.
pub fn on_stdout<E>(text: &str, write: impl FnOnce(&str) -> Result<(), E>) -> Result<(), E> {
    let mut open = OPEN_LINES.lock().unwrap_or_else(PoisonError::into_inner);
    let written = write(text);
    if written.is_ok() {
        open.wrote(Stream::Stdout, text);
    }
    written
}

/// Writes `line` (which ends with a line feed) on stderr on a line of its own: the spinner
/// cleared while it is written, a line feed first when a line is left open.
pub fn write_line(line: &str) {
    write_stderr(line);
}

/// Writes `text` on stderr, a line feed first when a line is left open, with the spinner's
/// line cleared.
fn write_stderr(text: &str) {
    crate::spinner::suspend(|| {
        let mut open = OPEN_LINES.lock().unwrap_or_else(PoisonError::into_inner);
        let text = format!("{}{text}", open.line_start());
        let mut stderr = std::io::stderr().lock();
        // Nowhere to say that stderr cannot be written.
        let _ = stderr.write_all(text.as_bytes());
        let _ = stderr.flush();
        open.wrote(Stream::Stderr, &text);
    });
}

/// `eprintln!`'s work for `errln!`.
pub fn line(text: fmt::Arguments<'_>) {
    let mut line = text.to_string();
    line.push('\n');
    write_line(&line);
}

/// Writes `text` on stderr, leaving its line open for what follows: a prompt (`you: `) or the
/// answer's label (`assistant: `). It starts on a line of its own, like [`line()`]'s.
pub fn open_line(text: &str) {
    write_stderr(text);
}

/// Ends the line left open, if one is (a prompt that got no input: end of input, Ctrl-C).
pub fn end_open_line() {
    write_stderr("");
}

/// Ends the line another program on the terminal (the editor) may have left open: what it
/// wrote is not seen here, so the terminal is asked where its cursor is
/// ([`crate::cursor_column`]). A line feed is written only when the cursor is not at the start
/// of a line (a script printed without one), or the terminal does not say: an editor that
/// restored the screen as it was (vi, nano), or ended its own lines (ed), leaves no empty line.
pub fn end_a_program_s_line() {
    if !std::io::stderr().is_terminal() {
        return;
    }
    crate::spinner::suspend(|| {
        let mut open = OPEN_LINES.lock().unwrap_or_else(PoisonError::into_inner);
        if crate::cursor_column::at_line_start() != Some(true) {
            let mut stderr = std::io::stderr().lock();
            // Nowhere to say that stderr cannot be written.
            let _ = stderr.write_all(b"\n");
            let _ = stderr.flush();
        }
        open.wrote(Stream::Stderr, "\n");
    });
}

/// Records that a line of input was read after a prompt: the person's Enter ended the line.
pub fn input_read() {
    OPEN_LINES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .ended_by_input();
}

/// `eprintln!` through [`line()`]: on a line of its own, never sharing it with the spinner or
/// an answer still streaming.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::terminal_lines::line(format_args!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::{OpenLines, Stream};

    #[test]
    fn on_one_screen_an_answer_left_open_opens_the_warnings_line() {
        let mut lines = OpenLines::new(true);
        assert_eq!(lines.line_start(), "");
        lines.wrote(Stream::Stderr, "assistant: ");
        assert_eq!(lines.line_start(), "\n");
        lines.wrote(Stream::Stdout, "Hel");
        assert_eq!(lines.line_start(), "\n");
        lines.wrote(Stream::Stdout, "lo\n");
        assert_eq!(lines.line_start(), "");
        // Nothing written changes nothing.
        lines.wrote(Stream::Stdout, "more");
        lines.wrote(Stream::Stdout, "");
        assert_eq!(lines.line_start(), "\n");
        lines.wrote(Stream::Stderr, "\nreins: warning: w (t)\n");
        assert_eq!(lines.line_start(), "");
    }

    #[test]
    fn stdout_elsewhere_leaves_the_terminal_line_alone() {
        let mut lines = OpenLines::new(false);
        lines.wrote(Stream::Stdout, "an answer without its line feed");
        assert_eq!(lines.line_start(), "");
        lines.wrote(Stream::Stderr, "assistant: ");
        assert_eq!(lines.line_start(), "\n");
        // The answer's line feed goes to the file, not to the terminal's line.
        lines.wrote(Stream::Stdout, "\n");
        assert_eq!(lines.line_start(), "\n");
        lines.wrote(Stream::Stderr, "\n[done] run r\n");
        assert_eq!(lines.line_start(), "");
    }

    #[test]
    fn a_prompt_answered_ends_its_line() {
        let mut lines = OpenLines::new(true);
        lines.wrote(Stream::Stderr, "you: ");
        assert_eq!(lines.line_start(), "\n");
        lines.ended_by_input();
        assert_eq!(lines.line_start(), "");
    }
}
