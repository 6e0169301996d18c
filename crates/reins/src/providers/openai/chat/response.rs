//! A Chat Completions answer read into a [`CompletionResponse`].

use crate::completion::{CompletionError, CompletionResponse, FinishReason};
use crate::message::{AssistantContent, Reasoning};
use crate::providers::codec::{self, AnswerKeys};
use crate::providers::transport::excerpt_json;
use serde_json::Value;

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

/// Where a Chat Completions answer keeps its id and token counts.
pub(super) const ANSWER: AnswerKeys = AnswerKeys {
    id: "id",
    usage: "usage",
    input_tokens: &["prompt_tokens"],
    output_tokens: &["completion_tokens"],
    total_tokens: Some("total_tokens"),
    cache_read: Some("/prompt_tokens_details/cached_tokens"),
    cache_creation: None,
};

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
            let name = codec::call_name(function, "tool call", call)?;
            let id = codec::call_id(call.get("id").and_then(Value::as_str), index);
            let arguments = codec::arguments_from_text(function.get("arguments"));
            parts.push(AssistantContent::tool_call(id, name, arguments));
        }
    }
    let finish = choice.get("finish_reason").and_then(Value::as_str);
    let finish = finish.map(finish_reason);
    Ok(ANSWER.response(raw, parts, finish))
}
