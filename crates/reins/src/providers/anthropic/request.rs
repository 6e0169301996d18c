//! A [`CompletionRequest`] as a Messages API body.

use super::{Messages, REDACTED_THINKING_PREFIX};
use crate::completion::{CompletionError, CompletionRequest};
use crate::message::{AssistantContent, Message, OneOrMany, ToolChoice};
use crate::providers::codec;
use serde_json::{Map, Value, json};

/// The JSON body sent for `request` (`stream` selects the streamed form).
///
/// Fails with [`CompletionError::InvalidRequest`] when the request asks for native structured
/// output (this model uses an output tool instead) or when its `additional_params` are not a
/// JSON object.
pub(super) fn body(
    protocol: &Messages,
    request: &CompletionRequest,
    stream: bool,
) -> Result<Value, CompletionError> {
    if request.output_schema.is_some() {
        return Err(CompletionError::InvalidRequest(
            "Anthropic models do not take a native output schema; use structured output \
             through an output tool (OutputMode::Tool or OutputMode::Auto)"
                .to_owned(),
        ));
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(protocol.model));
    body.insert(
        "max_tokens".into(),
        json!(request.max_tokens.unwrap_or(protocol.default_max_tokens)),
    );
    let system = codec::system_text(request, |text| !text.trim().is_empty());
    codec::insert_some(&mut body, "system", system);
    body.insert("messages".into(), Value::Array(messages(&request.history)));
    let tools = codec::tool_list(request, |tool| {
        json!({
            "name": tool.name,
            "description": tool.description,
            "input_schema": tool.parameters,
        })
    });
    if let Some(tools) = tools {
        body.insert("tools".into(), Value::Array(tools));
        let choice = request.tool_choice.as_ref().map(tool_choice);
        codec::insert_some(&mut body, "tool_choice", choice);
    }
    codec::insert_some(&mut body, "temperature", request.temperature);
    if stream {
        body.insert("stream".into(), json!(true));
    }
    codec::merge_additional_params(body, request)
}

/// A tool choice as the API writes it (sent only with tools).
fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!({"type": "auto"}),
        ToolChoice::Required => json!({"type": "any"}),
        ToolChoice::Specific(name) => json!({"type": "tool", "name": name}),
        ToolChoice::None => json!({"type": "none"}),
    }
}

/// The history as alternating user and assistant messages of content blocks.
fn messages(history: &[Message]) -> Vec<Value> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::with_capacity(history.len());
    for message in history {
        let (role, blocks) = match message {
            Message::System { .. } => continue,
            Message::User { content } if content.trim().is_empty() => continue,
            Message::User { content } => ("user", vec![json!({"type": "text", "text": content})]),
            Message::Tool(result) => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": result.tool_call_id,
                    "content": result.content,
                })],
            ),
            Message::Assistant { content } => ("assistant", assistant_blocks(content)),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, mut blocks)| {
            if role == "user" {
                // Tool results must open the user message that answers the tool calls.
                let (mut results, rest): (Vec<Value>, Vec<Value>) = blocks
                    .into_iter()
                    .partition(|block| block["type"] == "tool_result");
                results.extend(rest);
                blocks = results;
            }
            json!({"role": role, "content": blocks})
        })
        .collect()
}

/// An assistant message's parts as content blocks.
pub(super) fn assistant_blocks(content: &OneOrMany<AssistantContent>) -> Vec<Value> {
    let mut blocks = Vec::with_capacity(content.len());
    for part in content.iter() {
        match part {
            AssistantContent::Text(text) if text.text.trim().is_empty() => {}
            AssistantContent::Text(text) => {
                blocks.push(json!({"type": "text", "text": text.text}));
            }
            AssistantContent::ToolCall(call) => blocks.push(json!({
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": tool_input(&call.arguments),
            })),
            AssistantContent::Reasoning(reasoning) => match reasoning.signature.as_deref() {
                Some(signature) if !signature.is_empty() => {
                    match signature.strip_prefix(REDACTED_THINKING_PREFIX) {
                        Some(data) => {
                            blocks.push(json!({"type": "redacted_thinking", "data": data}));
                        }
                        None => blocks.push(json!({
                            "type": "thinking",
                            "thinking": reasoning.text,
                            "signature": signature,
                        })),
                    }
                }
                // Anthropic verifies thinking by its signature: unsigned reasoning cannot be
                // sent back.
                _ => {}
            },
        }
    }
    blocks
}

/// A tool call's arguments as the `input` object the API requires. Arguments kept as text
/// because they were not a JSON object (a malformed call the run reported) are sent as `{}`
/// unless the text holds an object.
fn tool_input(arguments: &Value) -> Value {
    match arguments {
        Value::Object(_) => arguments.clone(),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(object @ Value::Object(_)) => object,
            _ => json!({}),
        },
        _ => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_user_turns_merge_with_tool_results_first() {
        let history = vec![
            Message::user("hi"),
            Message::Assistant {
                content: OneOrMany::one(AssistantContent::tool_call("t1", "f", json!({}))),
            },
            Message::user("also this"),
            Message::tool_result("t1", "f", "done"),
        ];
        let wire = messages(&history);
        assert_eq!(wire.len(), 3);
        assert_eq!(wire[2]["content"][0]["type"], "tool_result");
        assert_eq!(wire[2]["content"][1]["text"], "also this");
    }

    #[test]
    fn blank_text_is_left_out_and_roles_still_alternate() {
        let history = vec![
            Message::user("hi"),
            Message::assistant("  "),
            Message::user(""),
            Message::user("again"),
        ];
        assert_eq!(
            messages(&history),
            vec![json!({"role": "user", "content": [
                {"type": "text", "text": "hi"},
                {"type": "text", "text": "again"}
            ]})]
        );
    }

    #[test]
    fn malformed_arguments_are_sent_as_an_object() {
        assert_eq!(tool_input(&json!("{oops")), json!({}));
        assert_eq!(tool_input(&json!("{\"a\":1}")), json!({"a": 1}));
    }
}
