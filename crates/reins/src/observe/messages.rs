//! Run content in the JSON shapes the GenAI semantic conventions give
//! `gen_ai.system_instructions`, `gen_ai.input.messages` and `gen_ai.output.messages`: a
//! message is a `role` and typed `parts` (`text`, `tool_call`, `tool_call_response`,
//! `reasoning`). Trace viewers read these shapes as a chat (Phoenix validates them against the
//! conventions' schema and shows nothing of a message that does not match); reins's own
//! serialized `Message` is not one of them.
//!
//! Built only for a span that records content, borrowing the run's messages; each part's
//! content is cut to its limit first (copied only then), a part too long redacted whole
//! before it is cut ([`PartCut`]).

use super::part_limit::{PartCut, serialized_len};
use crate::completion::FinishReason;
use crate::message::{AssistantContent, Message};
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;

/// One part of a message.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text {
        content: Cow<'a, str>,
    },
    ToolCall {
        id: &'a str,
        name: &'a str,
        arguments: Cow<'a, Value>,
    },
    ToolCallResponse {
        id: &'a str,
        response: Cow<'a, str>,
    },
    /// The reasoning text only: a provider's signature is an opaque token, not content.
    Reasoning {
        content: Cow<'a, str>,
    },
}

#[derive(Serialize)]
struct InputMessage<'a> {
    role: &'static str,
    parts: Vec<Part<'a>>,
}

#[derive(Serialize)]
struct OutputMessage<'a> {
    role: &'static str,
    parts: Vec<Part<'a>>,
    finish_reason: &'a str,
}

/// `gen_ai.system_instructions`: the preamble as one text part.
pub(crate) fn system_instructions(preamble: &str, limit: PartCut<'_>) -> Option<String> {
    let content = limit.text(preamble);
    serde_json::to_string(&[Part::Text { content }]).ok()
}

/// `gen_ai.input.messages`: the history sent to the model, its newest messages within
/// [`PartLimit::input_budget`]. Every `chat` span holds the whole history again, so without
/// that bound a long run's trace would grow with the square of its turns; messages left out
/// are said by one `system` message first, where a person reading the chat sees it.
///
/// The messages kept are chosen first, by their size with each part cut (not redacted), and
/// only they are built with `limit`, which gives a part too long to the redactor whole: a
/// part left out of the span costs no redaction (a redactor's patterns over a megabyte tool
/// result, on every later `chat` span). A redactor that changes a part's length within the
/// cut changes the recorded size a little from the measured one.
pub(crate) fn input_messages(history: &[Message], limit: PartCut<'_>) -> Option<String> {
    let budget = limit.input_budget();
    let (kept, bytes) = newest_within(history, limit.unredacted(), budget);
    let left_out = history.len() - kept;
    let mut joined = String::with_capacity(bytes.min(budget) + 128);
    joined.push('[');
    if left_out > 0 {
        let note = format!(
            "…[{left_out} earlier messages not recorded: the input recorded on a span is kept \
             within {budget} bytes]"
        );
        let marker = InputMessage {
            role: "system",
            parts: vec![Part::Text {
                content: Cow::Owned(note),
            }],
        };
        joined.push_str(&serde_json::to_string(&marker).ok()?);
        joined.push(',');
    }
    for (index, message) in history.iter().skip(left_out).enumerate() {
        if index > 0 {
            joined.push(',');
        }
        joined.push_str(&serde_json::to_string(&input_message(message, limit)).ok()?);
    }
    joined.push(']');
    Some(joined)
}

/// How many of `history`'s newest messages fit in `budget` bytes of JSON (a comma each), their
/// parts cut by `cut`, and the bytes they take. The newest message is kept whatever its size:
/// each of its parts is cut already.
fn newest_within(history: &[Message], cut: PartCut<'_>, budget: usize) -> (usize, usize) {
    let mut kept = 0;
    let mut bytes = 0usize;
    for message in history.iter().rev() {
        let size = serialized_len(&input_message(message, cut)).saturating_add(1);
        if bytes.saturating_add(size) > budget && kept > 0 {
            break;
        }
        bytes = bytes.saturating_add(size);
        kept += 1;
    }
    (kept, bytes)
}

