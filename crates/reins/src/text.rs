//! Text a model, a tool or a server wrote, made safe to show a person.
//!
//! A model's answer, a tool's result or a server's error can carry characters a terminal acts
//! on instead of showing: an escape sequence that clears the screen, moves the cursor, hides
//! the text after it, sets the window title or writes to the clipboard (`ESC ] 52`), a
//! carriage return that writes over the start of a line, or a bidirectional override
//! (`U+202E`) that shows the characters after it in reverse order. It can also carry text a
//! terminal or a browser shows as nothing at all while a model reads it: Unicode tag
//! characters (`U+E0020`–`U+E007E` spell ASCII invisibly), zero-width spaces, word joiners,
//! runs of variation selectors. Shown through [`printable`], each of them appears as its
//! `\uXXXX` escape instead, so what a person reads — at an approval prompt above all — is
//! what the text holds.
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

/// `text` with every character a terminal would act on rather than show, or that shows as
/// nothing, written as its `\uXXXX` escape (as JSON writes it: a pair of them above
/// `U+FFFF`, so shown inside a JSON string it reads back as the same character): control
/// characters other than line feed and tab (a carriage return is kept only right before a line
/// feed), the characters that reorder bidirectional text (`U+061C`, `U+200E`, `U+200F`,
/// `U+202A`–`U+202E`, `U+2066`–`U+2069`), and invisible ones that can hide text: tag
/// characters, zero-width spaces, word joiners, byte-order marks, fillers, supplementary
/// variation selectors; a joiner or variation selector only in a run of them (an emoji or a
/// Persian word uses one at a time; an emoji's presentation selector and joiner come as a
/// pair). Borrowed when nothing needed escaping.
///
/// ```
/// use reins::text::printable;
///
/// // "note" and, in tag characters, " rm" that a screen shows as nothing.
/// let hidden = "note\u{e0020}\u{e0072}\u{e006d}";
/// assert_eq!(printable(hidden), "note\\udb40\\udc20\\udb40\\udc72\\udb40\\udc6d");
/// // Each escape as JSON writes it: inside a JSON string, it reads back as the same text.
/// let shown = format!("\"{}\"", printable(hidden));
/// assert_eq!(serde_json::from_str::<String>(&shown).unwrap(), hidden);
/// // An emoji's variation selector and joiners stay as they are, as do Scotland's flag's tags.
/// let emoji = "\u{2764}\u{fe0f} \u{1f468}\u{200d}\u{1f469} \u{1f3f4}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}";
/// assert_eq!(printable(emoji), emoji);
/// ```
pub fn printable(text: &str) -> Cow<'_, str> {
    printable_after(text, None)
}

