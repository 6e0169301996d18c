//! JSON schemas adjusted to the part of JSON Schema that Gemini's `parametersJsonSchema` and
//! `responseJsonSchema` accept, without changing their meaning (see the module docs).

use serde_json::{Value, json};

/// A JSON schema adjusted to what Gemini's `parametersJsonSchema` and `responseJsonSchema`
/// accept, with the same meaning (see the module docs).
pub(super) fn gemini_schema(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Value::Object(root) = &mut schema {
        root.remove("$schema");
        if let Some(definitions) = root.remove("definitions") {
            match root.get_mut("$defs").and_then(Value::as_object_mut) {
                Some(defs) => {
                    if let Value::Object(definitions) = definitions {
                        for (name, definition) in definitions {
                            defs.entry(name).or_insert(definition);
                        }
                    }
                }
                None => {
                    root.insert("$defs".into(), definitions);
                }
            }
        }
    }
    adjust_schema(&mut schema);
    schema
}

fn adjust_schema(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(Value::String(reference)) = map.get_mut("$ref") {
        if let Some(name) = reference.strip_prefix("#/definitions/") {
            *reference = format!("#/$defs/{name}");
        }
    }
    if map.contains_key("$ref")
        && !map.contains_key("anyOf")
        && map.keys().any(|key| !key.starts_with('$'))
    {
        if let Some(reference) = map.remove("$ref") {
            map.insert("anyOf".into(), json!([{ "$ref": reference }]));
        }
    }
    if !map.contains_key("enum")
        && map
            .get("const")
            .is_some_and(|value| value.is_string() || value.is_number())
    {
        if let Some(value) = map.remove("const") {
            map.insert("enum".into(), json!([value]));
        }
    }
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                if let Value::Object(schemas) = value {
                    schemas.values_mut().for_each(adjust_schema);
                }
            }
            "items" | "additionalProperties" | "not" | "contains" | "propertyNames" => {
                match value {
                    Value::Array(schemas) => schemas.iter_mut().for_each(adjust_schema),
                    other => adjust_schema(other),
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(schemas) = value {
                    schemas.iter_mut().for_each(adjust_schema);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_keep_their_meaning_in_what_gemini_accepts() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "mode": {"$ref": "#/definitions/Mode", "description": "How."},
                "kind": {"const": "walk"},
                "list": {"items": {"const": 3}},
            },
            "definitions": {"Mode": {"type": "string"}},
        });
        assert_eq!(
            gemini_schema(&schema),
            json!({
                "type": "object",
                "properties": {
                    "mode": {"anyOf": [{"$ref": "#/$defs/Mode"}], "description": "How."},
                    "kind": {"enum": ["walk"]},
                    "list": {"items": {"enum": [3]}},
                },
                "$defs": {"Mode": {"type": "string"}},
            })
        );
    }
}