/// One message of `gen_ai.input.messages`, its parts cut to `limit`.
fn input_message<'a>(message: &'a Message, limit: PartCut<'_>) -> InputMessage<'a> {
    match message {
        Message::System { content } => InputMessage {
            role: "system",
            parts: vec![Part::Text {
                content: limit.text(content),
            }],
        },
        Message::User { content } => InputMessage {
            role: "user",
            parts: vec![Part::Text {
                content: limit.text(content),
            }],
        },
        Message::Assistant { content } => InputMessage {
            role: "assistant",
            parts: content
                .iter()
                .map(|part| assistant_part(part, limit))
                .collect(),
        },
        Message::Tool(result) => InputMessage {
            role: "tool",
            parts: vec![Part::ToolCallResponse {
                id: &result.tool_call_id,
                response: limit.text(&result.content),
            }],
        },
    }
}

/// `gen_ai.output.messages`: the model's answer, one assistant message. The conventions
/// require a finish reason: when the provider gave none, a message that calls tools finished
/// to call them, any other one stopped.
pub(crate) fn output_messages(
    content: &[AssistantContent],
    finish_reason: Option<&FinishReason>,
    limit: PartCut<'_>,
) -> Option<String> {
    let finish_reason = match finish_reason {
        Some(reason) => finish_reason_name(reason),
        None if content
            .iter()
            .any(|part| matches!(part, AssistantContent::ToolCall(_))) =>
        {
            finish_reason_name(&FinishReason::ToolCalls)
        }
        None => finish_reason_name(&FinishReason::Stop),
    };
    let message = OutputMessage {
        role: "assistant",
        parts: content
            .iter()
            .map(|part| assistant_part(part, limit))
            .collect(),
        finish_reason,
    };
    serde_json::to_string(&[message]).ok()
}

/// `gen_ai.output.messages` of a whole run: its final answer, one assistant text message
/// that stopped.
pub(crate) fn answer_messages(answer: &str, limit: PartCut<'_>) -> Option<String> {
    let message = OutputMessage {
        role: "assistant",
        parts: vec![Part::Text {
            content: limit.text(answer),
        }],
        finish_reason: finish_reason_name(&FinishReason::Stop),
    };
    serde_json::to_string(&[message]).ok()
}

/// A finish reason as the conventions name it (`gen_ai.response.finish_reasons` and an output
/// message's `finish_reason`): `stop`, `length`, `content_filter`, `tool_call`, or the
/// provider's own word for any other.
pub(crate) fn finish_reason_name(reason: &FinishReason) -> &str {
    match reason {
        FinishReason::Stop => "stop",
        FinishReason::Length => "length",
        FinishReason::ToolCalls => "tool_call",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::Other(other) => other,
    }
}

fn assistant_part<'a>(part: &'a AssistantContent, limit: PartCut<'_>) -> Part<'a> {
    match part {
        AssistantContent::Text(text) => Part::Text {
            content: limit.text(&text.text),
        },
        AssistantContent::ToolCall(call) => Part::ToolCall {
            id: &call.id,
            name: &call.name,
            arguments: limit.value(&call.arguments),
        },
        AssistantContent::Reasoning(reasoning) => Part::Reasoning {
            content: limit.text(&reasoning.text),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::PartLimit;

    fn parsed(json: &str) -> Vec<Value> {
        serde_json::from_str(json).expect("the input is a JSON array")
    }

    #[test]
    fn a_history_within_the_budget_is_recorded_whole() {
        let history = [Message::user("Add 1 and 2."), Message::assistant("3")];
        let recorded = input_messages(&history, PartLimit(1024).into()).unwrap();
        let messages = parsed(&recorded);
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0]["role"], "user");
    }

    #[test]
    fn a_long_history_keeps_its_newest_messages_and_says_how_many_were_left_out() {
        // 100 KiB parts: a budget of 1.6 MB, of messages of ~100 KB.
        let limit = PartCut::from(PartLimit(100 * 1024));
        let history: Vec<Message> = (0..60)
            .map(|n| Message::user(format!("message {n}: {}", "x".repeat(100_000))))
            .collect();
        let recorded = input_messages(&history, limit).unwrap();
        let messages = parsed(&recorded);
        let marker = messages[0]["parts"][0]["content"].as_str().unwrap();
        assert_eq!(messages[0]["role"], "system");
        let left_out = 60 - (messages.len() - 1);
        assert!(
            marker.starts_with(&format!("…[{left_out} earlier messages not recorded")),
            "{marker}"
        );
        assert_eq!(left_out, 60 - 16, "16 messages fit");
        let last = messages.last().unwrap()["parts"][0]["content"]
            .as_str()
            .unwrap();
        assert!(last.starts_with("message 59:"), "{last}");
        assert!(recorded.len() <= limit.input_budget() + marker.len() + 64);
    }
}
