//! JSON text written by hand, byte for byte as `serde_json` writes it compactly.
//!
//! A run writes a tool call's arguments and a tool's JSON answer as text on every call (for
//! the history, and for hooks that read the text). Through `serde_json::to_writer` that is a
//! trait call per token, every string escaped byte by byte, and the bytes checked again as
//! UTF-8 at the end: several hundred instructions for `{"a":1,"b":2}`. Here a string that
//! needs no escaping (nearly every key and most values) is found with one vectorized scan and
//! copied whole, integers are written with `itoa`, and text is only ever appended as `str`,
//! so nothing is checked again. The output is the same as `serde_json`'s (the tests compare
//! them on every kind of value).

use serde_json::{Number, Value};
use std::fmt::Write as _;

/// Where JSON text is written: a `String`, the byte buffer of a line being built, or a hash
/// fed as the text is written (the loop breaker's fingerprint).
pub(crate) trait JsonOut {
    /// Appends `text`.
    fn put(&mut self, text: &str);
    /// Appends one ASCII character (punctuation): a push, not a copy of a one-byte slice.
    fn put_ascii(&mut self, ascii: u8);
}

impl JsonOut for String {
    #[inline]
    fn put(&mut self, text: &str) {
        self.push_str(text);
    }
    #[inline]
    fn put_ascii(&mut self, ascii: u8) {
        self.push(char::from(ascii));
    }
}

impl JsonOut for Vec<u8> {
    #[inline]
    fn put(&mut self, text: &str) {
        self.extend_from_slice(text.as_bytes());
    }
    #[inline]
    fn put_ascii(&mut self, ascii: u8) {
        self.push(ascii);
    }
}

/// `value` as compact JSON text.
pub(crate) fn write_value(out: &mut impl JsonOut, value: &Value) {
    write(out, value, false);
}

/// `value` as compact JSON text with every object's keys sorted: one text for equal values
/// whatever order their keys came in (a fingerprint's input).
pub(crate) fn write_sorted(out: &mut impl JsonOut, value: &Value) {
    write(out, value, true);
}

fn write(out: &mut impl JsonOut, value: &Value, sorted: bool) {
    match value {
        Value::Null => out.put("null"),
        Value::Bool(true) => out.put("true"),
        Value::Bool(false) => out.put("false"),
        Value::Number(number) => write_number(out, number),
        Value::String(text) => write_str(out, text),
        Value::Array(items) => {
            out.put_ascii(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.put_ascii(b',');
                }
                write(out, item, sorted);
            }
            out.put_ascii(b']');
        }
        // A map keeps its keys sorted unless `serde_json`'s `preserve_order` is on: only
        // then are they put in order, in a list of their own.
        Value::Object(fields) if sorted && !fields.keys().is_sorted() => {
            let mut by_key: Vec<_> = fields.iter().collect();
            by_key.sort_unstable_by(|a, b| a.0.cmp(b.0));
            write_fields(out, by_key, sorted);
        }
        Value::Object(fields) => write_fields(out, fields, sorted),
    }
}

fn write_fields<'v>(
    out: &mut impl JsonOut,
    fields: impl IntoIterator<Item = (&'v String, &'v Value)>,
    sorted: bool,
) {
    out.put_ascii(b'{');
    for (index, (key, field)) in fields.into_iter().enumerate() {
        if index > 0 {
            out.put_ascii(b',');
        }
        write_str(out, key);
        out.put_ascii(b':');
        write(out, field, sorted);
    }
    out.put_ascii(b'}');
}

/// An integer through `itoa`; anything else as `Number` displays itself, which is how
/// `serde_json` writes it (`ryu` for a float, the text as given under `arbitrary_precision`).
fn write_number(out: &mut impl JsonOut, number: &Number) {
    let mut digits = itoa::Buffer::new();
    if let Some(n) = number.as_u64() {
        out.put(digits.format(n));
    } else if let Some(n) = number.as_i64() {
        out.put(digits.format(n));
    } else {
        let mut text = String::new();
        // Writing to a `String` cannot fail.
        let _ = write!(text, "{number}");
        out.put(&text);
    }
}

/// `text` as a JSON string, quotes included.
#[inline]
pub(crate) fn write_str(out: &mut impl JsonOut, text: &str) {
    out.put_ascii(b'"');
    write_str_contents(out, text);
    out.put_ascii(b'"');
}

/// `text` escaped for a JSON string, without the quotes: copied whole when nothing in it
/// needs escaping.
#[inline]
pub(crate) fn write_str_contents(out: &mut impl JsonOut, text: &str) {
    // A fold with no early exit, which the compiler turns into a vector loop (`any` stops at
    // the first hit and stays a byte loop).
    let plain = !text
        .bytes()
        .fold(false, |found, byte| found | needs_escape(byte));
    if plain {
        out.put(text);
    } else {
        write_escaped(out, text);
    }
}

#[inline]
fn needs_escape(byte: u8) -> bool {
    (byte < 0x20) | (byte == b'"') | (byte == b'\\')
}

