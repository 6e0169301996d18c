//! A [`CompletionRequest`] as a `generateContent` body.

use super::GenerateContent;
use super::history::contents;
use super::names;
use super::schema::gemini_schema;
use crate::completion::{CompletionError, CompletionRequest};
use crate::message::ToolChoice;
use crate::providers::codec;
use serde_json::{Map, Value, json};

/// The JSON body sent for `request`: the same for blocking and streamed calls, which differ
/// only in their path.
pub(super) fn body(
    protocol: &GenerateContent,
    request: &CompletionRequest,
    _stream: bool,
) -> Result<Value, CompletionError> {
    let (system, contents) = contents(&protocol.model, request);
    let mut body = Map::new();
    if !system.is_empty() {
        body.insert("systemInstruction".into(), json!({ "parts": system }));
    }
    body.insert("contents".into(), Value::Array(contents));
    let declarations = codec::tool_list(request, |tool| {
        let mut declaration = Map::new();
        declaration.insert("name".into(), json!(names::function_name(&tool.name)));
        declaration.insert("description".into(), json!(tool.description));
        if !tool.parameters.is_null() {
            declaration.insert(
                "parametersJsonSchema".into(),
                gemini_schema(&tool.parameters),
            );
        }
        Value::Object(declaration)
    });
    if let Some(declarations) = declarations {
        body.insert(
            "tools".into(),
            json!([{ "functionDeclarations": declarations }]),
        );
        if let Some(choice) = &request.tool_choice {
            body.insert(
                "toolConfig".into(),
                json!({ "functionCallingConfig": tool_config(choice) }),
            );
        }
    }
    let mut generation = protocol.generation_config.clone();
    codec::insert_some(&mut generation, "temperature", request.temperature);
    codec::insert_some(&mut generation, "maxOutputTokens", request.max_tokens);
    if let Some(schema) = request
        .output_schema
        .as_ref()
        .filter(|_| protocol.native_output)
    {
        generation.insert("responseMimeType".into(), json!("application/json"));
        generation.insert("responseJsonSchema".into(), gemini_schema(schema));
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    codec::merge_additional_params(body, request)
}

/// A tool choice as a `functionCallingConfig`.
fn tool_config(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!({"mode": "AUTO"}),
        ToolChoice::None => json!({"mode": "NONE"}),
        ToolChoice::Required => json!({"mode": "ANY"}),
        ToolChoice::Specific(name) => {
            json!({"mode": "ANY", "allowedFunctionNames": [names::function_name(name)]})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;
    use crate::tool::ToolDefinition;

    fn protocol() -> GenerateContent {
        GenerateContent {
            model: "gemini-2.5-flash".into(),
            native_output: true,
            generation_config: Map::new(),
        }
    }

    #[test]
    fn additional_params_replace_top_level_keys_and_must_be_an_object() {
        let mut request = CompletionRequest::new(vec![Message::user("hi")]);
        request.temperature = Some(0.2);
        request.additional_params = Some(json!({"generationConfig": {"topK": 3}}));
        let body = body(&protocol(), &request, false).expect("a body");
        assert_eq!(body["generationConfig"], json!({"topK": 3}));
        request.additional_params = Some(json!([1, 2]));
        assert!(matches!(
            super::body(&protocol(), &request, false),
            Err(CompletionError::InvalidRequest(_))
        ));
    }

    #[test]
    fn tool_choice_is_sent_only_with_tools() {
        let mut request = CompletionRequest::new(vec![Message::user("hi")]);
        request.tool_choice = Some(ToolChoice::Specific("add".into()));
        let body_without = body(&protocol(), &request, false).expect("a body");
        assert!(body_without.get("toolConfig").is_none());
        request.tools = vec![ToolDefinition {
            name: "add".into(),
            description: "Adds.".into(),
            parameters: json!({"type": "object"}),
        }]
        .into();
        let body = body(&protocol(), &request, false).expect("a body");
        assert_eq!(
            body["toolConfig"],
            json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["add"]}})
        );
        assert_eq!(
            body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"],
            json!({"type": "object"})
        );
    }
}
