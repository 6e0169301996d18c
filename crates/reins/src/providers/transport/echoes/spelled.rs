//! Where, at the end of a fragment, a secret may begin: spelled as it is, or with the JSON
//! escapes the scrub also sees through (`\u0073k-…`, and JSON text in a JSON string, escaped
//! again: `\\u0073k-…`), an escape cut short by the fragment's end included. Tool-call
//! arguments stream as JSON text, so a server can spell the key's first letters with escapes
//! and split it there: neither fragment then holds a form of it the scrub knows, and the
//! fragments joined spell it whole.

/// How many levels of escapes are decoded, as the scrub decodes them: JSON text in a JSON
/// string in a JSON answer is three.
const LEVELS: usize = 3;

/// The most bytes one character of a secret takes spelled with escapes at every level
/// (`\u0073`, escaped again and again), with room to spare.
const MAX_SPELLED_CHAR: usize = 12;

/// How many bytes at the end of `text` could be the start of `secret`, in any spelling the
/// scrub sees through.
pub(super) fn open_end(text: &[u8], secret: &[u8]) -> usize {
    let Some(&first) = secret.first() else {
        return 0;
    };
    let window = secret.len().saturating_mul(MAX_SPELLED_CHAR);
    let from = text.len().saturating_sub(window);
    // Each candidate starts with the secret's first byte or a backslash: on a character.
    (from..text.len())
        .find(|&at| (text[at] == first || text[at] == b'\\') && could_begin(&text[at..], secret))
        .map_or(0, |at| text.len() - at)
}

/// Whether `tail`, at some level of decoding, is the start of `secret` (not all of it: the
/// scrub has replaced whole ones), or an escape cut short that could go on to spell it.
fn could_begin(tail: &[u8], secret: &[u8]) -> bool {
    let mut level = tail.to_vec();
    let mut cut = false;
    for depth in 0..=LEVELS {
        let begins = level.len() < secret.len() && secret.starts_with(&level);
        if begins && (cut || !level.is_empty()) {
            return true;
        }
        if depth == LEVELS || !level.contains(&b'\\') {
            return false;
        }
        let (decoded, cut_here) = decode_level(&level);
        cut |= cut_here;
        level = decoded;
    }
    false
}

/// `bytes` with one level of the escapes the scrub decodes (`\\`, `\"`, `\/`, and `\u` of an
/// ASCII character) decoded, others kept; and whether it ends in an escape cut short, which
/// is left out.
fn decode_level(bytes: &[u8]) -> (Vec<u8>, bool) {
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        if byte != b'\\' {
            decoded.push(byte);
            at += 1;
            continue;
        }
        match bytes.get(at + 1) {
            None => return (decoded, true),
            Some(&escaped @ (b'\\' | b'"' | b'/')) => {
                decoded.push(escaped);
                at += 2;
            }
            Some(b'u') => {
                let hex = &bytes[at + 2..bytes.len().min(at + 6)];
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    decoded.push(byte);
                    at += 1;
                } else if hex.len() < 4 {
                    return (decoded, true);
                } else {
                    let code = hex
                        .iter()
                        .fold(0u32, |code, digit| code * 16 + hex_value(*digit));
                    match u8::try_from(code) {
                        Ok(ascii) if ascii.is_ascii() => decoded.push(ascii),
                        _ => decoded.extend_from_slice(&bytes[at..at + 6]),
                    }
                    at += 6;
                }
            }
            Some(&other) => {
                decoded.extend_from_slice(&[byte, other]);
                at += 2;
            }
        }
    }
    (decoded, false)
}

fn hex_value(digit: u8) -> u32 {
    char::from(digit).to_digit(16).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8] = b"sk-live-0123456789";

    #[test]
    fn a_start_spelled_with_escapes_or_cut_inside_one_is_open() {
        for (text, open) in [
            (&b"ordinary text"[..], 0),
            (b"ends with sk-li", 5),
            (b"ends with \\", 1),
            (b"ends with \\u00", 4),
            (b"ends with \\u0073", 6),
            (b"ends with \\u0073k-li", 10),
            (b"ends with \\\\u0073k-", 9),
            (b"ends with \\u0074", 0),
            (b"ends with \\n", 0),
            (b"a whole \\u0073k-live-0123456789", 0),
        ] {
            assert_eq!(
                open_end(text, KEY),
                open,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn escapes_are_decoded_one_level_at_a_time() {
        assert_eq!(
            decode_level(br#"a\u0041\\u0041\/\n\u00e9\u00"#),
            (br#"aA\u0041/\n\u00e9"#.to_vec(), true)
        );
    }
}
