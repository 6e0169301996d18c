//! A [`CompletionRequest`] as a Chat Completions body.

use super::ChatQuirks;
use crate::completion::{CompletionError, CompletionRequest};
use crate::message::{AssistantContent, Message, OneOrMany, ToolChoice};
use crate::providers::{merge_additional_params, render_documents};
use serde_json::{Map, Value, json};

/// The JSON body sent for `request` (`stream` selects the streamed form).
pub(super) fn body(
    model: &str,
    quirks: ChatQuirks,
    request: &CompletionRequest,
    stream: bool,
) -> Result<Value, CompletionError> {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(messages(quirks, request)));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    }
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = &request.tool_choice {
        body.insert(
            "tool_choice".into(),
            match choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::None => json!("none"),
                ToolChoice::Required => json!("required"),
                ToolChoice::Specific(name) => {
                    json!({"type": "function", "function": {"name": name}})
                }
            },
        );
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(max_tokens) = request.max_tokens {
        body.insert(quirks.max_tokens_field.into(), json!(max_tokens));
    }
    if let Some(schema) = &request.output_schema {
        body.insert(
            "response_format".into(),
            json!({
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": schema},
            }),
        );
    }
    if stream {
        body.insert("stream".into(), json!(true));
        if quirks.stream_usage_option {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
    }
    merge_additional_params(body, request)
}

fn messages(quirks: ChatQuirks, request: &CompletionRequest) -> Vec<Value> {
    let mut messages = Vec::with_capacity(request.history.len() + 2);
    if let Some(preamble) = &request.preamble {
        messages.push(json!({"role": "system", "content": preamble}));
    }
    if !request.documents.is_empty() {
        messages.push(json!({"role": "user", "content": render_documents(request)}));
    }
    for message in &request.history {
        match message {
            Message::System { content } => {
                messages.push(json!({"role": "system", "content": content}));
            }
            Message::User { content } => {
                messages.push(json!({"role": "user", "content": content}));
            }
            Message::Assistant { content } => messages.push(assistant_message(quirks, content)),
            Message::Tool(result) => messages.push(json!({
                "role": "tool",
                "tool_call_id": result.tool_call_id,
                "content": result.content,
            })),
        }
    }
    messages
}

fn assistant_message(quirks: ChatQuirks, content: &OneOrMany<AssistantContent>) -> Value {
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for part in content.iter() {
        match part {
            AssistantContent::Text(part) => text.push_str(&part.text),
            AssistantContent::ToolCall(call) => tool_calls.push(json!({
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": call.arguments_text(),
                },
            })),
            // Chat Completions has no way to send reasoning back.
            AssistantContent::Reasoning(_) => {}
        }
    }
    let content = if !text.is_empty() {
        json!(text)
    } else if quirks.empty_content_as_text || tool_calls.is_empty() {
        json!("")
    } else {
        Value::Null
    };
    let mut message = json!({"role": "assistant", "content": content});
    if !tool_calls.is_empty() {
        message["tool_calls"] = Value::Array(tool_calls);
    }
    message
}