/// The slow path of [`write_str_contents`]: runs of plain text copied, each byte that needs
/// it escaped as `serde_json` does (the short forms where JSON has them, else `\u00xx`).
#[cold]
fn write_escaped(out: &mut impl JsonOut, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut copied = 0;
    for (at, byte) in text.bytes().enumerate() {
        if !needs_escape(byte) {
            continue;
        }
        // `at` is an ASCII byte's index, so a character boundary.
        out.put(&text[copied..at]);
        copied = at + 1;
        let short = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            _ => "",
        };
        if short.is_empty() {
            let code = [
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ];
            // Six ASCII bytes.
            out.put(std::str::from_utf8(&code).unwrap_or_default());
        } else {
            out.put(short);
        }
    }
    out.put(&text[copied..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn written(value: &Value) -> String {
        let mut text = String::new();
        write_value(&mut text, value);
        text
    }

    #[test]
    fn every_kind_of_value_is_written_as_serde_json_writes_it() {
        let every_control: String = (0u8..0x20).map(char::from).collect();
        let values = [
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(-1),
            json!(0.1),
            json!(-2.5e-300),
            json!(1e21),
            json!(123456789.0),
            json!(""),
            json!("plain"),
            json!("quote \" backslash \\ slash / del \u{7f}"),
            json!(every_control),
            json!("naïve ☃ 😀 \u{2028}"),
            json!([]),
            json!({}),
            json!([1, "two", [3.5, null], {"four": false}]),
            json!({"a": 1, "b": 2}),
            json!({"key \"quoted\"\n": {"nested": [{"deep": "\u{1}"}]}, "z": [], "": ""}),
        ];
        for value in &values {
            let expected = serde_json::to_string(value).unwrap();
            assert_eq!(written(value), expected, "{value:?}");
        }
    }

    /// The next number of a xorshift64 sequence: deterministic, so a failure reproduces.
    fn next(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// A value built from `seed`: every kind, strings drawn from control characters,
    /// escapes, ASCII and multi-byte characters, integers and floats of every size.
    fn generated(seed: &mut u64, depth: u32) -> Value {
        const CHARS: [char; 12] = [
            'a', 'Z', ' ', '"', '\\', '/', '\u{0}', '\u{1f}', '\u{7f}', 'é', '☃', '😀',
        ];
        let kind = next(seed) % if depth == 0 { 5 } else { 7 };
        match kind {
            0 => Value::Null,
            1 => Value::Bool(next(seed) % 2 == 0),
            2 => {
                let shift = next(seed) % 64;
                json!(next(seed) >> shift)
            }
            3 => match next(seed) % 3 {
                0 => {
                    let shift = next(seed) % 64;
                    json!(-((next(seed) >> shift) as i64 / 2) - 1)
                }
                _ => {
                    // Any finite float, of either sign.
                    let float = f64::from_bits(next(seed) % 0x7ff0_0000_0000_0000);
                    json!(if next(seed) % 2 == 0 { float } else { -float })
                }
            },
            4 => {
                let len = next(seed) % 12;
                let text: String = (0..len)
                    .map(|_| CHARS[(next(seed) % CHARS.len() as u64) as usize])
                    .collect();
                Value::String(text)
            }
            5 => {
                let len = next(seed) % 4;
                Value::Array((0..len).map(|_| generated(seed, depth - 1)).collect())
            }
            _ => {
                let len = next(seed) % 4;
                let mut fields = serde_json::Map::new();
                for index in 0..len {
                    let key = format!("k{index}\n{}", next(seed) % 3);
                    fields.insert(key, generated(seed, depth - 1));
                }
                Value::Object(fields)
            }
        }
    }

    #[test]
    fn thousands_of_generated_values_are_written_as_serde_json_writes_them() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        let mut kinds = std::collections::BTreeSet::new();
        for _ in 0..5_000 {
            let value = generated(&mut seed, 3);
            let expected = serde_json::to_string(&value).unwrap();
            assert_eq!(written(&value), expected);
            kinds.insert(expected.chars().next());
        }
        // Every kind of value was generated (`n`ull, `t`rue, digits, `-`, `"`, `[`, `{`).
        assert!(kinds.len() >= 10, "{kinds:?}");
    }

    #[test]
    fn sorted_text_is_the_same_whatever_order_the_keys_came_in() {
        let mut one = serde_json::Map::new();
        one.insert("b".to_owned(), json!([{"y": 1, "x": 2}]));
        one.insert("a".to_owned(), json!("\n"));
        let mut other = serde_json::Map::new();
        other.insert("a".to_owned(), json!("\n"));
        other.insert("b".to_owned(), json!([{"x": 2, "y": 1}]));
        let (mut first, mut second) = (Vec::new(), Vec::new());
        write_sorted(&mut first, &Value::Object(one));
        write_sorted(&mut second, &Value::Object(other));
        assert_eq!(first, second);
        assert_eq!(first, br#"{"a":"\n","b":[{"x":2,"y":1}]}"#);
    }

    #[test]
    fn a_string_is_escaped_the_same_into_a_byte_buffer() {
        let text = "tab\there \"q\" \u{1f} end";
        let mut bytes = Vec::new();
        write_str(&mut bytes, text);
        assert_eq!(bytes, serde_json::to_vec(text).unwrap());
    }
}
