//! How deep JSON nests: `serde_json` reads at most [`READABLE_DEPTH`] levels of arrays and
//! objects in one document (its recursion limit, which keeps a parse from overflowing the
//! stack), so whatever is stored as one document must nest no deeper, including what it
//! holds: a tool call's arguments sit several levels down in a stored run.

use serde_json::Value;

/// The most levels of arrays and objects `serde_json` reads in one document: its recursion
/// limit is 128, and the 128th level is the one refused.
pub(crate) const READABLE_DEPTH: usize = 127;

/// The deepest nesting of arrays and objects in a JSON text (0 for a scalar); brackets inside
/// strings do not count. A text that is not JSON gets a number all the same (its brackets
/// counted as if it were), which only its parse can refuse.
pub(crate) fn text_depth(text: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in text {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Whether `value` nests more than `limit` levels of arrays and objects (a scalar nests 0).
/// Stops at the first level past `limit`, so it recurses at most `limit + 1` calls deep
/// whatever the value (callers pass limits of about a hundred). It allocates nothing: it runs
/// on every tool call a model makes, and a walk with a heap stack of its own cost a run of
/// ten small calls about 7,000 instructions.
pub(crate) fn nests_deeper_than(value: &Value, limit: usize) -> bool {
    // `limit - 1` is reached only when `limit` is not 0.
    match value {
        Value::Array(items) => {
            limit == 0 || items.iter().any(|item| nests_deeper_than(item, limit - 1))
        }
        Value::Object(members) => {
            limit == 0
                || members
                    .values()
                    .any(|member| nests_deeper_than(member, limit - 1))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `levels` objects, one inside the other.
    fn nested(levels: usize) -> Value {
        (0..levels).fold(json!(1), |inner, _| json!({ "a": inner }))
    }

    #[test]
    fn depth_counts_arrays_and_objects_not_brackets_in_strings() {
        assert_eq!(text_depth(b"1"), 0);
        assert_eq!(text_depth(br#"{"a":[1,{"b":"[[[{"}],"c":"\"{"}"#), 3);
        assert_eq!(text_depth(br#"[[],[[]]]"#), 3);
        let text = serde_json::to_string(&nested(40)).unwrap_or_default();
        assert_eq!(text_depth(text.as_bytes()), 40);
        assert!(nests_deeper_than(&nested(40), 39));
        assert!(!nests_deeper_than(&nested(40), 40));
        assert!(!nests_deeper_than(&json!("{[{["), 0));
        assert!(nests_deeper_than(&json!([[], [[1]]]), 2));
    }

    #[test]
    fn serde_json_reads_exactly_the_readable_depth() {
        let readable = serde_json::to_string(&nested(READABLE_DEPTH)).unwrap_or_default();
        assert!(serde_json::from_str::<Value>(&readable).is_ok());
        let deeper = serde_json::to_string(&nested(READABLE_DEPTH + 1)).unwrap_or_default();
        assert!(serde_json::from_str::<Value>(&deeper).is_err());
    }
}
