//! The history of a request as Gemini's `systemInstruction` parts and `contents`, with thought
//! signatures placed where Gemini expects them (see the module docs).

use super::names;
use crate::completion::CompletionRequest;
use crate::message::{AssistantContent, Message, OneOrMany, Reasoning};
use crate::providers::codec;
use serde_json::{Map, Value, json};

/// The signature Google documents for function calls that have none of their own (a history
/// from another model); Gemini 3 then skips its signature check for that turn.
const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

/// The parts of `systemInstruction` and the `contents`, for `model`.
pub(super) fn contents(model: &str, request: &CompletionRequest) -> (Vec<Value>, Vec<Value>) {
    let system = codec::system_texts(request)
        .into_iter()
        .map(|text| json!({ "text": text }))
        .collect();
    let mut contents: Vec<Value> = Vec::with_capacity(request.history.len());
    let needs_signatures = requires_signatures(model);
    for message in &request.history {
        match message {
            // Sent as `systemInstruction`.
            Message::System { .. } => {}
            Message::User { content } => {
                push_content(&mut contents, "user", vec![json!({ "text": content })]);
            }
            Message::Assistant { content } => {
                let parts = model_parts(content, needs_signatures);
                push_content(&mut contents, "model", parts);
            }
            Message::Tool(result) => {
                let mut response = Map::new();
                if sent_id(&result.tool_call_id) {
                    response.insert("id".into(), json!(result.tool_call_id));
                }
                response.insert(
                    "name".into(),
                    json!(names::function_name(&result.tool_name)),
                );
                response.insert("response".into(), json!({ "result": result.content }));
                push_content(
                    &mut contents,
                    "user",
                    vec![json!({ "functionResponse": response })],
                );
            }
        }
    }
    (system, contents)
}

/// Appends a content, merging it into the last one when both have the same role. A content
/// without parts is left out (Gemini rejects empty contents).
fn push_content(contents: &mut Vec<Value>, role: &str, parts: Vec<Value>) {
    if parts.is_empty() {
        return;
    }
    if let Some(last) = contents.last_mut() {
        if last.get("role").and_then(Value::as_str) == Some(role) {
            if let Some(existing) = last.get_mut("parts").and_then(Value::as_array_mut) {
                existing.extend(parts);
                return;
            }
        }
    }
    contents.push(json!({ "role": role, "parts": parts }));
}

/// The parts of a `model` content: see the module docs for where signatures go.
fn model_parts(content: &OneOrMany<AssistantContent>, needs_signatures: bool) -> Vec<Value> {
    let mut parts: Vec<Value> = Vec::with_capacity(content.len());
    // Whether the last part pushed is a text or call part sent just before the current item,
    // so an empty signed reasoning part can hand its signature to it.
    let mut attachable = false;
    for item in content.iter() {
        match item {
            AssistantContent::Text(text) => {
                attachable = !text.text.is_empty();
                if attachable {
                    parts.push(json!({ "text": text.text }));
                }
            }
            AssistantContent::ToolCall(call) => {
                let mut function_call = Map::new();
                if sent_id(&call.id) {
                    function_call.insert("id".into(), json!(call.id));
                }
                function_call.insert("name".into(), json!(names::function_name(&call.name)));
                function_call.insert("args".into(), call_args(&call.arguments));
                parts.push(json!({ "functionCall": function_call }));
                attachable = true;
            }
            AssistantContent::Reasoning(Reasoning {
                text,
                signature: Some(signature),
            }) => {
                let target = parts
                    .last_mut()
                    .filter(|_| attachable && text.is_empty())
                    .and_then(Value::as_object_mut)
                    .filter(|part| !part.contains_key("thoughtSignature"));
                match target {
                    Some(part) => {
                        part.insert("thoughtSignature".into(), json!(signature));
                    }
                    None if text.is_empty() => {
                        parts.push(json!({ "text": "", "thoughtSignature": signature }));
                    }
                    None => parts.push(json!({
                        "text": text,
                        "thought": true,
                        "thoughtSignature": signature,
                    })),
                }
                attachable = false;
            }
            // Gemini has no use for reasoning it cannot verify.
            AssistantContent::Reasoning(Reasoning {
                signature: None, ..
            }) => attachable = false,
        }
    }
    let is_call = |part: &Value| part.get("functionCall").is_some();
    let signed = parts
        .iter()
        .any(|part| is_call(part) && part.get("thoughtSignature").is_some());
    if needs_signatures && !signed {
        if let Some(first) = parts
            .iter_mut()
            .find(|part| is_call(part))
            .and_then(Value::as_object_mut)
        {
            first.insert("thoughtSignature".into(), json!(SKIP_SIGNATURE));
        }
    }
    parts
}

