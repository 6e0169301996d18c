//! Run content in the JSON shapes the GenAI semantic conventions give
//! `gen_ai.system_instructions`, `gen_ai.input.messages` and `gen_ai.output.messages`: a
//! message is a `role` and typed `parts` (`text`, `tool_call`, `tool_call_response`,
//! `reasoning`). Trace viewers read these shapes as a chat (Phoenix validates them against the
//! conventions' schema and shows nothing of a message that does not match); reins's own
//! serialized `Message` is not one of them.
//!
//! Built only for a span that records content, borrowing the run's messages; each part's
//! content is cut to the [`PartLimit`] first (copied only then).

use super::part_limit::PartLimit;
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
pub(crate) fn system_instructions(preamble: &str, limit: PartLimit) -> Option<String> {
    let content = limit.text(preamble);
    serde_json::to_string(&[Part::Text { content }]).ok()
}

/// `gen_ai.input.messages`: the history sent to the model.
pub(crate) fn input_messages(history: &[Message], limit: PartLimit) -> Option<String> {
    let messages: Vec<InputMessage<'_>> = history
        .iter()
        .map(|message| match message {
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
        })
        .collect();
    serde_json::to_string(&messages).ok()
}

/// `gen_ai.output.messages`: the model's answer, one assistant message. The conventions
/// require a finish reason: when the provider gave none, a message that calls tools finished
/// to call them, any other one stopped.
pub(crate) fn output_messages(
    content: &[AssistantContent],
    finish_reason: Option<&FinishReason>,
    limit: PartLimit,
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
pub(crate) fn answer_messages(answer: &str, limit: PartLimit) -> Option<String> {
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

fn assistant_part(part: &AssistantContent, limit: PartLimit) -> Part<'_> {
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
