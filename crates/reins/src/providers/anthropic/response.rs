//! A Messages API answer read into a [`CompletionResponse`].

use super::REDACTED_THINKING_PREFIX;
use crate::completion::{CompletionError, CompletionResponse, FinishReason};
use crate::message::{AssistantContent, Reasoning};
use crate::providers::codec::{self, AnswerKeys};
use crate::providers::transport::{excerpt, excerpt_json};
use serde_json::Value;

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// Where a Messages answer keeps its id and token counts: `input_tokens` leaves out cache
/// reads and writes, which reins counts as input too; no total is reported.
const ANSWER: AnswerKeys = AnswerKeys {
    id: "id",
    usage: "usage",
    input_tokens: &[
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ],
    output_tokens: &["output_tokens"],
    total_tokens: None,
    cache_read: Some("/cache_read_input_tokens"),
    cache_creation: Some("/cache_creation_input_tokens"),
};

/// Reads a Messages API response (also used for the message a stream assembles, so both
/// forms give the same [`CompletionResponse`]).
pub(super) fn parse(raw: Value) -> Result<CompletionResponse, CompletionError> {
    if raw.get("type").and_then(Value::as_str) == Some("error") {
        return Err(CompletionError::Other(format!(
            "Anthropic answered with an error: {}",
            describe_error(&raw)
        )));
    }
    let blocks = raw
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            CompletionError::Decode(format!(
                "the response has no content array: {}",
                excerpt_json(&raw)
            ))
        })?;
    let mut parts = Vec::with_capacity(blocks.len());
    for block in blocks {
        if let Some(part) = content_part(block)? {
            parts.push(part);
        }
    }
    let finish = raw.get("stop_reason").and_then(Value::as_str);
    let finish = finish.map(finish_reason);
    Ok(ANSWER.response(raw, parts, finish))
}

/// One content block as a content part; `None` for blocks reins does not model (server
/// tools, empty text), which stay in the raw response.
fn content_part(block: &Value) -> Result<Option<AssistantContent>, CompletionError> {
    let text_field = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
    let part = match block.get("type").and_then(Value::as_str) {
        Some("text") => {
            let text = text_field("text");
            (!text.is_empty()).then(|| AssistantContent::text(text))
        }
        Some("tool_use") => {
            let (id, name) = tool_use(block, "a tool_use block has no id or name", block)?;
            let input = codec::arguments_from_object(block.get("input"));
            Some(AssistantContent::tool_call(id, name, input))
        }
        Some("thinking") => {
            let signature = text_field("signature");
            Some(AssistantContent::Reasoning(Reasoning {
                text: text_field("thinking").to_owned(),
                signature: (!signature.is_empty()).then(|| signature.to_owned()),
            }))
        }
        Some("redacted_thinking") => Some(AssistantContent::Reasoning(Reasoning {
            text: String::new(),
            signature: Some(format!("{REDACTED_THINKING_PREFIX}{}", text_field("data"))),
        })),
        _ => None,
    };
    Ok(part)
}

/// The `id` and `name` of a `tool_use` block; a call without both cannot be answered, so
/// their absence is an error, `missing` followed by a quote of `quoted`.
pub(super) fn tool_use<'a>(
    block: &'a Value,
    missing: &str,
    quoted: &Value,
) -> Result<(&'a str, &'a str), CompletionError> {
    let id = block.get("id").and_then(Value::as_str);
    let name = block.get("name").and_then(Value::as_str);
    id.zip(name)
        .ok_or_else(|| CompletionError::Decode(format!("{missing}: {}", excerpt_json(quoted))))
}

/// `error_type: message` of an Anthropic error object (`{"type": "error", "error": {..}}`),
/// bounded like every quote of what the server sent.
pub(super) fn describe_error(value: &Value) -> String {
    let error = value.get("error").unwrap_or(value);
    let kind = error.get("type").and_then(Value::as_str);
    let message = error.get("message").and_then(Value::as_str);
    match (kind, message) {
        (Some(kind), Some(message)) => excerpt(&format!("{kind}: {message}")),
        _ => excerpt_json(value),
    }
}

#[cfg(test)]
mod tests {
    use super::super::request::assistant_blocks;
    use super::*;
    use crate::message::OneOrMany;
    use serde_json::json;

    #[test]
    fn redacted_thinking_round_trips() {
        let block = json!({"type": "redacted_thinking", "data": "abc"});
        let Ok(Some(part)) = content_part(&block) else {
            panic!("a redacted block is kept");
        };
        assert_eq!(
            assistant_blocks(&OneOrMany::one(part)),
            vec![block],
            "sent back as it came"
        );
    }
}
