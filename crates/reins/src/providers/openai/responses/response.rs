//! A Responses API response object read into a [`CompletionResponse`].

use crate::completion::{CompletionError, CompletionResponse, FinishReason};
use crate::message::{AssistantContent, Reasoning};
use crate::providers::codec::{self, AnswerKeys};
use crate::providers::openai::finish_reason as chat_finish_reason;
use crate::providers::transport::{excerpt, excerpt_json};
use serde_json::Value;

/// Reads a whole Responses API response object.
pub(super) fn parse(raw: Value) -> Result<CompletionResponse, CompletionError> {
    if let Some(error) = response_failure(&raw) {
        return Err(error);
    }
    let items = raw.get("output").and_then(Value::as_array).ok_or_else(|| {
        CompletionError::Decode(format!(
            "the response has no output: {}",
            excerpt_json(&raw)
        ))
    })?;
    let output = read_output(items)?;
    Ok(build_response(raw, output))
}

/// Where a Responses API response object keeps its id and token counts.
pub(super) const ANSWER: AnswerKeys = AnswerKeys {
    id: "id",
    usage: "usage",
    input_tokens: &["input_tokens"],
    output_tokens: &["output_tokens"],
    total_tokens: Some("total_tokens"),
    cache_read: Some("/input_tokens_details/cached_tokens"),
    cache_creation: None,
};

/// The error a failed response reports, naming its code and message.
pub(super) fn failure(error: Option<&Value>, context: &str) -> CompletionError {
    let error = error.filter(|e| !e.is_null());
    let code = error.and_then(|e| {
        e.get("code").and_then(Value::as_str).or_else(|| {
            e.get("type")
                .and_then(Value::as_str)
                .filter(|kind| *kind != "error")
        })
    });
    let message = error.and_then(|e| e.get("message")).and_then(Value::as_str);
    let detail = match (code, message, error) {
        (Some(code), Some(message), _) => excerpt(&format!("{code}: {message}")),
        (Some(code), None, _) => excerpt(code),
        (None, Some(message), _) => excerpt(message),
        (None, None, Some(error)) => excerpt_json(error),
        (None, None, None) => "no error details".to_owned(),
    };
    CompletionError::Other(format!("{context}: {detail}"))
}

/// The error of a response whose status is `failed` or that carries an error object, or
/// that is not finished (`queued`, `in_progress`: asked to run in the background): its empty
/// output would pass for the model's answer.
pub(super) fn response_failure(raw: &Value) -> Option<CompletionError> {
    if let Some(status @ ("queued" | "in_progress")) = raw.get("status").and_then(Value::as_str) {
        return Some(CompletionError::Decode(format!(
            "the response is not finished (status `{status}`): reins reads a finished \
             response and does not poll one running in the background (`background: true`)"
        )));
    }
    let failed = raw.get("status").and_then(Value::as_str) == Some("failed");
    let error = raw.get("error").filter(|e| !e.is_null());
    (failed || error.is_some()).then(|| failure(error, "the response failed"))
}

/// What the output items of a response say.
pub(super) struct Output {
    parts: Vec<AssistantContent>,
    has_calls: bool,
    refused: bool,
}

/// Reads output items into content parts, in order. Items reins has no part for (built-in
/// tool calls such as web search) are left out; they stay in the raw response.
pub(super) fn read_output(items: &[Value]) -> Result<Output, CompletionError> {
    let mut output = Output {
        parts: Vec::new(),
        has_calls: false,
        refused: false,
    };
    for (index, item) in items.iter().enumerate() {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                let (text, refused) = message_text(item);
                output.refused |= refused;
                if !text.is_empty() {
                    output.parts.push(AssistantContent::text(text));
                }
            }
            Some("function_call") => {
                let name = codec::call_name(item, "function call", item)?;
                let id = call_id(item, index as u64);
                let arguments = codec::arguments_from_text(item.get("arguments"));
                output.has_calls = true;
                output
                    .parts
                    .push(AssistantContent::tool_call(id, name, arguments));
            }
            Some("reasoning") => {
                let text = reasoning_text(item);
                let signature = item
                    .get("encrypted_content")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                if !text.is_empty() || signature.is_some() {
                    output
                        .parts
                        .push(AssistantContent::Reasoning(Reasoning { text, signature }));
                }
            }
            _ => {}
        }
    }
    Ok(output)
}

/// The text of a message item: its `output_text` parts and refusals, joined; and whether it
/// holds a refusal.
pub(super) fn message_text(item: &Value) -> (String, bool) {
    let mut text = String::new();
    let mut refused = false;
    let parts = item.get("content").and_then(Value::as_array);
    for part in parts.into_iter().flatten() {
        match part.get("type").and_then(Value::as_str) {
            Some("output_text") => {
                text.push_str(part.get("text").and_then(Value::as_str).unwrap_or_default());
            }
            Some("refusal") => {
                refused = true;
                text.push_str(
                    part.get("refusal")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                );
            }
            _ => {}
        }
    }
    (text, refused)
}

