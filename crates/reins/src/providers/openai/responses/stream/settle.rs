//! The final output of a streamed response held to what streamed.
//!
//! The run acts on the output `response.completed` (or `response.incomplete`) lists; whoever
//! acts on the streamed chunks (an `on_text_delta` or `on_tool_call_delta` hook, a streaming
//! UI, the step view's deltas) must have seen the same answer. So the final output may only
//! *extend* what streamed: what it adds that no delta carried (a whole item a server sent
//! without deltas, the rest of a text, a call never announced) is streamed before the answer
//! ends, and an output that contradicts the stream (other text, a call's other name or
//! arguments, a call streamed but not listed) fails the turn with a decode error rather than
//! let the run act on something the stream never showed. Reasoning is only extended, never
//! held to agree: servers stream a reasoning item's text while the final lists its summary,
//! and no tool runs on it.

use crate::completion::{CompletionError, CompletionResponse, StreamChunk, parse_arguments};
use crate::message::AssistantContent;
use crate::providers::codec::{self, Chunks};
use crate::providers::transport::excerpt;
use serde_json::Value;

/// What the chunks of a streamed response carried, as a listener assembled it.
#[derive(Debug, Default)]
pub(super) struct Streamed {
    text: String,
    reasoning: String,
    calls: Vec<StreamedCall>,
}

/// One tool call as its chunks streamed it.
#[derive(Debug)]
struct StreamedCall {
    id: String,
    name: Option<String>,
    arguments: String,
}

impl Streamed {
    /// Adds chunks the decoder queued.
    pub(super) fn record<'a>(&mut self, chunks: impl Iterator<Item = &'a StreamChunk>) {
        for chunk in chunks {
            match chunk {
                StreamChunk::Text(text) => self.text.push_str(text),
                StreamChunk::Reasoning(text) => self.reasoning.push_str(text),
                StreamChunk::ToolCall { id, name, delta } => {
                    let position = match self.calls.iter().position(|call| &call.id == id) {
                        Some(position) => position,
                        None => {
                            self.calls.push(StreamedCall {
                                id: id.clone(),
                                name: None,
                                arguments: String::new(),
                            });
                            self.calls.len() - 1
                        }
                    };
                    let call = &mut self.calls[position];
                    if call.name.is_none() {
                        call.name.clone_from(name);
                    }
                    call.arguments.push_str(delta);
                }
                StreamChunk::Done(_) => {}
            }
        }
    }

    /// Queues in `out` what `answer` adds to what streamed; an error when it contradicts
    /// it (see the module's documentation).
    pub(super) fn settle(
        mut self,
        answer: &CompletionResponse,
        out: &mut Chunks,
    ) -> Result<(), CompletionError> {
        // Queued only once the whole output is found to agree: nothing of a refused answer
        // streams.
        let mut added = Chunks::new();
        for part in answer.content.iter() {
            let AssistantContent::ToolCall(call) = part else {
                continue;
            };
            let arguments = arguments_text(&call.arguments);
            let Some(position) = self.calls.iter().position(|c| c.id == call.id) else {
                added.push_back(codec::tool_call_chunk(
                    call.id.as_str(),
                    Some(&call.name),
                    arguments,
                ));
                continue;
            };
            let streamed = self.calls.swap_remove(position);
            let name = match streamed.name.as_deref() {
                None => Some(call.name.as_str()),
                Some(name) if name == call.name => None,
                Some(name) => {
                    return Err(disagreement(format!(
                        "tool call `{}` streamed as `{}` and is listed as `{}`",
                        excerpt(&call.id),
                        excerpt(name),
                        excerpt(&call.name)
                    )));
                }
            };
            let rest = if parse_arguments(&streamed.arguments) == call.arguments {
                ""
            } else {
                arguments
                    .strip_prefix(streamed.arguments.as_str())
                    .ok_or_else(|| {
                        disagreement(format!(
                            "tool call `{}` streamed the arguments {} and is listed with {}",
                            excerpt(&call.id),
                            excerpt(&streamed.arguments),
                            excerpt(&arguments)
                        ))
                    })?
            };
            if name.is_some() || !rest.is_empty() {
                added.push_back(codec::tool_call_chunk(call.id.as_str(), name, rest));
            }
        }
        if let Some(unlisted) = self.calls.first() {
            return Err(disagreement(format!(
                "tool call `{}` (`{}`) streamed and is not in it",
                excerpt(&unlisted.id),
                excerpt(unlisted.name.as_deref().unwrap_or_default())
            )));
        }
        let text = answer.text();
        let Some(rest) = text.strip_prefix(self.text.as_str()) else {
            return Err(disagreement(format!(
                "the text streamed was {} and its text is {}",
                excerpt(&self.text),
                excerpt(&text)
            )));
        };
        if !rest.is_empty() {
            added.push_back(StreamChunk::Text(rest.to_owned()));
        }
        let reasoning: String = answer
            .content
            .iter()
            .filter_map(|part| match part {
                AssistantContent::Reasoning(reasoning) => Some(reasoning.text.as_str()),
                _ => None,
            })
            .collect();
        if let Some(rest) = reasoning.strip_prefix(self.reasoning.as_str()) {
            if !rest.is_empty() {
                added.push_back(StreamChunk::Reasoning(rest.to_owned()));
            }
        }
        out.extend(added);
        Ok(())
    }
}

/// A call's arguments as the JSON text a stream carries: text that is no JSON (kept as a
/// string when read) as it was sent.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The error of a final output that contradicts what streamed.
fn disagreement(detail: String) -> CompletionError {
    CompletionError::Decode(format!(
        "the response's final output disagrees with what it streamed: {detail}"
    ))
}
