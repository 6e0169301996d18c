//! Text a model, a tool or a server wrote, made safe to show a person.
//!
//! A model's answer, a tool's result or a server's error can carry characters a terminal acts
//! on instead of showing: an escape sequence that clears the screen, moves the cursor, hides
//! the text after it, sets the window title or writes to the clipboard (`ESC ] 52`), a
//! carriage return that writes over the start of a line, or a bidirectional override
//! (`U+202E`) that shows the characters after it in reverse order. Shown
//! through [`printable`], each of them appears as its `\uXXXX` escape instead, so what a
//! person reads — at an approval prompt above all — is what the text holds.
//!
//! ```
//! use reins::text::printable;
//!
//! let answer = "Done.\u{1b}[2J\u{1b}[HApproved by admin";
//! assert_eq!(printable(answer), "Done.\\u001b[2J\\u001b[HApproved by admin");
//! // Ordinary text, line breaks and tabs included, is shown as it is (and not copied).
//! assert!(matches!(printable("two\nlines\tand ünïcode"), std::borrow::Cow::Borrowed(_)));
//! ```

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every character a terminal would act on rather than show written as its
/// `\uXXXX` escape: control characters other than line feed and tab (a carriage return is
/// kept only right before a line feed), and the characters that reorder bidirectional text
/// (`U+061C`, `U+200E`, `U+200F`, `U+202A`–`U+202E`, `U+2066`–`U+2069`). Borrowed when
/// nothing needed escaping.
pub fn printable(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    // A carriage return is one byte, so the byte after it is at `at + 1`.
    let acts = |at: usize, c: char| acts_on_terminal(c, bytes.get(at + 1).copied());
    let Some(first) = text.char_indices().find(|&(at, c)| acts(at, c)) else {
        return Cow::Borrowed(text);
    };
    let mut shown = String::with_capacity(text.len() + 16);
    shown.push_str(&text[..first.0]);
    for (at, c) in text[first.0..].char_indices() {
        if acts(first.0 + at, c) {
            escape(&mut shown, c);
        } else {
            shown.push(c);
        }
    }
    Cow::Owned(shown)
}

/// Text streamed in pieces (a model's deltas) made [`printable`] piece by piece: a carriage
/// return at the end of one piece is held until the next shows whether a line feed follows.
///
/// ```
/// use reins::text::PrintableStream;
///
/// let mut stream = PrintableStream::default();
/// let mut shown = String::new();
/// for delta in ["line one\r", "\nline two\u{1b}", "[31m"] {
///     shown.push_str(&stream.push(delta));
/// }
/// shown.push_str(stream.finish());
/// assert_eq!(shown, "line one\r\nline two\\u001b[31m");
/// ```
#[derive(Debug, Default)]
pub struct PrintableStream {
    held_carriage_return: bool,
}

impl PrintableStream {
    /// The printable form of `piece`, with a carriage return held back from the previous
    /// piece put before it.
    pub fn push<'a>(&mut self, piece: &'a str) -> Cow<'a, str> {
        if piece.is_empty() {
            // Nothing to show yet, nor to tell what follows a held carriage return.
            return Cow::Borrowed(piece);
        }
        let held = std::mem::take(&mut self.held_carriage_return);
        let body = piece.strip_suffix('\r');
        self.held_carriage_return = body.is_some();
        let body = body.unwrap_or(piece);
        let shown = printable(body);
        if !held {
            return shown;
        }
        let mut text = String::with_capacity(shown.len() + 6);
        if body.starts_with('\n') {
            text.push('\r');
        } else {
            escape(&mut text, '\r');
        }
        text.push_str(&shown);
        Cow::Owned(text)
    }

    /// What is still held when the stream ends: an escaped carriage return, or nothing.
    pub fn finish(&mut self) -> &'static str {
        if std::mem::take(&mut self.held_carriage_return) {
            "\\u000d"
        } else {
            ""
        }
    }
}

/// Whether a terminal acts on `c` rather than showing it; `next` is the byte after it (a
/// carriage return before a line feed is an ordinary line ending).
fn acts_on_terminal(c: char, next: Option<u8>) -> bool {
    match c {
        '\n' | '\t' => false,
        '\r' => next != Some(b'\n'),
        '\u{061C}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}' => true,
        c => c.is_control(),
    }
}

fn escape(shown: &mut String, c: char) {
    // Writing to a `String` cannot fail.
    let _ = write!(shown, "\\u{:04x}", c as u32);
}

/// What kind of JSON value `value` is, as a message to a person names it (`"a string"`,
/// `"an array"`, `"null"`, …): for saying what arrived where an object was wanted, without
/// quoting a value that may be large.
///
/// ```
/// use reins::text::json_kind;
///
/// assert_eq!(json_kind(&serde_json::json!([1, 2])), "an array");
/// ```
pub fn json_kind(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_controls_are_shown_as_escapes() {
        let cases = [
            ("\u{1b}]52;c;ZXZpbA==\u{7}", "\\u001b]52;c;ZXZpbA==\\u0007"),
            ("safe\rrm -rf /", "safe\\u000drm -rf /"),
            ("a\u{8}b\u{7f}c\u{9b}2J", "a\\u0008b\\u007fc\\u009b2J"),
            ("cat \u{202e}txt.sh", "cat \\u202etxt.sh"),
            (
                "\u{2066}x\u{2069}\u{200f}\u{61c}",
                "\\u2066x\\u2069\\u200f\\u061c",
            ),
            ("end\r", "end\\u000d"),
            ("\0", "\\u0000"),
            // The byte after a carriage return decides, not a character's low bits.
            ("\r\u{10a}", "\\u000d\u{10a}"),
        ];
        for (text, shown) in cases {
            assert_eq!(printable(text), shown, "{text:?}");
        }
    }

    #[test]
    fn ordinary_text_is_borrowed_unchanged() {
        for text in [
            "",
            "plain",
            "lines\r\nand\ttabs\n",
            "日本語 ✓ emoji 🦀",
            "x\u{200b}y",
        ] {
            assert!(
                matches!(printable(text), Cow::Borrowed(t) if t == text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_carriage_return_before_a_line_feed_in_the_next_piece_is_a_line_ending() {
        let mut stream = PrintableStream::default();
        assert_eq!(stream.push("a\r"), "a");
        assert_eq!(stream.push(""), "");
        assert_eq!(stream.push("\nb\r"), "\r\nb");
        assert_eq!(stream.push("c"), "\\u000dc");
        assert_eq!(stream.push("\r"), "");
        assert_eq!(stream.finish(), "\\u000d");
        assert_eq!(stream.finish(), "");
    }
}
