//! A [`CompletionRequest`] as a Responses API body.

use super::Responses;
use crate::completion::{CompletionError, CompletionRequest};
use crate::message::{AssistantContent, Message, OneOrMany, Reasoning};
use crate::providers::codec;
use crate::providers::openai::tool_choice;
use serde_json::{Map, Value, json};

/// The JSON body sent for `request` (`stream` selects the streamed form); with
/// `encrypted_reasoning`, reasoning is asked for encrypted and sent back.
pub(super) fn body(
    responses: &Responses,
    request: &CompletionRequest,
    stream: bool,
) -> Result<Value, CompletionError> {
    let encrypted_reasoning = responses.encrypted_reasoning;
    let mut body = Map::new();
    body.insert("model".into(), json!(responses.model));
    let instructions = codec::system_text(request, |text| !text.is_empty());
    codec::insert_some(&mut body, "instructions", instructions);
    body.insert(
        "input".into(),
        Value::Array(input(encrypted_reasoning, request)),
    );
    let tools = codec::tool_list(request, |tool| {
        json!({
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
            "strict": false,
        })
    });
    codec::insert_some(&mut body, "tools", tools);
    let choice = tool_choice(request, |name| json!({"type": "function", "name": name}));
    codec::insert_some(&mut body, "tool_choice", choice);
    codec::insert_some(&mut body, "temperature", request.temperature);
    codec::insert_some(&mut body, "max_output_tokens", request.max_tokens);
    if let Some(schema) = &request.output_schema {
        body.insert(
            "text".into(),
            json!({
                "format": {"type": "json_schema", "name": "output", "schema": schema},
            }),
        );
    }
    if encrypted_reasoning {
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
        body.insert("store".into(), json!(false));
    }
    if stream {
        body.insert("stream".into(), json!(true));
    }
    codec::merge_additional_params(body, request)
}

/// The history as input items.
fn input(encrypted_reasoning: bool, request: &CompletionRequest) -> Vec<Value> {
    let mut items = Vec::with_capacity(request.history.len());
    for message in &request.history {
        match message {
            // Sent as `instructions`.
            Message::System { .. } => {}
            Message::User { content } => {
                items.push(json!({"role": "user", "content": content}));
            }
            Message::Assistant { content } => {
                assistant_items(encrypted_reasoning, content, &mut items);
            }
            Message::Tool(result) => items.push(json!({
                "type": "function_call_output",
                "call_id": result.tool_call_id,
                "output": result.content,
            })),
        }
    }
    items
}

fn assistant_items(
    encrypted_reasoning: bool,
    content: &OneOrMany<AssistantContent>,
    items: &mut Vec<Value>,
) {
    let start = items.len();
    let mut text = String::new();
    let mut reasoning_only = true;
    let flush = |text: &mut String, items: &mut Vec<Value>| {
        if !text.is_empty() {
            items.push(json!({"role": "assistant", "content": std::mem::take(text)}));
        }
    };
    for part in content.iter() {
        match part {
            AssistantContent::Text(part) => {
                if !part.text.is_empty() {
                    reasoning_only = false;
                }
                text.push_str(&part.text);
            }
            AssistantContent::ToolCall(call) => {
                flush(&mut text, items);
                reasoning_only = false;
                items.push(json!({
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": call.arguments_text(),
                }));
            }
            AssistantContent::Reasoning(reasoning) => {
                flush(&mut text, items);
                if let Some(item) = reasoning_item(encrypted_reasoning, reasoning) {
                    items.push(item);
                }
            }
        }
    }
    flush(&mut text, items);
    // A reasoning item must be followed by the output it led to; alone it is rejected.
    if reasoning_only {
        items.truncate(start);
    }
}

fn reasoning_item(encrypted_reasoning: bool, reasoning: &Reasoning) -> Option<Value> {
    if !encrypted_reasoning {
        return None;
    }
    let encrypted = reasoning.signature.as_deref()?;
    let summary = if reasoning.text.is_empty() {
        json!([])
    } else {
        json!([{"type": "summary_text", "text": reasoning.text}])
    };
    Some(json!({
        "type": "reasoning",
        "summary": summary,
        "encrypted_content": encrypted,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codec for model `m`, with encrypted reasoning when `encrypted`.
    fn responses(encrypted: bool) -> Responses {
        let mut responses = Responses::new("m".into());
        responses.encrypted_reasoning = encrypted;
        responses
    }

    fn with_reasoning() -> CompletionRequest {
        let reasoning = AssistantContent::Reasoning(Reasoning {
            text: "thought".into(),
            signature: Some("sealed".into()),
        });
        let answered = OneOrMany::many([reasoning.clone(), AssistantContent::text("hi")]).unwrap();
        let mut request = CompletionRequest::new(vec![
            Message::system("be brief"),
            Message::user("hello"),
            Message::Assistant {
                content: OneOrMany::one(reasoning),
            },
            Message::Assistant { content: answered },
        ]);
        request.preamble = Some("you help".into());
        request
    }

    #[test]
    fn system_text_goes_to_instructions_and_reasoning_only_with_encryption() {
        let request = with_reasoning();
        let plain = body(&responses(false), &request, false).unwrap();
        assert_eq!(plain["instructions"], json!("you help\n\nbe brief"));
        assert_eq!(
            plain["input"],
            json!([
                {"role": "user", "content": "hello"},
                {"role": "assistant", "content": "hi"},
            ])
        );
        assert!(plain.get("include").is_none() && plain.get("stream").is_none());

        let encrypted = body(&responses(true), &request, true).unwrap();
        assert_eq!(encrypted["store"], json!(false));
        assert_eq!(encrypted["stream"], json!(true));
        // The reasoning-only message is dropped; the other keeps its reasoning item first.
        let input = encrypted["input"].as_array().unwrap();
        assert_eq!(input.len(), 3);
        assert_eq!(input[1]["encrypted_content"], json!("sealed"));
        assert_eq!(input[1]["summary"][0]["text"], json!("thought"));
    }

    #[test]
    fn additional_params_win_and_must_be_an_object() {
        let mut request = CompletionRequest::new(vec![Message::user("hi")]);
        request.additional_params = Some(json!({"model": "other", "reasoning": {"effort": "low"}}));
        let merged = body(&responses(false), &request, false).unwrap();
        assert_eq!(merged["model"], json!("other"));
        assert_eq!(merged["reasoning"]["effort"], json!("low"));

        request.additional_params = Some(json!([1, 2]));
        let error = body(&responses(false), &request, false).unwrap_err();
        assert!(
            matches!(error, CompletionError::InvalidRequest(_)),
            "{error:?}"
        );
    }
}
