//! JSON schemas (of tools and of structured output) rewritten into what Gemini accepts.

use super::{add_definition, model, prompt};
use reins::completion::CompletionRequest;
use reins::providers::gemini::GEMINI_2_5_FLASH;
use reins::tool::schema_of;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use wiremock::MockServer;

/// Where to go.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Route {
    /// The first stop.
    start: Point,
    stops: Vec<Point>,
    note: Option<String>,
    mode: Mode,
}

/// A point on the map.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Point {
    x: i64,
    y: i64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind")]
#[allow(dead_code)]
enum Mode {
    Walk,
    Drive,
}

/// Every value stored under `key`, anywhere in `value`.
fn find<'a>(value: &'a Value, key: &str) -> Vec<&'a Value> {
    let mut found = Vec::new();
    match value {
        Value::Object(map) => {
            if let Some(inner) = map.get(key) {
                found.push(inner);
            }
            for inner in map.values() {
                found.extend(find(inner, key));
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|inner| found.extend(find(inner, key))),
        _ => {}
    }
    found
}

#[tokio::test]
async fn schemas_are_adjusted_to_what_gemini_accepts() {
    let server = MockServer::start().await;
    let model = model(&server, GEMINI_2_5_FLASH);
    let schema = schema_of::<Route>();
    let request = CompletionRequest {
        tools: add_definition(schema.clone()),
        output_schema: Some(schema.clone()),
        ..prompt("route?")
    };
    let body = model.request_body(&request, false).unwrap();
    let parameters = &body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"];
    let output = &body["generationConfig"]["responseJsonSchema"];
    assert_eq!(
        parameters, output,
        "tools and output get the same treatment"
    );
    assert_eq!(
        body["generationConfig"]["responseMimeType"],
        "application/json"
    );

    // A documented field referring to a definition: the reference moves into `anyOf`, so no
    // `$ref` has sibling keywords, and the description stays.
    assert_eq!(
        parameters["properties"]["start"],
        json!({"anyOf": [{"$ref": "#/$defs/Point"}], "description": "The first stop."})
    );
    for node in find(parameters, "$ref") {
        assert!(node.is_string());
    }
    fn no_ref_siblings(value: &Value) {
        match value {
            Value::Object(map) => {
                if map.contains_key("$ref") {
                    assert!(map.keys().all(|key| key.starts_with('$')), "{value}");
                }
                map.values().for_each(no_ref_siblings);
            }
            Value::Array(items) => items.iter().for_each(no_ref_siblings),
            _ => {}
        }
    }
    no_ref_siblings(parameters);
    assert!(find(parameters, "const").is_empty(), "{parameters}");
    assert!(
        find(parameters, "enum").contains(&&json!(["Walk"])),
        "{parameters}"
    );
    assert!(parameters.get("$schema").is_none());
    assert_eq!(parameters["$defs"]["Point"], schema["$defs"]["Point"]);

    // Draft-07 `definitions` become `$defs`.
    let legacy = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"p": {"$ref": "#/definitions/P"}},
        "definitions": {"P": {"type": "string"}}
    });
    let request = CompletionRequest {
        tools: add_definition(legacy),
        ..prompt("x")
    };
    assert_eq!(
        model.request_body(&request, false).unwrap()["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"],
        json!({
            "type": "object",
            "properties": {"p": {"$ref": "#/$defs/P"}},
            "$defs": {"P": {"type": "string"}}
        })
    );
}
