//! Grammars that constrain the model's output to a valid call of an advertised tool, built
//! from the tools' JSON schemas with llama.cpp's json-schema-to-grammar.

use super::LocalModelError;
use super::template::{CALL_CLOSE, CALL_OPEN};
use crate::message::ToolChoice;
use crate::tool::ToolDefinition;
use serde_json::{Map, Value, json};

/// The most characters a grammar lets the model write in one string of a tool call's
/// arguments or a typed answer, when the schema gives none: see
/// [`LocalModelBuilder::max_string_length`](crate::providers::local::LocalModelBuilder::max_string_length).
pub const DEFAULT_MAX_STRING_LENGTH: u32 = 2000;

/// The most items a grammar lets the model write in one array of a tool call's arguments or
/// a typed answer, when the schema gives none: see [`LocalModelBuilder::max_array_items`](crate::providers::local::LocalModelBuilder::max_array_items).
pub const DEFAULT_MAX_ARRAY_ITEMS: u32 = 256;

/// The highest count a llama.cpp grammar can bound (its GBNF parser turns a larger
/// repetition into an unbounded one): a string or array limit above it means no limit.
pub const MAX_GRAMMAR_REPETITION: u32 = 2000;

/// The most calls the model may make in one turn when it chooses to call tools.
const MAX_CALLS_PER_TURN: usize = 4;

/// How much a grammar lets the model write where a schema sets no bound, so a small model
/// cannot loop inside a string or an array until its token budget runs out (see
/// [`LocalModelBuilder::max_string_length`](crate::providers::local::LocalModelBuilder::max_string_length)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Limits {
    /// The most characters of a string; above [`MAX_GRAMMAR_REPETITION`], no bound.
    pub string_length: u32,
    /// The most items of an array; above [`MAX_GRAMMAR_REPETITION`], no bound.
    pub array_items: u32,
}

impl Limits {
    fn string_bound(self) -> Option<u32> {
        (self.string_length <= MAX_GRAMMAR_REPETITION).then_some(self.string_length)
    }

    fn array_bound(self) -> Option<u32> {
        (self.array_items <= MAX_GRAMMAR_REPETITION).then_some(self.array_items)
    }

    /// Whether `value` holds a string or an array as long as a bound: the grammar may have
    /// cut it there, so the call or answer is reported as truncated. (A value the model
    /// ended at exactly the bound by itself is reported the same way: it cannot be told
    /// apart.)
    pub fn reached_by(self, value: &Value) -> bool {
        match value {
            Value::String(text) => self
                .string_bound()
                .is_some_and(|bound| text.chars().count() >= bound as usize),
            Value::Array(items) => {
                self.array_bound()
                    .is_some_and(|bound| items.len() >= bound as usize)
                    || items.iter().any(|item| self.reached_by(item))
            }
            Value::Object(map) => map.values().any(|item| self.reached_by(item)),
            _ => false,
        }
    }
}

/// The grammar the model must follow for `choice`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum ToolGrammar {
    /// No constraint: plain text (no tools, or `ToolChoice::None`).
    None,
    /// The whole output is one call object `{"name": ..., "arguments": ...}`; the prompt ends
    /// with the opening tag.
    Forced(String),
    /// Free text until the model writes the opening tag; from there on, this grammar, whose
    /// root is what follows the tag: the rest of the call, then more calls or the end.
    Lazy(String),
    /// The whole output is JSON matching the request's output schema.
    Json(String),
}

