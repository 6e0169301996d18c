//! Grammars that constrain the model's output to a valid call of an advertised tool, built
//! from the tools' JSON schemas with llama.cpp's json-schema-to-grammar.

use super::LocalModelError;
use super::template::{CALL_CLOSE, CALL_OPEN};
use crate::message::ToolChoice;
use crate::tool::ToolDefinition;
use serde_json::{Map, Value, json};

/// The longest string a grammar lets the model write where the schema sets no bound, so a
/// small model cannot loop inside a string until its token budget runs out.
pub(super) const MAX_STRING_LENGTH: u64 = 256;
/// The most array items a grammar allows where the schema sets no bound.
pub(super) const MAX_ARRAY_ITEMS: u64 = 16;
/// The most calls the model may make in one turn when it chooses to call tools.
const MAX_CALLS_PER_TURN: usize = 4;

/// The grammar the model must follow for `choice`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum ToolGrammar {
    /// No constraint: plain text (no tools, or `ToolChoice::None`).
    None,
    /// The whole output is one call object `{"name": ..., "arguments": ...}`; the prompt ends
    /// with the opening tag.
    Forced(String),
    /// Free text until the model writes the opening tag; from there on, calls in tags.
    Lazy(String),
    /// The whole output is JSON matching the request's output schema.
    Json(String),
}

/// The grammar of a JSON answer matching `schema` (native structured output).
pub(super) fn output_grammar(schema: &Value) -> Result<ToolGrammar, LocalModelError> {
    let mut schema = schema.clone();
    harden(&mut schema);
    let grammar = llama_cpp_2::json_schema_to_grammar(&schema.to_string()).map_err(|error| {
        LocalModelError::Grammar(format!(
            "llama.cpp could not turn the output schema into a grammar ({error}); \
             schema: {schema}"
        ))
    })?;
    Ok(ToolGrammar::Json(grammar))
}

/// The grammar for a request's tools and tool choice.
pub(super) fn tool_grammar(
    tools: &[ToolDefinition],
    choice: Option<&ToolChoice>,
) -> Result<ToolGrammar, LocalModelError> {
    match choice {
        None | Some(ToolChoice::Auto) if tools.is_empty() => Ok(ToolGrammar::None),
        Some(ToolChoice::None) => Ok(ToolGrammar::None),
        None | Some(ToolChoice::Auto) => {
            let calls = call_grammar(tools)?;
            let grammar = format!(
                "{}\nroot ::= reins-call (\"\\n\" reins-call){{0,{}}}\n\
                 reins-call ::= \"{}\" [ \\n]{{0,2}} reins-call-json [ \\n]{{0,2}} \"{}\"\n",
                rename_root(&calls, "reins-call-json"),
                MAX_CALLS_PER_TURN - 1,
                CALL_OPEN,
                CALL_CLOSE,
            );
            Ok(ToolGrammar::Lazy(grammar))
        }
        Some(ToolChoice::Required) => {
            if tools.is_empty() {
                return Err(LocalModelError::InvalidRequest(
                    "the request requires a tool call but advertises no tool".to_owned(),
                ));
            }
            Ok(ToolGrammar::Forced(call_grammar(tools)?))
        }
        Some(ToolChoice::Specific(name)) => {
            let tool = tools
                .iter()
                .find(|tool| &tool.name == name)
                .ok_or_else(|| {
                    LocalModelError::InvalidRequest(format!(
                        "tool_choice names `{name}`, which is not among the advertised tools"
                    ))
                })?;
            Ok(ToolGrammar::Forced(call_grammar(std::slice::from_ref(
                tool,
            ))?))
        }
    }
}

/// The GBNF grammar (root rule `root`) of one call object of any of `tools`.
fn call_grammar(tools: &[ToolDefinition]) -> Result<String, LocalModelError> {
    let schema = call_schema(tools);
    llama_cpp_2::json_schema_to_grammar(&schema).map_err(|error| {
        LocalModelError::Grammar(format!(
            "llama.cpp could not turn the tools' JSON schemas into a grammar ({error}); \
             schema: {schema}"
        ))
    })
}

/// The JSON schema of `{"name": <tool>, "arguments": <its parameters>}` for any of `tools`,
/// as text: written by hand so `name` comes before `arguments` (the grammar follows the order
/// of `properties`, and a `Map` sorts its keys).
pub(super) fn call_schema(tools: &[ToolDefinition]) -> String {
    let mut defs = Map::new();
    let alternatives: Vec<String> = tools
        .iter()
        .enumerate()
        .map(|(index, tool)| {
            let mut parameters = tool.parameters.clone();
            let prefix = format!("t{index}-");
            hoist_definitions(&mut parameters, &prefix, &mut defs);
            rename_refs(&mut parameters, &prefix);
            let mut arguments = if parameters.as_object().is_none_or(Map::is_empty) {
                json!({"type": "object", "properties": {}})
            } else {
                parameters
            };
            harden(&mut arguments);
            format!(
                "{{\"type\": \"object\", \"properties\": {{\"name\": {{\"const\": {}}}, \
                 \"arguments\": {arguments}}}, \"required\": [\"name\", \"arguments\"], \
                 \"additionalProperties\": false}}",
                json!(tool.name)
            )
        })
        .collect();
    for def in defs.values_mut() {
        harden(def);
    }
    let defs = if defs.is_empty() {
        String::new()
    } else {
        format!(", \"$defs\": {}", Value::Object(defs))
    };
    match alternatives.as_slice() {
        [single] if defs.is_empty() => single.clone(),
        _ => format!("{{\"oneOf\": [{}]{defs}}}", alternatives.join(", ")),
    }
}