/// [`printable`] of `text` following `before` (the character shown just before it, in an
/// earlier piece of a stream), which decides whether a joiner or selector starting `text`
/// continues a run.
fn printable_after(text: &str, before: Option<char>) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    // A carriage return is one byte, so the byte after it is at `at + 1`.
    let mut previous = before;
    // The tag characters left of a subdivision flag being shown (`🏴` and its tags).
    let mut flag_tags_left = 0;
    let mut acts = |at: usize, c: char| {
        if flag_tags_left > 0 {
            flag_tags_left -= 1;
            previous = Some(c);
            return false;
        }
        if c == BLACK_FLAG && subdivision_tags(&text[at + c.len_utf8()..]) {
            flag_tags_left = SUBDIVISION_TAGS_LEN;
        }
        let acts = acts_on_terminal(c, bytes.get(at + 1).copied()) || hides_text(c, previous);
        previous = Some(c);
        acts
    };
    let Some(first) = text.char_indices().find(|&(at, c)| acts(at, c)) else {
        return Cow::Borrowed(text);
    };
    let mut shown = String::with_capacity(text.len() + 16);
    shown.push_str(&text[..first.0]);
    escape(&mut shown, first.1);
    for (at, c) in text[first.0..].char_indices().skip(1) {
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
    /// The last character of the pieces so far, which a joiner or selector starting the next
    /// one follows.
    last: Option<char>,
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
        let shown = printable_after(body, self.last);
        self.last = body.chars().next_back().or(self.last);
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

/// The flag a subdivision flag's tag characters follow.
const BLACK_FLAG: char = '\u{1F3F4}';

/// The tag characters of a subdivision flag: its five letters and the cancel tag.
const SUBDIVISION_TAGS_LEN: usize = 6;

/// Whether `rest` (what follows a `🏴`) starts with the tags of a subdivision flag screens show
/// as one (England, Scotland, Wales: the only ones Unicode recommends). Other tag sequences,
/// which a screen shows as nothing, are escaped like any tag character: they can spell text.
fn subdivision_tags(rest: &str) -> bool {
    const FLAGS: [&str; 3] = [
        "\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}",
        "\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}",
        "\u{E0067}\u{E0062}\u{E0077}\u{E006C}\u{E0073}\u{E007F}",
    ];
    FLAGS.iter().any(|tags| rest.starts_with(tags))
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

/// Whether `c` shows as nothing while it may carry text a model reads (`previous` is the
/// character before it). Always: tag characters (`U+E0000`–`U+E007F`), which spell ASCII
/// invisibly; zero-width and filler characters (`U+00AD`, `U+034F`, `U+115F`, `U+1160`,
/// `U+17B4`, `U+17B5`, `U+180B`–`U+180F`, `U+200B`, `U+2060`–`U+2064`, `U+206A`–`U+206F`,
/// `U+3164`, `U+FEFF`, `U+FFA0`, `U+FFF9`–`U+FFFB`, `U+1D173`–`U+1D17A`) and the
/// supplementary variation selectors (`U+E0100`–`U+E01EF`). In a run only: the joiners
/// (`U+200C`, `U+200D`) and variation selectors (`U+FE00`–`U+FE0F`), one of which an emoji or
/// a word in Persian or an Indic script uses at a time, and a run of which encodes bytes.
fn hides_text(c: char, previous: Option<char>) -> bool {
    match c {
        '\u{00AD}'
        | '\u{034F}'
        | '\u{115F}'
        | '\u{1160}'
        | '\u{17B4}'
        | '\u{17B5}'
        | '\u{180B}'..='\u{180F}'
        | '\u{200B}'
        | '\u{2060}'..='\u{2064}'
        | '\u{206A}'..='\u{206F}'
        | '\u{3164}'
        | '\u{FEFF}'
        | '\u{FFA0}'
        | '\u{FFF9}'..='\u{FFFB}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E007F}'
        | '\u{E0100}'..='\u{E01EF}' => true,
        // An emoji's presentation selector before its joiner (`🏳️‍🌈`) is one pair of them.
        '\u{200D}' if previous == Some('\u{FE0F}') => false,
        '\u{200C}' | '\u{200D}' | '\u{FE00}'..='\u{FE0F}' => {
            previous.is_none_or(|previous| joins_or_selects(previous) || hides_text(previous, None))
        }
        _ => false,
    }
}

/// A joiner or a variation selector: one of them after another is a run.
fn joins_or_selects(c: char) -> bool {
    matches!(c, '\u{200C}' | '\u{200D}' | '\u{FE00}'..='\u{FE0F}')
}

/// Writes `c` as JSON escapes it: `\\uXXXX`, or a surrogate pair of them above `U+FFFF`, so
/// that text shown inside a JSON string (arguments a person may approve as shown) reads back
/// as the same character.
fn escape(shown: &mut String, c: char) {
    for unit in c.encode_utf16(&mut [0; 2]) {
        // Writing to a `String` cannot fail.
        let _ = write!(shown, "\\u{unit:04x}");
    }
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

/// `error`'s message and its causes' (its [`source`](std::error::Error::source) chain) in
/// one line, joined by `: `: many errors' own message ("error sending request") leaves why
/// to a cause. A cause whose message the line already holds (an error that repeats its
/// source's) is not said twice.
///
/// ```
/// use reins::text::with_causes;
/// use std::error::Error;
///
/// #[derive(Debug)]
/// struct Sending(std::io::Error);
///
/// impl std::fmt::Display for Sending {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str("error sending request")
///     }
/// }
///
/// impl Error for Sending {
///     fn source(&self) -> Option<&(dyn Error + 'static)> {
///         Some(&self.0)
///     }
/// }
///
/// let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
/// assert_eq!(
///     with_causes(&Sending(refused)),
///     "error sending request: connection refused"
/// );
/// ```
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let message = cause.to_string();
        if !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        source = cause.source();
    }
    text
}

/// `url` as it may be shown: without its user info (what comes before an `@` ahead of the
/// path), query and fragment, where credentials are written. Done on the text, so a URL that
/// does not parse (no scheme, a port out of range) is cut too.
///
/// ```
/// use reins::text::url_without_credentials;
///
/// let shown = url_without_credentials("https://alice:pw1@host:8443/v1?key=k1#top");
/// assert_eq!(shown, "https://host:8443/v1");
/// assert_eq!(url_without_credentials("alice:pw1@host/v1"), "host/v1");
/// ```
pub fn url_without_credentials(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or_default();
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), url),
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    format!("{scheme}{host}{path}")
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
            "\u{2764}\u{fe0f} \u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}",
            // 🏳️‍🌈 ❤️‍🔥 🕵️‍♂️ 1️⃣: a presentation selector before a joiner, and a keycap.
            "\u{1f3f3}\u{fe0f}\u{200d}\u{1f308} \u{2764}\u{fe0f}\u{200d}\u{1f525}",
            "\u{1f575}\u{fe0f}\u{200d}\u{2642}\u{fe0f} 1\u{fe0f}\u{20e3}",
            "\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}",
        ] {
            assert!(
                matches!(printable(text), Cow::Borrowed(t) if t == text),
                "{text:?}"
            );
        }
    }

    /// The reviewer's smuggled note: a screen shows "harmless note end", the tool gets a
    /// sentence more.
    #[test]
    fn invisible_text_is_shown_as_escapes() {
        let hidden: String = " and also email"
            .chars()
            .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
            .collect();
        let text = format!("harmless note{hidden}\u{200b}\u{2060}\u{feff} end");
        let shown = printable(&text);
        assert!(
            shown.starts_with("harmless note\\udb40\\udc20\\udb40\\udc61\\udb40\\udc6e"),
            "{shown}"
        );
        assert!(shown.ends_with("\\u200b\\u2060\\ufeff end"), "{shown}");
        assert!(shown.is_ascii(), "nothing invisible is left: {shown}");
        // A run of variation selectors after an emoji encodes bytes: all but the first shown.
        assert_eq!(
            printable("\u{1f600}\u{fe0f}\u{fe01}\u{e0100}"),
            "\u{1f600}\u{fe0f}\\ufe01\\udb40\\udd00"
        );
        assert_eq!(printable("\u{200d}\u{200d}x"), "\\u200d\\u200dx");
    }

    /// England's flag shows as a flag; tags that spell more after a black flag, or a
    /// flag's tags on their own, show as escapes.
    #[test]
    fn a_subdivision_flag_shows_and_other_tags_after_a_flag_do_not() {
        let england = "\u{1f3f4}\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}";
        assert_eq!(
            printable(&format!("go {england}!")),
            format!("go {england}!")
        );
        let smuggled: String = std::iter::once('\u{1f3f4}')
            .chain(
                "gbengrm -rf"
                    .chars()
                    .map(|c| char::from_u32(0xE0000 + c as u32).unwrap()),
            )
            .collect();
        let shown = printable(&smuggled);
        assert!(shown.starts_with("\u{1f3f4}\\udb40\\udc67"), "{shown}");
        assert_eq!(shown.chars().count(), 1 + 12 * 11, "{shown}");
        let tags_alone = &england['\u{1f3f4}'.len_utf8()..];
        assert!(printable(tags_alone).is_ascii());
    }

    /// The inbox shows a waiting call's arguments through `printable` in the form that
    /// approves them: read back as JSON, what it shows is what the call holds.
    #[test]
    fn escaped_text_reads_back_as_json_the_same() {
        // Tags after a black flag that are no subdivision flag's.
        let tags = "\u{1f3f4}\u{e0067}\u{e0062}\u{e0078}\u{e0079}\u{e007a}\u{e007f}";
        for text in [
            format!("Go {tags}!"),
            "\u{845b}\u{e0100} \u{202e}x\u{1b}[2J\u{200b}\u{feff}".to_owned(),
        ] {
            let shown = printable(&text);
            assert_ne!(shown, text, "something was escaped");
            let json = serde_json::to_string(&text).unwrap();
            let read: String = serde_json::from_str(&printable(&json)).unwrap();
            assert_eq!(read, text);
        }
    }

    #[test]
    fn a_run_split_across_pieces_of_a_stream_is_still_a_run() {
        let mut stream = PrintableStream::default();
        assert_eq!(stream.push("\u{1f600}\u{fe0f}"), "\u{1f600}\u{fe0f}");
        assert_eq!(stream.push("\u{fe01}ok"), "\\ufe01ok");
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
