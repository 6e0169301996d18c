//! What a server's JSON text costs once parsed into a `serde_json::Value`, beyond the text
//! itself. Each object with members is a B-tree node of about 600 bytes, each array a buffer
//! of about 150, and each value takes 32, so eight bytes on the wire (`{"a":0},`) can take
//! 700 in memory: a body or an event
//! within the byte limits could take gigabytes once parsed. Such a text is weighed before it
//! is parsed, and refused (or, for tool-call arguments, kept as text) when it is too heavy.

/// The most memory a server's JSON text may take once parsed, beyond its own length: 32 MiB.
/// An honest answer's structure is a small fraction of that (its bulk is text), and a model's
/// arguments, at most a few hundred thousand tokens, stay well within it.
pub const MAX_PARSED_OVERHEAD: usize = 32 * 1024 * 1024;

/// Texts shorter than this are not weighed: whatever they hold, parsed they take at most a
/// few megabytes (an object needs two bytes, `{}`), and most of a stream's events are far
/// shorter, so the check costs them nothing.
const WEIGHED_FROM: usize = 64 * 1024;

/// An object, counted as if it had members: one B-tree leaf (11 slots of a `String` key and
/// a `Value`) and its allocation.
const OBJECT_BYTES: usize = 640;

/// An array with elements: its buffer (room for four values at first) and its allocation.
const ARRAY_BYTES: usize = 160;

/// A value in the array or object holding it, or a string's allocation.
const VALUE_BYTES: usize = 32;

/// Whether `text`, parsed, would take at most `limit` bytes beyond its own length (estimated
/// from above; a text that is not JSON is left to the parser to refuse). Texts under 64 KiB
/// always pass. For any JSON a server sends that is parsed into a `serde_json::Value` (the
/// providers use it; so do MCP clients).
///
/// ```
/// use reins::json_weight::{MAX_PARSED_OVERHEAD, parses_within};
///
/// // A megabyte of text in one string weighs what its text does…
/// let text = format!(r#"{{"text":"{}"}}"#, "x".repeat(1 << 20));
/// assert!(parses_within(text.as_bytes(), MAX_PARSED_OVERHEAD));
/// // …four megabytes of small objects, hundreds of megabytes once parsed.
/// let objects = format!("[{}]", vec![r#"{"a":0}"#; 512 * 1024].join(","));
/// assert!(!parses_within(objects.as_bytes(), MAX_PARSED_OVERHEAD));
/// ```
pub fn parses_within(text: &[u8], limit: usize) -> bool {
    text.len() < WEIGHED_FROM || overhead_within(text, limit)
}

/// Whether the structure `text` parses into takes at most `limit` bytes: containers and
/// separators counted outside strings, each string once.
fn overhead_within(text: &[u8], limit: usize) -> bool {
    let mut total = 0usize;
    let mut at = 0;
    while let Some(&byte) = text.get(at) {
        match byte {
            b'"' => {
                total = total.saturating_add(VALUE_BYTES);
                match string_end(text, at + 1) {
                    Some(end) => at = end,
                    // Unterminated: not JSON, and the parser says so.
                    None => return true,
                }
            }
            b'{' => total = total.saturating_add(OBJECT_BYTES),
            b'[' => total = total.saturating_add(ARRAY_BYTES),
            b',' => total = total.saturating_add(VALUE_BYTES),
            _ => {}
        }
        if total > limit {
            return false;
        }
        at += 1;
    }
    true
}

/// The index of the quote closing a string whose text starts at `from`, escapes skipped.
pub(crate) fn string_end(text: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let found = from + memchr::memchr2(b'"', b'\\', text.get(from..)?)?;
        if text.get(found) == Some(&b'"') {
            return Some(found);
        }
        // A backslash: the character it escapes is no quote.
        from = found + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same shape repeated until the text is `len` bytes long, as a JSON array.
    fn array_of(item: &str, len: usize) -> Vec<u8> {
        let mut text = b"[".to_vec();
        while text.len() < len {
            text.extend_from_slice(item.as_bytes());
            text.push(b',');
        }
        text.extend_from_slice(item.as_bytes());
        text.push(b']');
        text
    }

    #[test]
    fn many_small_arrays_are_too_heavy() {
        // `[0],` is four bytes and an array's buffer: 1.2 MB of them, some 55 MB parsed.
        let arrays = array_of("[0]", 1200 * 1024);
        assert!(!parses_within(&arrays, MAX_PARSED_OVERHEAD));
    }

    #[test]
    fn many_small_objects_are_too_heavy_and_long_text_is_not() {
        let objects = array_of(r#"{"a":0}"#, 1024 * 1024);
        assert!(!parses_within(&objects, MAX_PARSED_OVERHEAD));
        let numbers = array_of("0", 4 * 1024 * 1024);
        assert!(!parses_within(&numbers, MAX_PARSED_OVERHEAD));
        // Megabytes of text in a few strings weigh what their text does.
        let text = format!(
            r#"{{"data":"{}","more":"{}"}}"#,
            "x".repeat(8 << 20),
            "y".repeat(8 << 20)
        );
        assert!(parses_within(text.as_bytes(), MAX_PARSED_OVERHEAD));
    }

    #[test]
    fn separators_inside_strings_and_escaped_quotes_are_not_counted() {
        let inside = format!(r#"{{"a":"{}"}}"#, r#"{\"b\":[0,0],"#.repeat(20_000));
        assert!(parses_within(inside.as_bytes(), 1024));
        // The same shape outside a string is heavy.
        let outside = format!("[{}0]", r#"{"b":[0,0]},"#.repeat(20_000));
        assert!(!parses_within(outside.as_bytes(), 1024));
    }

    #[test]
    fn short_texts_and_broken_ones_are_left_to_the_parser() {
        assert!(parses_within(br#"[{"a":0},{"a":0}]"#, 0));
        let unterminated = [b"[\"".as_slice(), &[b'x'; 100_000]].concat();
        // (`[` and the string's own weight are within 192 bytes.)
        assert!(parses_within(&unterminated, 192));
        let trailing_escape = [b"[\"".as_slice(), &[b'x'; 100_000], b"\\"].concat();
        assert!(parses_within(&trailing_escape, 192));
    }
}
