//! What the model is shown of a server's tool: a name every provider accepts and an object
//! schema of bounded size. Servers are not bound by providers' rules, and one tool a
//! provider refuses fails the whole model request, so every tool of the list is made
//! acceptable here.

use serde_json::{Map, Value};
use std::fmt::Display;

/// The longest tool name providers accept (OpenAI, Anthropic and Gemini: 64 characters).
pub(crate) const MAX_TOOL_NAME: usize = 64;

/// The name the model calls a server's tool `remote` by: `prefix` + `remote`, each character
/// providers refuse in a name (anything but ASCII letters, digits, `_` and `-`) replaced by
/// `_`, and `_` put first when it would start with anything but a letter or `_` (Gemini
/// refuses a name starting with a digit or `-`), cut to [`MAX_TOOL_NAME`] characters. Calls
/// still go to the server as `remote`.
pub(crate) fn model_name(prefix: &str, remote: &str) -> String {
    let mut name: String = prefix
        .chars()
        .chain(remote.chars())
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    // An empty name is refused too; the server gave one anyway.
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    // Every character is ASCII now, one byte each.
    name.truncate(MAX_TOOL_NAME);
    name
}

/// The server's `inputSchema` as the model is given it: MCP requires an object schema, and
/// providers refuse anything else. A schema without `type` is given `"type": "object"` (its
/// properties kept); one of another type, which no MCP call could satisfy, becomes an
/// object schema without properties. Either is logged as a warning naming the tool (`tool`:
/// its name as warnings show it, `hidden.rs`).
pub(crate) fn object_schema(
    server: &str,
    tool: impl Display,
    mut schema: Map<String, Value>,
) -> Value {
    match schema.get("type") {
        Some(Value::String(kind)) if kind == "object" => {}
        None => {
            tracing::warn!(
                target: "reins_mcp",
                server = %server,
                tool = %tool,
                "the tool's inputSchema has no `type`; it is given `\"type\": \"object\"`"
            );
            schema.insert("type".to_owned(), Value::from("object"));
        }
        Some(other) => {
            tracing::warn!(
                target: "reins_mcp",
                server = %server,
                tool = %tool,
                kind = %other,
                "the tool's inputSchema is not an object schema; the model is given an \
                 object schema without properties"
            );
            schema = Map::new();
            schema.insert("type".to_owned(), Value::from("object"));
        }
    }
    Value::Object(schema)
}

/// The size as JSON text of a schema (`which`: `inputSchema` or `outputSchema`) of the
/// server's tool `tool`, when it is at most `max_bytes`; a larger one is logged as a warning
/// naming the tool (`tool`: its name as warnings show it, `hidden.rs`), which is left out.
pub(crate) fn schema_within(
    server: &str,
    tool: impl Display,
    which: &str,
    schema: &Map<String, Value>,
    max_bytes: usize,
) -> Option<usize> {
    let mut size = ByteCount(0);
    // Writing into a counter cannot fail, and a map of JSON values always serializes.
    let _ = serde_json::to_writer(&mut size, schema);
    if size.0 <= max_bytes {
        return Some(size.0);
    }
    tracing::warn!(
        target: "reins_mcp",
        server = %server,
        tool = %tool,
        bytes = size.0,
        max_bytes,
        "the tool's {which} is larger than the limit; the tool is left out"
    );
    None
}

/// A writer that only counts what is written to it.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_keep_what_providers_accept_and_replace_the_rest() {
        assert_eq!(model_name("", "get_time-2"), "get_time-2");
        assert_eq!(model_name("fs_", "read file/v1.2"), "fs_read_file_v1_2");
        assert_eq!(model_name("", "météo"), "m_t_o");
        assert_eq!(model_name("", ""), "_");
        assert_eq!(model_name("p_", &"x".repeat(100)).len(), MAX_TOOL_NAME);
    }

    #[test]
    fn names_start_with_a_letter_or_underscore() {
        assert_eq!(model_name("", "1st_step"), "_1st_step");
        assert_eq!(model_name("", "-dash"), "_-dash");
        assert_eq!(model_name("", ".hidden"), "_hidden");
        assert_eq!(model_name("2_", "step"), "_2_step");
        assert_eq!(model_name("fs_", "1st"), "fs_1st");
        let long = model_name("", &"9".repeat(100));
        assert_eq!(long.len(), MAX_TOOL_NAME);
        assert!(long.starts_with("_9"), "{long}");
    }

    #[test]
    fn schemas_over_the_limit_are_refused() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let schema = schema.as_object().unwrap();
        let size = serde_json::to_string(schema).unwrap().len();
        assert_eq!(
            schema_within("s", "t", "inputSchema", schema, size),
            Some(size)
        );
        assert_eq!(
            schema_within("s", "t", "inputSchema", schema, size - 1),
            None
        );
    }

    #[test]
    fn schemas_become_object_schemas() {
        let object = |value: Value| value.as_object().cloned().unwrap();
        let given = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(object_schema("s", "t", object(given.clone())), given);
        assert_eq!(
            object_schema("s", "t", object(json!({"properties": {"a": {}}}))),
            json!({"type": "object", "properties": {"a": {}}})
        );
        assert_eq!(
            object_schema("s", "t", object(json!({"type": "string", "minLength": 1}))),
            json!({"type": "object"})
        );
    }
}
