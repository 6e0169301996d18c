//! The bound on each part of recorded content ([`PartLimit`]): a text part, a tool call's
//! arguments, a tool's result. A tool result of megabytes would otherwise be written whole on
//! its span and again on every later `chat` span, whose input holds it.
//!
//! Parts are cut before they are serialized, so a message keeps the conventions' JSON shape;
//! a cut part ends with a marker giving its whole length. A part too long is first given to
//! the content redactor whole ([`PartCut`]): a secret across the cut, shortened, would no
//! longer match a pattern's shape (an API key's least length) and its start would be
//! recorded.

use super::{ContentKind, Redactor};
use serde_json::Value;
use std::borrow::Cow;
use std::io;

/// The most bytes of one part recorded, its marker aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PartLimit(pub usize);

impl PartLimit {
    /// `text`, or its first bytes up to the limit (cut at a char boundary) and the marker.
    pub(crate) fn text<'a>(self, text: &'a str) -> Cow<'a, str> {
        match self.cut_at(text) {
            None => Cow::Borrowed(text),
            Some(end) => Cow::Owned(format!(
                "{}{}",
                text.get(..end).unwrap_or_default(),
                marker(text.len())
            )),
        }
    }

    /// [`Self::text`] of an owned string, cut in place.
    pub(crate) fn string(self, mut text: String) -> String {
        if let Some(end) = self.cut_at(&text) {
            let length = text.len();
            text.truncate(end);
            text.push_str(&marker(length));
        }
        text
    }

    /// The most bytes of messages recorded as one span's input (`gen_ai.input.messages`):
    /// [`INPUT_PARTS`] parts' worth, and at least [`MIN_INPUT_BYTES`] (small parts are asked
    /// for to keep each part short, not the conversation), the newest messages kept.
    pub(crate) fn input_budget(self) -> usize {
        self.0.saturating_mul(INPUT_PARTS).max(MIN_INPUT_BYTES)
    }

    /// Where `text` is cut: the last char boundary at or before the limit; `None` when it fits.
    fn cut_at(self, text: &str) -> Option<usize> {
        if text.len() <= self.0 {
            return None;
        }
        // A char is at most 4 bytes, so a boundary is found within 3 steps back.
        (0..=self.0).rev().find(|&end| text.is_char_boundary(end))
    }
}

/// The most bytes of a name or id a model's server chose (a response id, the model that
/// answered, a finish reason, a tool call's name and id) shown on a span or in an error, its
/// cut marker aside. Spans record them whether content is captured or not, and a hostile
/// server can make each as long as a body may be: whole, every span of the run would carry
/// megabytes, and an error would fill a terminal.
const NAME_BYTES: PartLimit = PartLimit(256);

/// The most bytes of a tool's description recorded on its span (`gen_ai.tool.description`),
/// its cut marker aside. A tool source's server chooses it and it is recorded whether content
/// is captured or not, on every call of the tool: bounded like a name, with room for prose.
const DESCRIPTION_BYTES: PartLimit = PartLimit(1024);

/// `name` as shown to people and traces: cut to [`NAME_BYTES`], its control sequences escaped
/// ([`printable`](crate::text::printable)), so a server's name cannot act on a terminal.
pub(crate) fn shown_name(name: &str) -> Cow<'_, str> {
    shown(name, NAME_BYTES)
}

/// A tool's description as recorded on its span: cut to [`DESCRIPTION_BYTES`], escaped as a
/// name is.
pub(crate) fn shown_description(description: &str) -> Cow<'_, str> {
    shown(description, DESCRIPTION_BYTES)
}

/// `text` cut to `limit`, its control sequences escaped.
fn shown(text: &str, limit: PartLimit) -> Cow<'_, str> {
    match limit.text(text) {
        Cow::Borrowed(text) => crate::text::printable(text),
        Cow::Owned(cut) => Cow::Owned(crate::text::printable(&cut).into_owned()),
    }
}

/// How the parts of one piece of recorded content are bounded: each cut to the limit, and a
/// part longer than that given to the piece's redactor whole first, as the piece's kind. The
/// redactor then sees every secret of the part whole (a key across the cut, shortened, would
/// match no pattern and its start be recorded); the whole piece is given to it again after.
#[derive(Clone, Copy)]
pub(crate) struct PartCut<'r> {
    limit: PartLimit,
    redactor: Option<(&'r Redactor, ContentKind)>,
}

