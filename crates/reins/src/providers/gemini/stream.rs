//! A streamed `streamGenerateContent?alt=sse` answer: one `GenerateContentResponse` per event,
//! ended by the server closing the stream.

use super::response::{ANSWER, finish_reason, refusal};
use super::turn::{TurnBuilder, candidate_parts};
use crate::completion::{CompletionError, CompletionResponse, Usage};
use crate::json_integers::OversizedLiterals;
use crate::providers::codec::{self, Chunks, Step};
use crate::providers::transport::{StreamDecoder, excerpt, excerpt_json, sealed::Sealed};
use serde_json::Value;

/// Decodes the events of a `streamGenerateContent` response.
#[derive(Debug, Default)]
pub struct GeminiStreamDecoder {
    turn: TurnBuilder,
    usage: Usage,
    finish: Option<String>,
    response_id: Option<String>,
    events: usize,
    /// The last event received: the raw response of the assembled turn.
    last: Value,
}

impl GeminiStreamDecoder {
    /// How many events arrived and what they carried.
    fn progress(&self) -> String {
        format!("{} event(s) with {}", self.events, self.turn.summary())
    }
}

impl Sealed for GeminiStreamDecoder {}

impl StreamDecoder for GeminiStreamDecoder {
    fn event(&mut self, _name: Option<&str>, data: &str, out: &mut Chunks) -> Step {
        codec::check_event_weight(data)?;
        let event: Value = serde_json::from_str(data).map_err(|error| {
            CompletionError::Decode(format!(
                "a stream event is not JSON ({error}) after {}: {}",
                self.progress(),
                excerpt(data)
            ))
        })?;
        if let Some(error) = refusal(&event) {
            return Err(error);
        }
        self.events += 1;
        if let Some(id) = event.get("responseId").and_then(Value::as_str) {
            self.response_id.get_or_insert_with(|| id.to_owned());
        }
        if let Some(metadata) = event.get("usageMetadata") {
            self.usage = ANSWER.read_usage(metadata);
        }
        if let Some(candidate) = event.get("candidates").and_then(|c| c.get(0)) {
            // Scanned once for the event's calls, however many it holds.
            let literals = OversizedLiterals::in_source(data);
            for part in candidate_parts(candidate) {
                self.turn.part(part, Some((&mut *out, &literals)))?;
            }
            if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
                self.finish = Some(reason.to_owned());
            }
        }
        self.last = event;
        // Gemini ends an answer by closing the stream, never with an event.
        Ok(None)
    }

    /// Gemini ends a stream by closing it: the turn is complete only if some event said why
    /// the model stopped.
    fn closed(self) -> Result<CompletionResponse, CompletionError> {
        let Some(reason) = &self.finish else {
            return Err(CompletionError::Decode(format!(
                "the stream closed before Gemini finished the turn (no candidate carried a \
                 finishReason); received {}",
                self.received()
            )));
        };
        let finish = Some(finish_reason(reason, self.turn.has_calls()));
        let parts = self.turn.into_parts();
        Ok(codec::response(
            parts,
            self.usage,
            finish,
            self.response_id,
            self.last,
        ))
    }

    fn received(&self) -> String {
        format!(
            "{}; the last event: {}",
            self.progress(),
            excerpt_json(&self.last)
        )
    }

    fn kept(&self) -> usize {
        self.turn.kept()
    }

    fn parts(&self) -> usize {
        self.turn.parts()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::completion::{FinishReason, StreamChunk};
    use serde_json::json;
    use std::collections::VecDeque;

    fn feed(decoder: &mut GeminiStreamDecoder, event: Value) -> Vec<StreamChunk> {
        let mut out = VecDeque::new();
        let end = decoder
            .event(None, &event.to_string(), &mut out)
            .expect("an event");
        assert!(end.is_none(), "Gemini ends a stream by closing it");
        out.into()
    }

    #[test]
    fn a_closed_stream_with_a_finish_reason_is_the_answer() {
        let mut decoder = GeminiStreamDecoder::default();
        let chunks = feed(
            &mut decoder,
            json!({"candidates": [{"content": {"parts": [{"text": "Hel"}]}}], "responseId": "r"}),
        );
        assert!(matches!(&chunks[..], [StreamChunk::Text(t)] if t == "Hel"));
        let chunks = feed(
            &mut decoder,
            json!({"candidates": [{"content": {"parts": [
                {"text": "lo"},
                {"functionCall": {"name": "add", "args": {"a": 1}}},
            ]}, "finishReason": "STOP"}],
             "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 2}}),
        );
        assert_eq!(chunks.len(), 2);
        assert!(matches!(
            &chunks[1],
            StreamChunk::ToolCall { id, name: Some(name), delta }
                if id == "call_0" && name == "add" && delta == r#"{"a":1}"#
        ));
        let response = decoder.closed().expect("the answer");
        assert_eq!(response.finish_reason, Some(FinishReason::ToolCalls));
        assert_eq!(response.usage.total_tokens, 3);
        assert_eq!(response.response_id.as_deref(), Some("r"));
        assert_eq!(response.content.len(), 2);
    }

    #[test]
    fn a_stream_closed_without_a_finish_reason_is_an_error_saying_what_arrived() {
        let mut decoder = GeminiStreamDecoder::default();
        feed(
            &mut decoder,
            json!({"candidates": [{"content": {"parts": [{"text": "partial"}]}}]}),
        );
        let received = decoder.received();
        assert!(
            received.starts_with("1 event(s) with 7 characters of text"),
            "{received}"
        );
        assert!(received.contains("partial"), "{received}");
        let error = decoder.closed().unwrap_err();
        assert!(matches!(&error, CompletionError::Decode(m) if m.contains("finishReason")));
        let empty = GeminiStreamDecoder::default().closed().unwrap_err();
        assert!(empty.to_string().contains("0 event(s)"), "{empty}");
    }

    #[test]
    fn an_event_that_is_not_json_is_quoted_in_a_bounded_excerpt() {
        let mut decoder = GeminiStreamDecoder::default();
        let data = format!("{{not json{}", "x".repeat(100_000));
        let error = decoder
            .event(None, &data, &mut VecDeque::new())
            .unwrap_err();
        let message = error.to_string();
        assert!(message.contains("{not json") && message.contains("after 0 event(s)"));
        assert!(message.len() < 4_096, "{}", message.len());
    }

    #[test]
    fn an_error_event_ends_the_stream() {
        let mut decoder = GeminiStreamDecoder::default();
        let event = json!({"error": {"code": 500, "message": "Internal error encountered."}});
        let error = decoder
            .event(None, &event.to_string(), &mut VecDeque::new())
            .unwrap_err();
        assert!(error.to_string().contains("Internal error encountered."));
    }
}
