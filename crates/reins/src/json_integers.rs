//! Integers beyond 64 bits in a model's tool-call arguments. `serde_json` (built without
//! `arbitrary_precision`, which would change how every crate in a program reads numbers)
//! reads an integer literal outside the range of `i64` and `u64` as the nearest `f64`:
//! `123456789012345678901234` becomes `1.2345678901234568e23`, another number. A tool would
//! run with it, and hooks and the stored run would see it, none of them told. So arguments
//! holding such a literal are kept as their text, which makes the call malformed, and the
//! model is told which number to send as a string instead.
//!
//! The common path stays cheap: only a parsed value holding a whole `f64` beyond 64 bits
//! (which an integer literal that large is read as, and a float literal such as `1e30` too)
//! has its text scanned for an integer literal, to tell the two apart.

use crate::json_text::write_str;
use crate::json_weight::string_end;
use serde_json::Value;
use std::cell::OnceCell;
use std::collections::HashMap;

/// The least integer read exactly: `i64::MIN`.
const LEAST: &str = "-9223372036854775808";
/// The greatest integer read exactly: `u64::MAX`.
const GREATEST: &str = "18446744073709551615";

/// Whether `value` holds a number an integer literal beyond 64 bits is read as: an `f64`
/// at or below `i64::MIN` or above `u64::MAX` (every such `f64` is whole). An exactly read
/// integer is never one, so arguments without huge numbers cost a walk of their values.
pub(crate) fn holds_rounded_integer(value: &Value) -> bool {
    match value {
        Value::Number(number) => number.is_f64() && number.as_f64().is_some_and(beyond_64_bits),
        Value::Array(items) => items.iter().any(holds_rounded_integer),
        Value::Object(members) => members.values().any(holds_rounded_integer),
        _ => false,
    }
}

/// Whether the `f64` `x` lies outside the integers `i64` and `u64` hold together.
fn beyond_64_bits(x: f64) -> bool {
    // -2^63 and 2^64 as `f64`, both exact. An integer literal below -2^63 is read as -2^63
    // at most, and one above 2^64 − 1 as 2^64 at least.
    const LOW: f64 = -9_223_372_036_854_775_808.0;
    const HIGH: f64 = 18_446_744_073_709_551_616.0;
    x <= LOW || x >= HIGH
}

/// The first integer literal outside strings in `text` that no `i64` or `u64` holds (a
/// float literal such as `1e30` or `1.0` is not one), as written. For any text: one that is
/// not JSON is scanned as if it were.
pub(crate) fn oversized_integer(text: &str) -> Option<&str> {
    oversized_integers(text).next()
}

/// [`oversized_integer`] of `text` when `text` is JSON (its numbers of any length): why JSON
/// arguments text was refused. Text that is not JSON (cut off, single-quoted) is refused for
/// that, whatever digits it holds, and the model is told so instead.
pub(crate) fn oversized_integer_in_json(text: &str) -> Option<&str> {
    // Read without keeping anything, numbers unbounded: no integer makes it fail.
    serde_json::from_str::<serde::de::IgnoredAny>(text)
        .is_ok()
        .then(|| oversized_integer(text))
        .flatten()
}

/// Every integer literal outside strings in `text` that no `i64` or `u64` holds, in order
/// (see [`oversized_integer`]).
fn oversized_integers(text: &str) -> impl Iterator<Item = &str> {
    #[cfg(test)]
    tests::SCANS.with(|scans| scans.set(scans.get() + 1));
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while let Some(&byte) = bytes.get(at) {
            match byte {
                b'"' => at = string_end(bytes, at + 1).map_or(bytes.len(), |end| end + 1),
                b'-' | b'0'..=b'9' => {
                    let start = at;
                    at += 1;
                    while bytes.get(at).is_some_and(u8::is_ascii_digit) {
                        at += 1;
                    }
                    let integer_end = at;
                    // A fraction or an exponent makes it a float literal: read as one.
                    while bytes
                        .get(at)
                        .is_some_and(|b| b.is_ascii_digit() || b"+-.eE".contains(b))
                    {
                        at += 1;
                    }
                    // Every byte before `at` so far is ASCII: both ends are boundaries.
                    let literal = text.get(start..integer_end).unwrap_or_default();
                    if integer_end == at && beyond_64_bits_literal(literal) {
                        return Some(literal);
                    }
                }
                _ => at += 1,
            }
        }
        None
    })
}