/// The grammar of a JSON answer matching `schema` (native structured output).
pub(super) fn output_grammar(
    schema: &Value,
    limits: Limits,
) -> Result<ToolGrammar, LocalModelError> {
    let mut schema = schema.clone();
    harden(&mut schema, limits);
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
    limits: Limits,
) -> Result<ToolGrammar, LocalModelError> {
    match choice {
        None | Some(ToolChoice::Auto) if tools.is_empty() => Ok(ToolGrammar::None),
        Some(ToolChoice::None) => Ok(ToolGrammar::None),
        None | Some(ToolChoice::Auto) => {
            let calls = call_grammar(tools, limits)?;
            // The worker watches for the opening tag itself and starts this grammar right
            // after it (see `sampler`): the rest of the first call, then further calls.
            let grammar = format!(
                "{}\nroot ::= reins-call-rest (\"\\n\" reins-call){{0,{}}}\n\
                 reins-call ::= \"{}\" reins-call-rest\n\
                 reins-call-rest ::= [ \\n]{{0,2}} reins-call-json [ \\n]{{0,2}} \"{}\"\n",
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
            Ok(ToolGrammar::Forced(call_grammar(tools, limits)?))
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
            Ok(ToolGrammar::Forced(call_grammar(
                std::slice::from_ref(tool),
                limits,
            )?))
        }
    }
}

/// The GBNF grammar (root rule `root`) of one call object of any of `tools`.
fn call_grammar(tools: &[ToolDefinition], limits: Limits) -> Result<String, LocalModelError> {
    let schema = call_schema(tools, limits);
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
pub(super) fn call_schema(tools: &[ToolDefinition], limits: Limits) -> String {
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
            harden(&mut arguments, limits);
            format!(
                "{{\"type\": \"object\", \"properties\": {{\"name\": {{\"const\": {}}}, \
                 \"arguments\": {arguments}}}, \"required\": [\"name\", \"arguments\"], \
                 \"additionalProperties\": false}}",
                json!(tool.name)
            )
        })
        .collect();
    for def in defs.values_mut() {
        harden(def, limits);
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
/// `maxItems` (each unless `limits` leaves them unbounded), and objects with declared
/// properties no extra properties.
pub(super) fn harden(schema: &mut Value, limits: Limits) {
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
    if let Some(bound) = limits
        .string_bound()
        .filter(|_| has_type(map, "string") && !bounded)
    {
        map.insert("maxLength".to_owned(), json!(bound));
    }
    if let Some(bound) = limits
        .array_bound()
        .filter(|_| has_type(map, "array") && !map.contains_key("maxItems"))
    {
        map.insert("maxItems".to_owned(), json!(bound));
    }
    if map.contains_key("properties") && !map.contains_key("additionalProperties") {
        map.insert("additionalProperties".to_owned(), json!(false));
    }
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                if let Value::Object(children) = value {
                    children
                        .values_mut()
                        .for_each(|child| harden(child, limits));
                }
            }
            "items" | "additionalProperties" | "not" | "contains" => harden(value, limits),
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(children) = value {
                    children.iter_mut().for_each(|child| harden(child, limits));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        string_length: 300,
        array_items: 20,
    };

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
        let unbounded = Limits {
            string_length: MAX_GRAMMAR_REPETITION + 1,
            array_items: MAX_GRAMMAR_REPETITION + 1,
        };
        let mut open = schema.clone();
        harden(&mut open, unbounded);
        assert!(open["properties"]["text"].get("maxLength").is_none());
        assert!(open["properties"]["tags"].get("maxItems").is_none());
        harden(&mut schema, LIMITS);
        assert_eq!(schema["properties"]["text"]["maxLength"], 300);
        assert_eq!(schema["properties"]["tags"]["maxItems"], 20);
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
        let text = call_schema(&tools, LIMITS);
        let schema: Value = serde_json::from_str(&text).unwrap_or_default();
        assert!(text.find("\"name\"") < text.find("\"arguments\""));
        let first = &schema["oneOf"][0]["properties"];
        assert_eq!(first["name"]["const"], "a");
        assert_eq!(
            first["arguments"]["properties"]["x"]["$ref"],
            "#/$defs/t0-X"
        );
        assert_eq!(schema["$defs"]["t0-X"]["maxLength"], 300);
        assert_eq!(
            schema["oneOf"][1]["properties"]["arguments"]["properties"],
            json!({})
        );
    }

    #[test]
    fn the_tool_choice_decides_the_grammar() {
        let tools = [tool("a", json!({"type": "object"}))];
        assert_eq!(
            tool_grammar(&[], None, LIMITS).ok(),
            Some(ToolGrammar::None)
        );
        assert_eq!(
            tool_grammar(&tools, Some(&ToolChoice::None), LIMITS).ok(),
            Some(ToolGrammar::None)
        );
        let missing = tool_grammar(&tools, Some(&ToolChoice::Specific("zzz".into())), LIMITS);
        assert!(matches!(missing, Err(LocalModelError::InvalidRequest(m)) if m.contains("zzz")));
        let required = tool_grammar(&[], Some(&ToolChoice::Required), LIMITS);
        assert!(matches!(required, Err(LocalModelError::InvalidRequest(_))));
    }

    #[test]
    fn values_as_long_as_a_bound_count_as_cut() {
        let long = "x".repeat(300);
        assert!(LIMITS.reached_by(&json!({"a": [{"b": long}]})));
        assert!(!LIMITS.reached_by(&json!({"a": "x".repeat(299), "b": [1, 2]})));
        assert!(LIMITS.reached_by(&json!({"a": vec![0; 20]})));
        let unbounded = Limits {
            string_length: MAX_GRAMMAR_REPETITION + 1,
            array_items: MAX_GRAMMAR_REPETITION + 1,
        };
        assert!(!unbounded.reached_by(&json!({"a": "x".repeat(5000)})));
    }
}