impl<'r> PartCut<'r> {
    /// Parts of a piece of `kind` cut to `limit`, redacted by `redactor` when too long.
    pub(crate) fn new(limit: PartLimit, redactor: &'r Redactor, kind: ContentKind) -> Self {
        PartCut {
            limit,
            redactor: Some((redactor, kind)),
        }
    }

    /// `text`, or, when longer than the limit, its redaction cut (see [`PartLimit::text`]).
    pub(crate) fn text<'a>(self, text: &'a str) -> Cow<'a, str> {
        if text.len() <= self.limit.0 {
            return Cow::Borrowed(text);
        }
        Cow::Owned(self.string(text.to_owned()))
    }

    /// [`Self::text`] of an owned string.
    pub(crate) fn string(self, text: String) -> String {
        if text.len() <= self.limit.0 {
            return text;
        }
        match self.redactor {
            None => self.limit.string(text),
            Some((redact, kind)) => match redact(kind, text) {
                Some(redacted) => self.limit.string(redacted),
                // The redactor records nothing of this part: only that there was one.
                None => WITHHELD.to_owned(),
            },
        }
    }

    /// `value`, or, when its JSON text is longer than the limit, that text redacted and cut,
    /// as a string value: a part's JSON stays valid, only no longer an object.
    pub(crate) fn value<'a>(self, value: &'a Value) -> Cow<'a, Value> {
        if serialized_len(value) <= self.limit.0 {
            return Cow::Borrowed(value);
        }
        let text = serde_json::to_string(value).unwrap_or_default();
        Cow::Owned(Value::String(self.string(text)))
    }

    /// The same cut without the redactor: what a part takes on a span, measured before the
    /// redactor is asked for it.
    pub(crate) fn unredacted(self) -> PartCut<'static> {
        PartCut::from(self.limit)
    }

    /// See [`PartLimit::input_budget`].
    pub(crate) fn input_budget(self) -> usize {
        self.limit.input_budget()
    }
}

/// Parts cut to `limit` with no redactor (what a test of the shapes needs).
impl From<PartLimit> for PartCut<'_> {
    fn from(limit: PartLimit) -> Self {
        PartCut {
            limit,
            redactor: None,
        }
    }
}

/// What a part the redactor dropped is recorded as.
const WITHHELD: &str = "…[withheld]";

/// How many parts' worth of messages one span's input holds at most: a megabyte with the
/// default 64 KiB parts, ample for a chat and far below what collectors take in one request.
pub(crate) const INPUT_PARTS: usize = 16;

/// The fewest bytes of messages one span's input may hold, however small the parts.
pub(crate) const MIN_INPUT_BYTES: usize = 1024 * 1024;

/// What ends a cut part: that it was cut, and how long it was.
fn marker(length: usize) -> String {
    format!("…[truncated, {length} bytes in all]")
}

/// The length of `value`'s JSON text, without writing it anywhere.
pub(crate) fn serialized_len(value: &impl serde::Serialize) -> usize {
    let mut counted = ByteCount(0);
    match serde_json::to_writer(&mut counted, value) {
        Ok(()) => counted.0,
        // Never for the shapes recorded (a `Value`, a message) into a sink that cannot fail;
        // counted as too long to keep.
        Err(_) => usize::MAX,
    }
}

/// A writer that only counts the bytes written to it.
struct ByteCount(usize);

impl io::Write for ByteCount {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_within_the_limit_is_kept_as_it_is() {
        let limit = PartLimit(5);
        assert!(matches!(limit.text("hello"), Cow::Borrowed("hello")));
        assert_eq!(limit.string("hello".to_owned()), "hello");
    }

    #[test]
    fn longer_text_is_cut_at_a_char_boundary_and_says_how_long_it_was() {
        // 'é' is two bytes: a cut at 5 bytes would split the third.
        let text = "éééééé";
        let expected = "éé…[truncated, 12 bytes in all]";
        assert_eq!(PartLimit(5).text(text), expected);
        assert_eq!(PartLimit(5).string(text.to_owned()), expected);
        assert_eq!(PartLimit(0).text("a"), "…[truncated, 1 bytes in all]");
    }

    #[test]
    fn a_value_too_long_becomes_its_cut_json_text() {
        let arguments = json!({"path": "a/b", "content": "x".repeat(40)});
        assert!(matches!(
            PartCut::from(PartLimit(1000)).value(&arguments),
            Cow::Borrowed(_)
        ));
        let whole = arguments.to_string();
        let cut = PartCut::from(PartLimit(10)).value(&arguments);
        let expected = format!("{}…[truncated, {} bytes in all]", &whole[..10], whole.len());
        assert_eq!(*cut, Value::String(expected));
    }
}