/// Whether the integer literal `literal` (an optional `-`, then digits) is outside the
/// range of `i64` and `u64` together.
fn beyond_64_bits_literal(literal: &str) -> bool {
    let (digits, bound) = match literal.strip_prefix('-') {
        Some(digits) => (digits, &LEAST[1..]),
        None => (literal, GREATEST),
    };
    let digits = digits.trim_start_matches('0');
    // Of two runs of digits without leading zeros, the longer is the larger; of two of one
    // length, the one that sorts later.
    digits.len() > bound.len() || (digits.len() == bound.len() && digits > bound)
}

/// The JSON text of `value`, parsed from `source` (a document that holds it), with each
/// number an integer literal of `source` beyond 64 bits was rounded to written as that
/// literal again: the arguments as the model wrote them, up to spacing and key order.
/// `None` when `value` holds no such number (then nothing is to be kept as text).
///
/// Two such literals of one document that round to the same `f64` cannot be told apart:
/// either may be written for either. The arguments are refused all the same.
pub(crate) fn exact_text(value: &Value, source: &str) -> Option<String> {
    OversizedLiterals::in_source(source).exact_text(value)
}

/// The integer literals beyond 64 bits of one document (a body, an event), by the `f64`
/// each is read as: found the first time one of the document's values needs them, and kept
/// for the others. A document holding many tool calls is scanned once rather than once a
/// call, which a hostile server sending thousands of calls in one body would make quadratic.
#[derive(Debug)]
pub(crate) struct OversizedLiterals<'a> {
    source: &'a str,
    by_value: OnceCell<HashMap<u64, &'a str>>,
}

impl<'a> OversizedLiterals<'a> {
    /// The literals of `source`, not scanned yet.
    pub(crate) fn in_source(source: &'a str) -> Self {
        OversizedLiterals {
            source,
            by_value: OnceCell::new(),
        }
    }

    /// [`exact_text`] of `value`, read from this document.
    pub(crate) fn exact_text(&self, value: &Value) -> Option<String> {
        if !holds_rounded_integer(value) {
            return None;
        }
        let literals = self.by_value.get_or_init(|| {
            let mut by_value = HashMap::new();
            for literal in oversized_integers(self.source) {
                if let Ok(read) = literal.parse::<f64>() {
                    by_value.entry(read.to_bits()).or_insert(literal);
                }
            }
            by_value
        });
        let mut text = String::new();
        let mut restored = false;
        write_restoring(&mut text, value, literals, &mut restored);
        restored.then_some(text)
    }

    /// Replaces `arguments`, read from this document, by the model's text of them
    /// ([`exact_text`]) when they hold a number an integer beyond 64 bits was rounded to:
    /// kept as text, they are refused as arguments text holding one is.
    pub(crate) fn keep_text_if_rounded(&self, arguments: &mut Value) {
        if let Some(text) = self.exact_text(arguments) {
            *arguments = Value::String(text);
        }
    }
}

