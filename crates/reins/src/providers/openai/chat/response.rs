//! A Chat Completions answer read into a [`CompletionResponse`].

use crate::completion::{
    CompletionError, CompletionResponse, FinishReason, RawResponse, Usage, parse_arguments,
};
use crate::message::{AssistantContent, OneOrMany, Reasoning};
use crate::providers::transport::excerpt_json;
use serde_json::{Value, json};

/// The finish reasons of Chat Completions (and of the Responses API's incomplete reasons).
pub(crate) fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// Token counts from a `usage` object.
pub(super) fn usage(value: &Value) -> Usage {
    let read = |key: &str| value.get(key).and_then(Value::as_u64).unwrap_or(0);
    let (input, output) = (read("prompt_tokens"), read("completion_tokens"));
    Usage {
        input_tokens: input,
        output_tokens: output,
        total_tokens: value
            .get("total_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(input + output),
    }
}

/// The reasoning text some servers add to a message or delta (`reasoning_content`, or
/// `reasoning`), when not empty.
pub(super) fn reasoning_text(message: &Value) -> Option<&str> {
    ["reasoning_content", "reasoning"]
        .into_iter()
        .filter_map(|key| message.get(key).and_then(Value::as_str))
        .find(|text| !text.is_empty())
}

/// Reads a blocking Chat Completions response.
pub(super) fn parse(raw: Value) -> Result<CompletionResponse, CompletionError> {
    let choice = raw.get("choices").and_then(|c| c.get(0)).ok_or_else(|| {
        CompletionError::Decode(format!(
            "the response has no choices: {}",
            excerpt_json(&raw)
        ))
    })?;
    let message = choice.get("message").ok_or_else(|| {
        CompletionError::Decode(format!("the choice has no message: {}", excerpt_json(&raw)))
    })?;
    let mut parts = Vec::new();
    if let Some(reasoning) = reasoning_text(message) {
        parts.push(AssistantContent::Reasoning(Reasoning {
            text: reasoning.to_owned(),
            signature: None,
        }));
    }
    if let Some(text) = message.get("content").and_then(Value::as_str) {
        if !text.is_empty() {
            parts.push(AssistantContent::text(text));
        }
    }
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (index, call) in calls.iter().enumerate() {
            let function = call.get("function").unwrap_or(&Value::Null);
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    CompletionError::Decode(format!(
                        "a tool call has no name: {}",
                        excerpt_json(call)
                    ))
                })?;
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("call_{index}"), str::to_owned);
            let arguments = match function.get("arguments") {
                Some(Value::String(text)) => parse_arguments(text),
                Some(Value::Object(map)) => Value::Object(map.clone()),
                _ => json!({}),
            };
            parts.push(AssistantContent::tool_call(id, name, arguments));
        }
    }
    let content =
        OneOrMany::many(parts).unwrap_or_else(|| OneOrMany::one(AssistantContent::text("")));
    Ok(CompletionResponse {
        content,
        usage: raw.get("usage").map(usage).unwrap_or_default(),
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(finish_reason),
        response_id: raw.get("id").and_then(Value::as_str).map(str::to_owned),
        raw: RawResponse::new(raw),
    })
}
