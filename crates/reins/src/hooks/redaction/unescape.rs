//! Views of a text with its JSON escapes decoded, one level at a time, so the patterns find
//! what escapes hide: `ada\u0040example.com` is an address, and in a JSON string that holds
//! JSON text (a tool's answer carrying an HTTP body: doubly encoded) a line break is `\\n`,
//! whose `n` would otherwise read as a letter glued to the card after it.
//!
//! A level decodes `\\`, `\"`, `\/` and the `\uXXXX` escapes of ASCII characters (every
//! pattern is ASCII); the others (`\n`, `\t`…, non-ASCII `\u`) stay as they are, which the
//! patterns read as boundaries. It decodes URL percent escapes of ASCII characters too
//! (`%40` is `@`, `%2F` is `/`, either case of hex): a URL's query string spells an address
//! `ada%40example.com`, and a URL in a tool's answer or error would carry it past the
//! patterns; `%25` (`%`) decodes to the next level, so a URL encoded twice is read too. A
//! text without `\\`, `\/`, an ASCII `\u` escape or an ASCII percent escape has no view and
//! costs no allocation.

use crate::hex::percent_escaped_byte;
use memchr::memchr_iter;
use std::ops::Range;

/// How many levels are decoded at most: JSON text in a JSON string in a JSON answer is three.
const MAX_LEVELS: usize = 3;

/// A text with one more level of escapes decoded than the one it was made from.
pub(super) struct View {
    /// The decoded text, which the patterns scan.
    pub text: String,
    /// For each byte of `text`, and for its end, where that byte's source starts in the
    /// original text (an escape's source is the whole escape).
    origin: Vec<usize>,
}

impl View {
    /// The range of the original text that `range` of the view was decoded from: from the
    /// source of its first byte to the source of the byte after it, so an escape at either
    /// end is covered whole. `None` for a range outside the view.
    pub(super) fn original(&self, range: Range<usize>) -> Option<Range<usize>> {
        let start = *self.origin.get(range.start)?;
        let end = *self.origin.get(range.end)?;
        (start < end).then_some(start..end)
    }
}

/// The views of `text`, each one level more decoded than the one before, for as long as a
/// level decodes something (at most [`MAX_LEVELS`]).
pub(super) fn views(text: &str) -> Vec<View> {
    let mut views: Vec<View> = Vec::new();
    while views.len() < MAX_LEVELS {
        let current = views.last().map_or(text, |view| view.text.as_str());
        if !needs_decoding(current.as_bytes()) {
            break;
        }
        let Some(mut next) = decode(current) else {
            break;
        };
        // Each level's origins point into the level before: compose them down to `text`.
        if let Some(before) = views.last() {
            for origin in &mut next.origin {
                *origin = before.origin.get(*origin).copied().unwrap_or(text.len());
            }
        }
        views.push(next);
    }
    views
}

/// Whether decoding a level of `bytes` would change a byte the patterns read: a `\\`, `\/`,
/// ASCII `\u` or ASCII percent escape. (`\"` alone changes nothing: a quote and a backslash
/// are both boundaries to every pattern.)
fn needs_decoding(bytes: &[u8]) -> bool {
    if memchr_iter(b'%', bytes).any(|percent| percent_escape(bytes, percent).is_some()) {
        return true;
    }
    let mut escaped_until = 0;
    for slash in memchr_iter(b'\\', bytes) {
        if slash < escaped_until {
            continue;
        }
        match bytes.get(slash + 1) {
            Some(b'\\' | b'/') => return true,
            Some(b'u') if ascii_escape(bytes, slash).is_some() => return true,
            _ => escaped_until = slash + 2,
        }
    }
    false
}

/// The ASCII byte of the `\uXXXX` escape at `slash`, if there is one.
fn ascii_escape(bytes: &[u8], slash: usize) -> Option<u8> {
    let hex = bytes.get(slash + 2..slash + 6)?;
    let text = std::str::from_utf8(hex).ok()?;
    let code = u8::from_str_radix(text, 16).ok()?;
    // `u8::from_str_radix` accepts a sign; an escape does not.
    (code < 0x80 && hex.iter().all(u8::is_ascii_hexdigit)).then_some(code)
}

/// The ASCII byte of the percent escape (`%40`) at `percent`, if there is one.
fn percent_escape(bytes: &[u8], percent: usize) -> Option<u8> {
    percent_escaped_byte(bytes.get(percent..)?).filter(u8::is_ascii)
}

/// One level of `text` decoded, its origins offsets in `text`; `None` if the result is not
/// UTF-8 (it always is: escapes decode to ASCII and other bytes are copied whole).
fn decode(text: &str) -> Option<View> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut origin = Vec::with_capacity(bytes.len() + 1);
    let mut index = 0;
    while index < bytes.len() {
        let (byte, len) = match (bytes[index], bytes.get(index + 1)) {
            (b'\\', Some(&next @ (b'\\' | b'"' | b'/'))) => (next, 2),
            (b'\\', Some(b'u')) => match ascii_escape(bytes, index) {
                Some(byte) => (byte, 6),
                None => (b'\\', 1),
            },
            (b'%', _) => match percent_escape(bytes, index) {
                Some(byte) => (byte, 3),
                None => (b'%', 1),
            },
            // Any other byte, a backslash of another escape included, is copied as it is.
            (byte, _) => (byte, 1),
        };
        decoded.push(byte);
        origin.push(index);
        index += len;
    }
    origin.push(bytes.len());
    let text = String::from_utf8(decoded).ok()?;
    Some(View { text, origin })
}