/// Writes `value` as compact JSON, each rounded number written as the literal of `literals`
/// it was read from, when there is one; says in `restored` whether one was.
fn write_restoring(
    out: &mut String,
    value: &Value,
    literals: &HashMap<u64, &str>,
    restored: &mut bool,
) {
    match value {
        Value::Number(number) => {
            let literal = number
                .as_f64()
                .filter(|_| number.is_f64())
                .and_then(|x| literals.get(&x.to_bits()));
            match literal {
                Some(literal) => {
                    out.push_str(literal);
                    *restored = true;
                }
                None => out.push_str(&number.to_string()),
            }
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_restoring(out, item, literals, restored);
            }
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (index, (key, member)) in members.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_str(out, key);
                out.push(':');
                write_restoring(out, member, literals, restored);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// `literal` as a message shows it: whole, or its start and how many digits it has when
/// it is long (a model may write thousands).
pub(crate) fn shown_literal(literal: &str) -> String {
    const SHOWN: usize = 40;
    match literal.get(..SHOWN) {
        Some(start) if literal.len() > SHOWN + 10 => {
            let digits = literal.trim_start_matches('-').len();
            format!("{start}… ({digits} digits)")
        }
        _ => literal.to_owned(),
    }
}

/// The message a model gets for arguments holding `literal`, an integer beyond 64 bits.
pub(crate) fn too_large_message(literal: &str) -> String {
    let shown = shown_literal(literal);
    format!(
        "the number {shown} is an integer too large to be read exactly (integers are read \
         exactly from {LEAST} to {GREATEST}); send it as a string instead (\"{shown}\")"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::cell::Cell;

    thread_local! {
        /// How many times this thread's tests scanned a text for literals.
        pub(super) static SCANS: Cell<usize> = const { Cell::new(0) };
    }

    /// A body or event of many calls, each with a huge integer (512, the most parts an
    /// answer may have), is scanned once for all of them: once a call, a hostile server's
    /// 32 MiB body would be read 512 times over. Each call still gets its own literal.
    #[test]
    fn a_document_of_many_calls_is_scanned_once() {
        let literal = |i: usize| format!("{}00000000000000000000", i + 1);
        let calls: Vec<String> = (0..512)
            .map(|i| format!(r#"{{"input":{{"n":{}}}}}"#, literal(i)))
            .collect();
        let source = format!("[{}]", calls.join(","));
        let document: Value = serde_json::from_str(&source).unwrap_or_default();
        let before = SCANS.with(Cell::get);
        let literals = OversizedLiterals::in_source(&source);
        for (i, call) in document.as_array().into_iter().flatten().enumerate() {
            let text = literals.exact_text(&call["input"]);
            assert_eq!(text, Some(format!(r#"{{"n":{}}}"#, literal(i))));
        }
        assert_eq!(SCANS.with(Cell::get) - before, 1);
    }

    #[test]
    fn integers_beyond_64_bits_are_found_outside_strings_and_floats_are_not() {
        let text = r#"{"s":"123456789012345678901234","f":1e30,"g":123456789012345678901234.0,"n":-9223372036854775809,"big":123456789012345678901234}"#;
        let found: Vec<_> = oversized_integers(text).collect();
        assert_eq!(found, ["-9223372036854775809", "123456789012345678901234"]);
        // The bounds themselves are read exactly.
        for exact in [LEAST, GREATEST, "0", "-0", "00018446744073709551615"] {
            assert_eq!(oversized_integer(exact), None, "{exact}");
        }
        assert_eq!(
            oversized_integer("18446744073709551616"),
            Some("18446744073709551616")
        );
        assert_eq!(
            oversized_integer(r#"["\"", 1, "\\", 99999999999999999999]"#),
            Some("99999999999999999999")
        );
    }

    #[test]
    fn only_json_text_is_refused_for_its_integers() {
        let huge = "123456789012345678901234";
        let endless = "9".repeat(400);
        for json in [format!(r#"{{"a":{huge}}}"#), format!("[{endless}]")] {
            assert!(oversized_integer_in_json(&json).is_some(), "{json}");
        }
        for broken in [format!(r#"{{"a":{huge},"b"#), format!("{{'a':'{huge}'}}")] {
            assert_eq!(oversized_integer_in_json(&broken), None, "{broken}");
        }
    }

    #[test]
    fn only_a_huge_whole_float_is_a_rounded_integer() {
        let parsed = |text: &str| serde_json::from_str::<Value>(text).unwrap_or_default();
        assert!(!holds_rounded_integer(
            &json!({"a": u64::MAX, "b": i64::MIN, "c": 1.5})
        ));
        assert!(holds_rounded_integer(&parsed(
            r#"{"a":[18446744073709551616]}"#
        )));
        assert!(holds_rounded_integer(&parsed(r#"[-9223372036854775809]"#)));
        assert!(holds_rounded_integer(&parsed(r#"{"a":1e30}"#)));
        assert!(!holds_rounded_integer(&parsed(r#"{"a":1e18,"b":-1e18}"#)));
    }

    #[test]
    fn exact_text_writes_the_literals_back() {
        let source = r#"{"content":[{"input":{"id":123456789012345678901234,"x":1e30,"s":"é\"","n":[1,2.5,null,true]}}]}"#;
        let document: Value = serde_json::from_str(source).unwrap_or_default();
        let input = &document["content"][0]["input"];
        let text = exact_text(input, source).unwrap_or_default();
        // Keys in the map's order (sorted, unless serde_json's `preserve_order` is on).
        for member in [
            r#""id":123456789012345678901234"#,
            r#""n":[1,2.5,null,true]"#,
            r#""s":"é\"""#,
            r#""x":1e+30"#,
        ] {
            assert!(text.contains(member), "{member} in {text}");
        }
        assert_eq!(
            text.len(),
            r#"{"id":123456789012345678901234,"n":[1,2.5,null,true],"s":"é\"","x":1e+30}"#.len()
        );
        // A float literal alone is the model's own number: nothing to restore.
        let floats = r#"{"x":1e30}"#;
        let parsed: Value = serde_json::from_str(floats).unwrap_or_default();
        assert_eq!(exact_text(&parsed, floats), None);
        assert_eq!(exact_text(&json!({"a": 1}), source), None);
    }

    #[test]
    fn long_literals_are_shown_cut() {
        assert_eq!(shown_literal("123"), "123");
        let long = "9".repeat(500);
        assert_eq!(
            shown_literal(&long),
            format!("{}… (500 digits)", "9".repeat(40))
        );
    }
}