/// A call's arguments as Gemini's `args` object. Arguments that are not an object (text a
/// model sent that was not JSON) are kept under `"arguments"`, so the model still sees them.
fn call_args(arguments: &Value) -> Value {
    match arguments {
        Value::Object(_) => arguments.clone(),
        Value::Null => json!({}),
        other => json!({ "arguments": other }),
    }
}

/// Whether `id` is sent back to Gemini: every id but those reins synthesized (`call_{n}`).
fn sent_id(id: &str) -> bool {
    !id.is_empty()
        && !id
            .strip_prefix("call_")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether the model validates thought signatures of function calls: Gemini 3 and later.
fn requires_signatures(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    let Some(version) = name.strip_prefix("gemini-") else {
        return false;
    };
    let major: String = version.chars().take_while(char::is_ascii_digit).collect();
    major.parse::<u32>().is_ok_and(|major| major >= 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed(signature: &str) -> AssistantContent {
        AssistantContent::Reasoning(Reasoning {
            text: String::new(),
            signature: Some(signature.to_owned()),
        })
    }

    #[test]
    fn synthesized_ids_are_not_sent_back() {
        assert!(!sent_id("call_0"));
        assert!(!sent_id("call_12"));
        assert!(!sent_id(""));
        assert!(sent_id("call_x"));
        assert!(sent_id("abc123"));
    }

    #[test]
    fn gemini_3_and_later_validate_signatures() {
        assert!(requires_signatures("gemini-3-pro-preview"));
        assert!(requires_signatures("models/gemini-10-flash"));
        assert!(!requires_signatures("gemini-2.5-flash"));
        assert!(!requires_signatures("tunedModels/mine"));
    }

    #[test]
    fn an_empty_signed_reasoning_part_signs_the_part_before_it() {
        let content = OneOrMany::many(vec![
            AssistantContent::tool_call("call_0", "add", json!({"a": 1})),
            signed("sig"),
            AssistantContent::text("done"),
            signed("sig2"),
        ])
        .expect("parts");
        assert_eq!(
            model_parts(&content, true),
            vec![
                json!({"functionCall": {"name": "add", "args": {"a": 1}}, "thoughtSignature": "sig"}),
                json!({"text": "done", "thoughtSignature": "sig2"}),
            ]
        );
    }

    #[test]
    fn unsigned_calls_get_the_skip_signature_on_gemini_3_only() {
        let content = OneOrMany::many(vec![
            AssistantContent::tool_call("id-1", "add", json!("not json")),
            AssistantContent::tool_call("id-2", "add", Value::Null),
        ])
        .expect("parts");
        let parts = model_parts(&content, true);
        assert_eq!(parts[0]["thoughtSignature"], SKIP_SIGNATURE);
        assert_eq!(
            parts[0]["functionCall"]["args"],
            json!({"arguments": "not json"})
        );
        assert!(parts[1].get("thoughtSignature").is_none());
        assert_eq!(parts[1]["functionCall"]["args"], json!({}));
        assert!(
            model_parts(&content, false)[0]
                .get("thoughtSignature")
                .is_none()
        );
    }

    #[test]
    fn contents_of_one_role_are_merged() {
        let request = CompletionRequest::new(vec![
            Message::system("be brief"),
            Message::user("add"),
            Message::Assistant {
                content: OneOrMany::many(vec![
                    AssistantContent::tool_call("call_0", "add", json!({})),
                    AssistantContent::tool_call("call_1", "add", json!({})),
                ])
                .expect("parts"),
            },
            Message::tool_result("call_0", "add", "1"),
            Message::tool_result("call_1", "add", "2"),
        ]);
        let (system, contents) = contents("gemini-2.5-flash", &request);
        assert_eq!(system, vec![json!({"text": "be brief"})]);
        assert_eq!(contents.len(), 3);
        assert_eq!(
            contents[2],
            json!({"role": "user", "parts": [
                {"functionResponse": {"name": "add", "response": {"result": "1"}}},
                {"functionResponse": {"name": "add", "response": {"result": "2"}}},
            ]})
        );
    }
}
