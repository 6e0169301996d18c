//! Where reading a JSON value as a type failed, named in the message: a model told which
//! field of its arguments (or of its structured answer) was wrong can fix that one field.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// The most characters of a path shown: its map keys are the model's own, of any length.
const MAX_PATH_CHARS: usize = 200;

/// `value` read as a `T`. On failure, serde's message, after the place it failed at when
/// that is not the top level: `` at `items[2].amount`: invalid type: string "ten", expected
/// u64 ``.
///
/// The place is found by reading the value a second time, on failure only: tracking it on
/// every read would cost each tool call, and nearly all of them succeed.
pub(crate) fn read_with_path<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
    T::deserialize(value).map_err(|error| explained::<T>(value, &error))
}

/// `error`, from reading `value` as a `T`, with the place it failed at.
#[cold]
fn explained<T: DeserializeOwned>(value: &Value, error: &serde_json::Error) -> String {
    // A type that reads the same value differently the second time (it has state of its
    // own) keeps the first message alone.
    let Err(tracked) = serde_path_to_error::deserialize::<_, T>(value) else {
        return error.to_string();
    };
    let path = tracked.path();
    if path
        .iter()
        .all(|segment| matches!(segment, serde_path_to_error::Segment::Unknown))
    {
        return error.to_string();
    }
    let path = path.to_string();
    let shown = match path.char_indices().nth(MAX_PATH_CHARS) {
        Some((end, _)) => format!("{}…", &path[..end]),
        None => path,
    };
    format!("at `{shown}`: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;
    use std::collections::BTreeMap;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Order {
        customer: String,
        items: Vec<Item>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Item {
        name: String,
        amount: u64,
    }

    #[test]
    fn a_wrong_field_deep_in_the_value_is_named_by_its_path() {
        let value = json!({"customer": "ann", "items": [
            {"name": "pen", "amount": 1},
            {"name": "ink", "amount": "ten"},
        ]});
        let message = read_with_path::<Order>(&value).unwrap_err();
        assert_eq!(
            message,
            "at `items[1].amount`: invalid type: string \"ten\", expected u64"
        );
    }

    #[test]
    fn a_missing_field_is_named_by_serde_and_placed_where_it_is_missing() {
        let message = read_with_path::<Order>(&json!({"customer": "ann"})).unwrap_err();
        assert_eq!(message, "missing field `items`");
        let value = json!({"customer": "ann", "items": [{"name": "pen"}]});
        let message = read_with_path::<Order>(&value).unwrap_err();
        assert_eq!(message, "at `items[0]`: missing field `amount`");
    }

    #[test]
    fn a_value_that_reads_is_returned() {
        let value = json!({"customer": "ann", "items": [{"name": "pen", "amount": 2}]});
        let order = read_with_path::<Order>(&value).unwrap();
        assert_eq!(order.items[0].amount, 2);
    }

    #[test]
    fn a_long_key_of_the_models_is_cut_short_in_the_path() {
        let key = "k".repeat(10_000);
        let value = json!({ key.clone(): "not a number" });
        let message = read_with_path::<BTreeMap<String, u64>>(&value).unwrap_err();
        assert!(
            message.starts_with(&format!("at `{}…`: ", "k".repeat(MAX_PATH_CHARS))),
            "{message}"
        );
        assert!(message.len() < 400, "{message}");
    }
}