/// The text of a reasoning item: its summaries, or its reasoning texts when it has no
/// summary, joined with blank lines.
pub(super) fn reasoning_text(item: &Value) -> String {
    let texts = |key: &str| -> Vec<&str> {
        item.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect()
    };
    let summary = texts("summary");
    if summary.is_empty() {
        texts("content").join("\n\n")
    } else {
        summary.join("\n\n")
    }
}

/// The id a function-call item is answered by: `call_id`, else the item's id.
pub(super) fn call_id(item: &Value, index: u64) -> String {
    let given = item.get("call_id").or_else(|| item.get("id"));
    codec::call_id(given.and_then(Value::as_str), index)
}

/// The finish reason of a response object (`status`, `incomplete_details`), given whether
/// its output has function calls or a refusal.
pub(super) fn finish_reason(raw: &Value, has_calls: bool, refused: bool) -> FinishReason {
    match raw.get("status").and_then(Value::as_str) {
        Some("incomplete") => {
            let reason = raw
                .get("incomplete_details")
                .and_then(|d| d.get("reason"))
                .and_then(Value::as_str);
            match reason {
                Some("max_output_tokens") => FinishReason::Length,
                // `content_filter`, and anything else as `Other`.
                Some(other) => chat_finish_reason(other),
                None => FinishReason::Other("incomplete".to_owned()),
            }
        }
        Some("completed") | None if has_calls => FinishReason::ToolCalls,
        Some("completed") | None if refused => FinishReason::ContentFilter,
        Some("completed") | None => FinishReason::Stop,
        Some(other) => FinishReason::Other(other.to_owned()),
    }
}

/// Builds the response from `raw` (the response object) and its output items.
pub(super) fn build_response(raw: Value, output: Output) -> CompletionResponse {
    let finish = finish_reason(&raw, output.has_calls, output.refused);
    ANSWER.response(raw, output.parts, Some(finish))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn output_items_become_parts_with_usage_and_finish_reason() {
        let raw = json!({
            "id": "resp_1",
            "status": "completed",
            "output": [
                {"type": "reasoning", "summary": [{"text": "a"}, {"text": "b"}],
                 "encrypted_content": "sig"},
                {"type": "message", "content": [{"type": "output_text", "text": "hi"}]},
                {"type": "function_call", "call_id": "c1", "name": "add",
                 "arguments": "{\"a\":1}"},
                {"type": "web_search_call"},
            ],
            "usage": {"input_tokens": 3, "output_tokens": 4},
        });
        let response = parse(raw).unwrap();
        let parts = response.content.as_slice();
        assert_eq!(parts.len(), 3);
        assert!(matches!(&parts[0], AssistantContent::Reasoning(r)
            if r.text == "a\n\nb" && r.signature.as_deref() == Some("sig")));
        assert_eq!(response.text(), "hi");
        let call = response.tool_calls().next().unwrap();
        assert_eq!(
            (call.id.as_str(), &call.arguments),
            ("c1", &json!({"a": 1}))
        );
        assert_eq!(response.finish_reason, Some(FinishReason::ToolCalls));
        assert_eq!(response.usage.total_tokens, 7);
        assert_eq!(response.response_id.as_deref(), Some("resp_1"));
    }

    #[test]
    fn finish_reasons_follow_status_and_refusals() {
        let incomplete = |reason: &str| json!({"status": "incomplete", "incomplete_details": {"reason": reason}});
        let reason = |raw: &Value| finish_reason(raw, false, false);
        assert_eq!(
            reason(&incomplete("max_output_tokens")),
            FinishReason::Length
        );
        assert_eq!(
            reason(&incomplete("content_filter")),
            FinishReason::ContentFilter
        );
        assert_eq!(
            reason(&incomplete("other")),
            FinishReason::Other("other".into())
        );
        let completed = json!({"status": "completed"});
        assert_eq!(
            finish_reason(&completed, false, true),
            FinishReason::ContentFilter
        );
        assert_eq!(reason(&completed), FinishReason::Stop);
    }

    #[test]
    fn failures_name_their_code_and_quote_at_most_an_excerpt() {
        let failed =
            json!({"status": "failed", "error": {"code": "server_error", "message": "boom"}});
        let error = parse(failed).unwrap_err().to_string();
        assert!(error.contains("server_error: boom"), "{error}");

        let huge = "x".repeat(100_000);
        let error = parse(json!({"error": {"message": huge}}))
            .unwrap_err()
            .to_string();
        assert!(error.len() < 3_000, "{}", error.len());
        let error = parse(json!({"id": huge})).unwrap_err().to_string();
        assert!(
            error.contains("no output") && error.len() < 3_000,
            "{}",
            error.len()
        );
    }
}
