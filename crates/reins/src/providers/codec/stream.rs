//! What the protocols' stream decoders share: the types of a
//! [`StreamDecoder`](crate::providers::StreamDecoder)'s methods, and reading an event.

use crate::completion::{CompletionError, CompletionResponse, StreamChunk};
use crate::json_weight::{MAX_PARSED_OVERHEAD, parses_within};
use crate::providers::transport::{StreamDecoder, excerpt};
use serde_json::Value;
use std::collections::VecDeque;

/// The chunks a decoder queues for the caller, in order.
pub(crate) type Chunks = VecDeque<StreamChunk>;

/// What a decoder makes of one event: the whole response when the event ends the answer.
pub(crate) type Step = Result<Option<CompletionResponse>, CompletionError>;

/// An event's data as JSON; when it is not, an error quoting it, and naming the event when
/// `name` is given (for an API whose events are named, so the error says which one broke).
pub(crate) fn event_json(data: &str, name: Option<&str>) -> Result<Value, CompletionError> {
    check_event_weight(data)?;
    serde_json::from_str(data).map_err(|error| {
        CompletionError::Decode(format!(
            "a stream event{} is not JSON ({error}): {}",
            name.map(|name| format!(" `{}`", excerpt(name)))
                .unwrap_or_default(),
            excerpt(data)
        ))
    })
}

/// Refuses an event whose JSON would take too much memory once parsed (an event within the
/// byte limit can hold millions of small objects).
pub(crate) fn check_event_weight(data: &str) -> Result<(), CompletionError> {
    if parses_within(data.as_bytes(), MAX_PARSED_OVERHEAD) {
        return Ok(());
    }
    Err(CompletionError::TooLarge {
        what: "the JSON structure of a stream event (parsed)".to_owned(),
        limit: MAX_PARSED_OVERHEAD,
    })
}

/// The type of a typed event: its `type` field, else its `event:` name, else empty.
pub(crate) fn event_type(event: &Value, name: Option<&str>) -> String {
    event
        .get("type")
        .and_then(Value::as_str)
        .or(name)
        .unwrap_or_default()
        .to_owned()
}

/// The error of a stream whose connection closed before the event that ends an answer: a cut
/// stream, not an answer. `awaited` says which event never came, leading into what `decoder`
/// received.
pub(crate) fn cut_stream(awaited: &str, decoder: &impl StreamDecoder) -> CompletionError {
    CompletionError::Decode(format!("the stream ended {awaited}{}", decoder.received()))
}

/// The chunk that streams part of a tool call: its name when it is first announced, then
/// `delta`, the next fragment of its arguments' JSON text.
pub(crate) fn tool_call_chunk(
    id: impl Into<String>,
    name: Option<&str>,
    delta: impl Into<String>,
) -> StreamChunk {
    StreamChunk::ToolCall {
        id: id.into(),
        name: name.map(str::to_owned),
        delta: delta.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_that_are_not_json_are_named_and_quoted() {
        let error = event_json("{oops", Some("ping")).unwrap_err().to_string();
        assert!(
            error.contains("a stream event `ping` is not JSON ("),
            "{error}"
        );
        assert!(error.ends_with("): {oops"), "{error}");
        let plain = event_json("{oops", None).unwrap_err().to_string();
        assert!(plain.contains("a stream event is not JSON ("), "{plain}");
        let event = event_json(r#"{"a": 1}"#, None).unwrap();
        assert_eq!(event_type(&event, Some("named")), "named");
        assert_eq!(event_type(&event, None), "");
    }
}
