//! A secret spelled with percent-escapes, as a URL or a query string carries it: an error body
//! or an answer that echoes the request's URL shows the key so (`sk-live-abc%2Fdef`, or every
//! byte escaped, `%73%6B…`, in either case of hex). Each byte of the secret may be itself or
//! its escape. Errors and answers (`echoes`) are scrubbed with this one reading.

use crate::hex::percent_escaped_byte;
use std::borrow::Cow;

/// `text` with every spelling of `secret` that the percent-escapes allow replaced by
/// `replacement`; borrowed when there is none. Text without a `%` holds none but the plain
/// one, and is returned as it is without being read further.
pub(super) fn replace_spelled<'t>(text: &'t str, secret: &str, replacement: &str) -> Cow<'t, str> {
    let (bytes, secret) = (text.as_bytes(), secret.as_bytes());
    let Some(&first) = secret.first() else {
        return Cow::Borrowed(text);
    };
    if memchr::memchr(b'%', bytes).is_none() {
        return Cow::Borrowed(text);
    }
    let mut scrubbed = Vec::with_capacity(bytes.len());
    let mut replaced = false;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        // A spelling starts on the secret's first byte or on an escape.
        let whole = if byte == first || byte == b'%' {
            spelling(&bytes[at..], secret)
        } else {
            Spelling::No
        };
        if let Spelling::Whole(len) = whole {
            scrubbed.extend_from_slice(replacement.as_bytes());
            replaced = true;
            at += len;
        } else {
            scrubbed.push(byte);
            at += 1;
        }
    }
    if !replaced {
        return Cow::Borrowed(text);
    }
    // A spelling starts and ends on the secret's characters or on escapes of ASCII, so what
    // is left is whole characters; read leniently all the same.
    Cow::Owned(match String::from_utf8(scrubbed) {
        Ok(text) => text,
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
    })
}

/// How many bytes at the end of `text` spell the start of `secret` (at least `min_len` of
/// its bytes, each as itself or escaped, an escape cut short at the very end included): the
/// text an excerpt cut inside the secret ends so.
pub(super) fn spelled_start_at_end(text: &str, secret: &str, min_len: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let first = *secret.as_bytes().first()?;
    let window = secret.len().saturating_mul(3);
    (bytes.len().saturating_sub(window)..bytes.len())
        .filter(|&at| (bytes[at] == first || bytes[at] == b'%') && text.is_char_boundary(at))
        .find(|&at| {
            matches!(spelling(&bytes[at..], secret.as_bytes()),
                     Spelling::Start(matched) if matched >= min_len)
        })
        .map(|at| bytes.len() - at)
}

/// How the start of a text spells a secret.
#[derive(Debug, PartialEq)]
enum Spelling {
    /// The whole secret, in this many bytes of text.
    Whole(usize),
    /// Not the whole: the text ends after spelling this many bytes of the secret (an
    /// escape cut short at its end included).
    Start(usize),
    /// Not at all.
    No,
}

/// How the start of `text` spells `secret`, each byte as itself or as a percent-escape.
fn spelling(text: &[u8], secret: &[u8]) -> Spelling {
    let (mut at, mut matched) = (0, 0);
    while let Some(&wanted) = secret.get(matched) {
        let rest = &text[at..];
        if rest.is_empty() {
            return Spelling::Start(matched);
        }
        let escaped = percent_escaped_byte(rest) == Some(wanted);
        let plain = rest.first() == Some(&wanted);
        match (escaped, plain) {
            // A `%` of the secret, and text that could be it as itself or as `%25`: both
            // readings are tried (the first that spells the secret wins).
            (true, true) => {
                let secret_rest = &secret[matched + 1..];
                for skip in [3, 1] {
                    match spelling(&rest[skip..], secret_rest) {
                        Spelling::Whole(len) => return Spelling::Whole(at + skip + len),
                        Spelling::Start(more) => return Spelling::Start(matched + 1 + more),
                        Spelling::No => {}
                    }
                }
                return Spelling::No;
            }
            (true, false) => at += 3,
            (false, true) => at += 1,
            // The text ends in an escape cut short that may go on to spell the byte.
            (false, false) if is_cut_escape(rest, wanted) => return Spelling::Start(matched),
            (false, false) => return Spelling::No,
        }
        matched += 1;
    }
    Spelling::Whole(at)
}

/// Whether `text` is an escape of `byte` cut short: `%`, or `%` and its first hex digit,
/// then its end.
fn is_cut_escape(text: &[u8], byte: u8) -> bool {
    match text {
        [b'%'] => true,
        [b'%', digit] => char::from(*digit).to_digit(16) == Some(u32::from(byte >> 4)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-live-ab/c+d=e%f";

    fn scrub(text: &str) -> String {
        replace_spelled(text, KEY, "<redacted>").into_owned()
    }

    #[test]
    fn every_escaped_spelling_of_the_secret_is_replaced() {
        for spelled in [
            "sk-live-ab%2Fc%2Bd%3De%25f",
            "sk-live-ab%2fc%2bd%3de%25f",
            "%73%6B%2d%6c%69%76%65%2D%61%62%2F%63%2B%64%3D%65%25%66",
            "sk-live-ab/c+d=e%25f",
            "sk%2Dlive-ab/c+d=e%f",
        ] {
            assert_eq!(
                scrub(&format!("key={spelled}&next=1")),
                "key=<redacted>&next=1",
                "{spelled}"
            );
        }
    }

    #[test]
    fn other_text_and_starts_are_left_alone() {
        for text in [
            "no escapes: sk-live-ab",
            "100% sure, sk-li%76e",
            "sk-live-ab%2Fc%2Bd%3De%25g",
            "%zz%2",
        ] {
            assert_eq!(scrub(text), text);
            // Nothing replaced, nothing copied: an answer's fragments are read so.
            assert!(matches!(replace_spelled(text, KEY, "x"), Cow::Borrowed(_)));
        }
    }

    #[test]
    fn a_start_spelled_at_the_end_is_found_from_a_length_on() {
        let at_end = |text: &str| spelled_start_at_end(text, KEY, 4);
        assert_eq!(at_end("key=sk-live-ab%2"), Some(12));
        assert_eq!(at_end("key=%73%6B%2D%6C"), Some(12));
        assert_eq!(at_end("key=sk-l"), Some(4));
        // Fewer bytes than the minimum tell nothing of the key; a whole one is no start.
        assert_eq!(at_end("key=%73%6B%2"), None);
        assert_eq!(at_end("key=sk-live-ab%3"), None);
        assert_eq!(at_end("key=sk-live-ab/c+d=e%f"), None);
    }
}
