//! An error in an agent file, pointing at its line: `file:line:column: error: message`, the
//! line, and a caret under the mistake. A warning is shown the same way, `warning:` in place of
//! `error:`: something that may fail later but need not (a program not installed where the
//! file is checked), which fails no command.
//!
//! The quoted line never shows a secret: whatever on it may be one (a URL's user info and
//! query, a credential's value) is masked first (`masking.rs`), `*` for each character so
//! that the caret still points where it did; a value the message quotes, likewise.

use super::masking;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// One mistake in an agent file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    path: PathBuf,
    /// One-based line and column of the mistake, with the line's text, when it has a place.
    place: Option<(usize, usize, String, usize)>,
    message: String,
    /// A warning, not an error: the file is used all the same.
    warning: bool,
}

impl Diagnostic {
    /// A mistake in `source` (the file at `path`) at byte range `span`, its quoted line
    /// with what may be a secret masked, and in `message` the text masked there.
    pub fn new(
        path: &Path,
        source: &str,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> Self {
        let mut message = masking::masked_urls(&message.into());
        let place = span.map(|span| {
            let (line, column, text, width) = locate(source, span);
            let masked = masking::masked(source)
                .split('\n')
                .nth(line - 1)
                .map_or_else(String::new, |masked| {
                    masked.trim_end_matches('\r').to_owned()
                });
            // The message may quote the mistaken value (`invalid type: string "…"`).
            for secret in hidden_runs(&text, &masked) {
                message = message.replace(&secret, &"*".repeat(secret.chars().count()));
            }
            (line, column, masked, width)
        });
        Diagnostic {
            path: path.to_path_buf(),
            place,
            message,
            warning: false,
        }
    }

    /// The same diagnostic as a warning: said, but failing nothing.
    pub fn into_warning(mut self) -> Self {
        self.warning = true;
        self
    }

    /// Whether it is an error (the file cannot be used), not a warning.
    pub fn is_error(&self) -> bool {
        !self.warning
    }

    /// The same mistake with the mistaken text masked in the quoted line (`*` for each
    /// character): for a value that may be a secret.
    pub fn concealed(mut self) -> Self {
        if let Some((_, column, text, width)) = &mut self.place {
            *text = text
                .chars()
                .enumerate()
                .map(|(at, c)| {
                    let inside = at + 1 >= *column && at + 1 < *column + *width;
                    if inside { '*' } else { c }
                })
                .collect();
        }
        self
    }

    /// The one-based line of the mistake, if it has one.
    pub fn line(&self) -> Option<usize> {
        self.place.as_ref().map(|(line, ..)| *line)
    }
}

/// A parse error's message in the file's terms, not Rust's: serde names the Rust types a
/// value was read into (`expected usize`, `expected struct ModelConfig`, `a sequence`),
/// which a person writing TOML cannot act on.
pub fn plain(message: &str) -> String {
    const TYPES: [(&str, &str); 11] = [
        ("usize", "a whole number (0 or more)"),
        ("u64", "a whole number (0 or more)"),
        ("u32", "a whole number (0 or more, below 2^32)"),
        ("u16", "a whole number (0 to 65535)"),
        ("u8", "a whole number (0 to 255)"),
        ("i64", "a whole number"),
        ("i32", "a whole number"),
        ("f64", "a number"),
        ("f32", "a number"),
        ("a sequence", "a list (`[...]`)"),
        ("a map", "a table"),
    ];
    let mut text = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("expected ") {
        let (before, after) = rest.split_at(at + "expected ".len());
        text.push_str(before);
        rest = after;
        if let Some(name) = rest.strip_prefix("struct ") {
            // `expected struct ModelConfig`: a table was wanted.
            let end = name
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(name.len());
            text.push_str("a table");
            rest = &name[end..];
            continue;
        }
        for (rust, plain) in TYPES {
            let Some(after) = rest.strip_prefix(rust) else {
                continue;
            };
            if after
                .chars()
                .next()
                .is_none_or(|c| !c.is_ascii_alphanumeric())
            {
                text.push_str(plain);
                rest = after;
                break;
            }
        }
    }
    text.push_str(rest);
    let text = text
        .replacen("invalid type: map,", "invalid type: table,", 1)
        .replacen("invalid type: sequence,", "invalid type: list,", 1)
        .replacen("invalid type: floating point", "invalid type: number", 1);
    let text = super::suggest::with_suggestion(text);
    if text == "missing field `model`" {
        // The one table every agent needs: say what goes in it.
        return "missing `[model]`: add a `[model]` table with `provider` (local, openai, \
                anthropic, gemini or openai-compatible) and the model's `name`"
            .to_owned();
    }
    text
}

/// Line, column, the line's text and the width to underline, for a byte range.
fn locate(source: &str, span: Range<usize>) -> (usize, usize, String, usize) {
    let start = floor_char_boundary(source, span.start.min(source.len()));
    let before = &source[..start];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line_end = source[start..]
        .find('\n')
        .map_or(source.len(), |i| start + i);
    let text = source[line_start..line_end]
        .trim_end_matches('\r')
        .to_owned();
    let column = source[line_start..start].chars().count() + 1;
    let end = floor_char_boundary(source, span.end.clamp(start, line_end));
    let width = source[start..end].chars().count().max(1);
    (line, column, text, width)
}

/// The runs of `text` that `masked` (the same line masked) hides, longest first, those of four
/// characters or more: shorter ones would mask ordinary words of a message.
fn hidden_runs(text: &str, masked: &str) -> Vec<String> {
    let mut runs = Vec::new();
    let mut run = String::new();
    for (shown, masked) in text.chars().zip(masked.chars()) {
        if masked == '*' && shown != '*' {
            run.push(shown);
        } else if !run.is_empty() {
            runs.push(std::mem::take(&mut run));
        }
    }
    runs.push(run);
    runs.retain(|run| run.chars().count() >= 4);
    runs.sort_by_key(|run| std::cmp::Reverse(run.len()));
    runs
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while index > 0 && !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.warning { "warning" } else { "error" };
        match &self.place {
            None => write!(f, "{}: {kind}: {}", self.path.display(), self.message),
            Some((line, column, text, width)) => {
                let gutter = line.to_string().len();
                writeln!(
                    f,
                    "{}:{line}:{column}: {kind}: {}",
                    self.path.display(),
                    self.message
                )?;
                writeln!(f, "{:gutter$} |", "")?;
                writeln!(f, "{line} | {text}")?;
                write!(
                    f,
                    "{:gutter$} | {}{}",
                    "",
                    " ".repeat(column - 1),
                    "^".repeat(*width)
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_at_the_line_and_column_of_the_span() {
        let source = "a = 1\nbad_key = 2\n";
        let diagnostic = Diagnostic::new(Path::new("agent.toml"), source, Some(6..13), "unknown");
        assert_eq!(diagnostic.line(), Some(2));
        assert_eq!(
            diagnostic.to_string(),
            "agent.toml:2:1: error: unknown\n  |\n2 | bad_key = 2\n  | ^^^^^^^"
        );
    }

    #[test]
    fn rust_type_names_become_the_file_s_words() {
        assert_eq!(
            plain("invalid type: string \"six\", expected usize"),
            "invalid type: string \"six\", expected a whole number (0 or more)"
        );
        assert_eq!(
            plain("invalid type: string \"gpt\", expected struct ModelConfig"),
            "invalid type: string \"gpt\", expected a table"
        );
        assert_eq!(
            plain("invalid type: map, expected a sequence"),
            "invalid type: table, expected a list (`[...]`)"
        );
        assert_eq!(
            plain("invalid type: string \"x\", expected f64"),
            "invalid type: string \"x\", expected a number"
        );
        assert_eq!(
            plain("unknown field `nmae`, expected one of `name`, `path`"),
            "unknown field `nmae`, expected one of `name`, `path` (did you mean `name`?)"
        );
    }

    #[test]
    fn a_concealed_mistake_shows_its_place_but_not_its_text() {
        let source = "key_env = \"sk-live-1\" # here\n";
        let diagnostic =
            Diagnostic::new(Path::new("a.toml"), source, Some(10..21), "a value").concealed();
        assert_eq!(
            diagnostic.to_string(),
            "a.toml:1:11: error: a value\n  |\n1 | key_env = *********** # here\n  |           ^^^^^^^^^^^"
        );
    }
}