/// Renames the grammar's `root` rule.
fn rename_root(grammar: &str, name: &str) -> String {
    grammar
        .lines()
        .map(|line| match line.strip_prefix("root ::=") {
            Some(rest) => format!("{name} ::={rest}"),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Moves `$defs` / `definitions` out of a tool's schema into `defs`, prefixing their names.
fn hoist_definitions(schema: &mut Value, prefix: &str, defs: &mut Map<String, Value>) {
    let Value::Object(map) = schema else { return };
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(found)) = map.remove(key) {
            for (name, mut def) in found {
                rename_refs(&mut def, prefix);
                defs.insert(format!("{prefix}{name}"), def);
            }
        }
    }
}

/// Points local `$ref`s at the hoisted, prefixed definitions.
fn rename_refs(schema: &mut Value, prefix: &str) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if key == "$ref" {
                    if let Value::String(reference) = value {
                        for base in ["#/$defs/", "#/definitions/"] {
                            if let Some(name) = reference.strip_prefix(base) {
                                *reference = format!("#/$defs/{prefix}{name}");
                                break;
                            }
                        }
                    }
                } else {
                    rename_refs(value, prefix);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| rename_refs(item, prefix)),
        _ => {}
    }
}

/// Bounds what a grammar lets the model write: strings get a `maxLength`, arrays a
/// `maxItems`, and objects with declared properties no extra properties.
pub(super) fn harden(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    let has_type = |map: &Map<String, Value>, wanted: &str| match map.get("type") {
        Some(Value::String(kind)) => kind == wanted,
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == wanted),
        _ => false,
    };
    // A `pattern` may repeat without bound: it gets a `maxLength` too.
    let bounded = ["maxLength", "enum", "const", "format"]
        .iter()
        .any(|key| map.contains_key(*key));
    if has_type(map, "string") && !bounded {
        map.insert("maxLength".to_owned(), json!(MAX_STRING_LENGTH));
    }
    if has_type(map, "array") && !map.contains_key("maxItems") {
        map.insert("maxItems".to_owned(), json!(MAX_ARRAY_ITEMS));
    }
    if map.contains_key("properties") && !map.contains_key("additionalProperties") {
        map.insert("additionalProperties".to_owned(), json!(false));
    }
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                if let Value::Object(children) = value {
                    children.values_mut().for_each(harden);
                }
            }
            "items" | "additionalProperties" | "not" | "contains" => harden(value),
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(children) = value {
                    children.iter_mut().for_each(harden);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, parameters: Value) -> ToolDefinition {
        ToolDefinition {
            name: name.to_owned(),
            description: String::new(),
            parameters,
        }
    }

    #[test]
    fn strings_and_arrays_are_bounded_and_objects_closed() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a"]}},
                "day": {"type": "string", "format": "date"},
            },
        });
        harden(&mut schema);
        assert_eq!(schema["properties"]["text"]["maxLength"], MAX_STRING_LENGTH);
        assert_eq!(schema["properties"]["tags"]["maxItems"], MAX_ARRAY_ITEMS);
        assert!(
            schema["properties"]["tags"]["items"]
                .get("maxLength")
                .is_none()
        );
        assert!(schema["properties"]["day"].get("maxLength").is_none());
        assert_eq!(schema["additionalProperties"], false);
    }

    #[test]
    fn definitions_are_hoisted_and_references_renamed() {
        let tools = [
            tool(
                "a",
                json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}},
                       "$defs": {"X": {"type": "string"}}}),
            ),
            tool("b", json!({})),
        ];
        let schema: Value = serde_json::from_str(&call_schema(&tools)).unwrap_or_default();
        assert!(call_schema(&tools).find("\"name\"") < call_schema(&tools).find("\"arguments\""));
        let first = &schema["oneOf"][0]["properties"];
        assert_eq!(first["name"]["const"], "a");
        assert_eq!(
            first["arguments"]["properties"]["x"]["$ref"],
            "#/$defs/t0-X"
        );
        assert_eq!(schema["$defs"]["t0-X"]["maxLength"], MAX_STRING_LENGTH);
        assert_eq!(
            schema["oneOf"][1]["properties"]["arguments"]["properties"],
            json!({})
        );
    }

    #[test]
    fn the_tool_choice_decides_the_grammar() {
        let tools = [tool("a", json!({"type": "object"}))];
        assert_eq!(tool_grammar(&[], None).ok(), Some(ToolGrammar::None));
        assert_eq!(
            tool_grammar(&tools, Some(&ToolChoice::None)).ok(),
            Some(ToolGrammar::None)
        );
        let missing = tool_grammar(&tools, Some(&ToolChoice::Specific("zzz".into())));
        assert!(matches!(missing, Err(LocalModelError::InvalidRequest(m)) if m.contains("zzz")));
        let required = tool_grammar(&[], Some(&ToolChoice::Required));
        assert!(matches!(required, Err(LocalModelError::InvalidRequest(_))));
    }
}
