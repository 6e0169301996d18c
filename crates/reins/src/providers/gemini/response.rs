//! A `generateContent` answer read into a [`CompletionResponse`]: finish reasons, usage, and
//! the errors Gemini reports in a response body.

use super::turn::{TurnBuilder, candidate_parts};
use crate::completion::{CompletionError, CompletionResponse, FinishReason};
use crate::providers::codec::AnswerKeys;
use crate::providers::transport::{excerpt, excerpt_json};
use serde_json::Value;

/// A Gemini `finishReason`; `has_calls` says whether the turn holds function calls (Gemini
/// says `STOP` for those turns too).
pub(super) fn finish_reason(reason: &str, has_calls: bool) -> FinishReason {
    match reason {
        "STOP" if has_calls => FinishReason::ToolCalls,
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY"
        | "RECITATION"
        | "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// Where a Gemini answer keeps its id and token counts: thoughts count as output.
pub(super) const ANSWER: AnswerKeys = AnswerKeys {
    id: "responseId",
    usage: "usageMetadata",
    input_tokens: &["promptTokenCount"],
    output_tokens: &["candidatesTokenCount", "thoughtsTokenCount"],
    total_tokens: Some("totalTokenCount"),
    cache_read: Some("/cachedContentTokenCount"),
    cache_creation: None,
};

/// The error for a response that says Gemini refused the prompt or failed, if it is one.
pub(super) fn refusal(response: &Value) -> Option<CompletionError> {
    if let Some(error) = response.get("error") {
        return Some(CompletionError::Other(format!(
            "Gemini reported an error: {}",
            excerpt_json(error)
        )));
    }
    let has_candidates = response
        .get("candidates")
        .and_then(Value::as_array)
        .is_some_and(|candidates| !candidates.is_empty());
    let feedback = response.get("promptFeedback")?;
    let reason = feedback.get("blockReason").and_then(Value::as_str)?;
    (!has_candidates).then(|| {
        CompletionError::Other(format!(
            "Gemini blocked the prompt (blockReason {}); promptFeedback: {}",
            excerpt(reason),
            excerpt_json(feedback)
        ))
    })
}

/// Reads a blocking `generateContent` response.
pub(super) fn parse(raw: Value) -> Result<CompletionResponse, CompletionError> {
    if let Some(error) = refusal(&raw) {
        return Err(error);
    }
    let candidate = raw
        .get("candidates")
        .and_then(|candidates| candidates.get(0))
        .ok_or_else(|| {
            CompletionError::Decode(format!(
                "the response has no candidates: {}",
                excerpt_json(&raw)
            ))
        })?;
    let mut turn = TurnBuilder::default();
    for part in candidate_parts(candidate) {
        turn.part(part, None)?;
    }
    let finish = candidate
        .get("finishReason")
        .and_then(Value::as_str)
        .map(|reason| finish_reason(reason, turn.has_calls()));
    Ok(ANSWER.response(raw, turn.into_parts(), finish))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::completion::Usage;
    use crate::message::{AssistantContent, Reasoning};
    use serde_json::json;

    #[test]
    fn finish_reasons_map_and_stop_with_calls_is_tool_calls() {
        assert_eq!(finish_reason("STOP", false), FinishReason::Stop);
        assert_eq!(finish_reason("STOP", true), FinishReason::ToolCalls);
        assert_eq!(finish_reason("MAX_TOKENS", false), FinishReason::Length);
        assert_eq!(finish_reason("SPII", false), FinishReason::ContentFilter);
        assert_eq!(
            finish_reason("MALFORMED_FUNCTION_CALL", false),
            FinishReason::Other("MALFORMED_FUNCTION_CALL".into())
        );
    }

    #[test]
    fn a_response_is_read_with_its_signatures_and_usage() {
        let raw = json!({
            "candidates": [{"content": {"role": "model", "parts": [
                {"text": "Thinking", "thought": true},
                {"text": " more", "thought": true, "thoughtSignature": "t"},
                {"text": "Hi"},
                {"functionCall": {"name": "add", "args": {"a": 1}}, "thoughtSignature": "s"},
            ]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 4,
                              "thoughtsTokenCount": 5, "totalTokenCount": 12},
            "responseId": "r1",
        });
        let response = parse(raw).expect("a response");
        let parts: Vec<&AssistantContent> = response.content.iter().collect();
        assert_eq!(parts.len(), 4);
        assert_eq!(
            parts[0],
            &AssistantContent::Reasoning(Reasoning {
                text: "Thinking more".into(),
                signature: Some("t".into()),
            })
        );
        assert_eq!(parts[1], &AssistantContent::text("Hi"));
        assert_eq!(
            parts[2],
            &AssistantContent::tool_call("call_0", "add", json!({"a": 1}))
        );
        assert_eq!(
            parts[3],
            &AssistantContent::Reasoning(Reasoning {
                text: String::new(),
                signature: Some("s".into()),
            })
        );
        assert_eq!(response.finish_reason, Some(FinishReason::ToolCalls));
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 3,
                output_tokens: 9,
                total_tokens: 12,
                ..Usage::default()
            }
        );
        assert_eq!(response.response_id.as_deref(), Some("r1"));
    }

    #[test]
    fn errors_and_blocked_prompts_quote_a_bounded_excerpt() {
        let huge = "x".repeat(100_000);
        let error = parse(json!({"error": {"message": huge}})).unwrap_err();
        assert!(
            error.to_string().len() < 4_096,
            "{}",
            error.to_string().len()
        );
        let blocked = json!({"promptFeedback": {"blockReason": "SAFETY", "note": huge}});
        let error = parse(blocked).unwrap_err();
        assert!(error.to_string().contains("blockReason SAFETY"), "{error}");
        assert!(error.to_string().len() < 4_096);
        let error = parse(json!({"candidates": [], "padding": huge})).unwrap_err();
        assert!(matches!(&error, CompletionError::Decode(m) if m.contains("no candidates")));
        assert!(error.to_string().len() < 4_096);
    }
}
