//! A [`CompletionRequest`] as a Chat Completions body.

use super::{Chat, ChatQuirks};
use crate::completion::{CompletionError, CompletionRequest};
use crate::message::{AssistantContent, Message, OneOrMany, ToolChoice};
use crate::providers::codec;
use serde_json::{Map, Value, json};

/// The JSON body sent for `request` (`stream` selects the streamed form).
pub(super) fn body(
    chat: &Chat,
    request: &CompletionRequest,
    stream: bool,
) -> Result<Value, CompletionError> {
    let mut body = Map::new();
    body.insert("model".into(), json!(chat.model));
    let quirks = chat.quirks;
    body.insert("messages".into(), Value::Array(messages(quirks, request)));
    let tools = codec::tool_list(request, |tool| {
        json!({
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            }
        })
    });
    codec::insert_some(&mut body, "tools", tools);
    let choice = tool_choice(
        request,
        |name| json!({"type": "function", "function": {"name": name}}),
    );
    codec::insert_some(&mut body, "tool_choice", choice);
    codec::insert_some(&mut body, "temperature", request.temperature);
    codec::insert_some(&mut body, quirks.max_tokens_field, request.max_tokens);
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
    codec::merge_additional_params(body, request)
}

/// The request's tool choice, if it makes one, as OpenAI's protocols write it: a word, or for
/// one tool the object `tool` writes (Chat Completions and the Responses API shape it
/// differently).
pub(crate) fn tool_choice(
    request: &CompletionRequest,
    tool: impl FnOnce(&str) -> Value,
) -> Option<Value> {
    let choice = match request.tool_choice.as_ref()? {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Specific(name) => tool(name),
    };
    Some(choice)
}

fn messages(quirks: ChatQuirks, request: &CompletionRequest) -> Vec<Value> {
    let mut messages = Vec::with_capacity(request.history.len() + 2);
    if let Some(preamble) = &request.preamble {
        messages.push(json!({"role": "system", "content": preamble}));
    }
    if !request.documents.is_empty() {
        messages.push(json!({"role": "user", "content": codec::render_documents(request)}));
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
