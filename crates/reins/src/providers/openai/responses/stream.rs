//! A streamed Responses API answer: typed events (`response.output_text.delta`,
//! `response.output_item.done`, …) ended by `response.completed` or `response.incomplete`.

mod items;
mod settle;

use super::response::{
    ANSWER, build_response, failure, finish_reason, parse, read_output, response_failure,
};
use crate::completion::{
    CompletionError, CompletionResponse, RawResponse, StreamAssembler, StreamChunk,
    keep_oversized_as_text,
};
use crate::providers::codec::{self, Chunks, Step};
use crate::providers::transport::{StreamDecoder, excerpt, sealed::Sealed};
use serde_json::{Value, json};
use settle::Streamed;

/// What kind of output item a streamed item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ItemKind {
    Message,
    FunctionCall,
    Reasoning,
}

/// One output item being streamed.
#[derive(Debug)]
struct StreamedItem {
    id: Option<String>,
    index: Option<u64>,
    kind: ItemKind,
    /// For a function call: the id it is answered by.
    call_id: String,
    /// The text (or arguments) streamed for it so far.
    text: String,
    /// For reasoning: the summary (or content) part the last fragment belonged to.
    part: Option<u64>,
}

/// Decodes the typed events of a streamed response into chunks.
#[derive(Debug)]
pub struct ResponsesStreamDecoder {
    assembler: StreamAssembler,
    items: Vec<StreamedItem>,
    /// Finished output items by `output_index`, for a final event that lists no output.
    done_items: Vec<(u64, Value)>,
    response_id: Option<String>,
    events: usize,
    last_type: String,
    /// Bytes kept that no chunk counts: items' ids, and finished items kept whole.
    kept: usize,
    /// The ids of the turn's function calls, kept distinct: two calls the server gives one
    /// `call_id` are two calls.
    call_ids: codec::CallIds,
    /// What the chunks queued so far carried, which the final output is held to.
    streamed: Streamed,
}

impl Default for ResponsesStreamDecoder {
    fn default() -> Self {
        ResponsesStreamDecoder {
            assembler: StreamAssembler::default(),
            items: Vec::new(),
            done_items: Vec::new(),
            response_id: None,
            events: 0,
            last_type: String::from("none"),
            kept: 0,
            call_ids: codec::CallIds::default(),
            streamed: Streamed::default(),
        }
    }
}

impl ResponsesStreamDecoder {
    fn text_delta(&mut self, event: &Value, out: &mut Chunks) {
        let delta = delta(event);
        if !delta.is_empty() {
            let item = self.item(event, ItemKind::Message);
            item.text.push_str(delta);
            self.assembler.text(delta);
            out.push_back(StreamChunk::Text(delta.to_owned()));
        }
    }

    fn arguments_delta(&mut self, event: &Value, out: &mut Chunks) {
        let delta = delta(event);
        if !delta.is_empty() {
            let item = self.item(event, ItemKind::FunctionCall);
            item.text.push_str(delta);
            let id = item.call_id.clone();
            self.assembler.tool_call(&id, None, delta);
            out.push_back(codec::tool_call_chunk(id, None, delta));
        }
    }

    fn reasoning_delta(&mut self, event: &Value, out: &mut Chunks) {
        let delta = delta(event);
        if !delta.is_empty() {
            let part = event
                .get("summary_index")
                .or_else(|| event.get("content_index"))
                .and_then(Value::as_u64);
            let item = self.item(event, ItemKind::Reasoning);
            // Parts of one reasoning item join with a blank line, as when blocking.
            let new_part = !item.text.is_empty() && part.is_some() && item.part != part;
            item.part = part;
            let delta = if new_part {
                format!("\n\n{delta}")
            } else {
                delta.to_owned()
            };
            item.text.push_str(&delta);
            self.assembler.reasoning(&delta);
            out.push_back(StreamChunk::Reasoning(delta));
        }
    }

    /// The whole response at the end of the stream, held to what streamed (see [`settle`]):
    /// what it adds is queued in `out`. `data` is the text of the event carrying `response`.
    fn finish(&mut self, response: Value, data: &str, out: &mut Chunks) -> Step {
        let mut answer = self.final_output(response)?;
        keep_oversized_as_text(&mut answer, data);
        std::mem::take(&mut self.streamed).settle(&answer, out)?;
        Ok(Some(answer))
    }

    /// The whole response: read from the final response object, as a blocking call would, so
    /// both return the same; from the finished items or the fragments when the final object
    /// lists no output.
    fn final_output(&mut self, response: Value) -> Result<CompletionResponse, CompletionError> {
        if let Some(error) = response_failure(&response) {
            return Err(error);
        }
        let listed = response
            .get("output")
            .and_then(Value::as_array)
            .is_some_and(|items| !items.is_empty());
        if listed {
            return parse(response);
        }
        let mut response = response;
        if response.get("id").is_none() {
            if let (Some(object), Some(id)) = (response.as_object_mut(), &self.response_id) {
                object.insert("id".into(), json!(id));
            }
        }
        if !self.done_items.is_empty() {
            let mut items = std::mem::take(&mut self.done_items);
            items.sort_by_key(|(index, _)| *index);
            let items: Vec<Value> = items.into_iter().map(|(_, item)| item).collect();
            let output = read_output(&items)?;
            return Ok(build_response(response, output));
        }
        let has_calls = self
            .items
            .iter()
            .any(|item| item.kind == ItemKind::FunctionCall);
        let finish = finish_reason(&response, has_calls, false);
        let (usage, id) = (ANSWER.usage_of(&response), ANSWER.id_of(&response));
        let assembler = std::mem::take(&mut self.assembler);
        Ok(assembler.finish(usage, Some(finish), id, RawResponse::new(response)))
    }

    /// Reads one event, queueing the chunks it carries; the response when it ends the answer.
    fn read_event(&mut self, name: Option<&str>, data: &str, out: &mut Chunks) -> Step {
        if data.trim() == "[DONE]" {
            return Ok(None);
        }
        let event = codec::event_json(data, None)?;
        let kind = codec::event_type(&event, name);
        self.events += 1;
        self.last_type.clone_from(&kind);
        match kind.as_str() {
            "response.created" | "response.in_progress" | "response.queued" => {
                if let Some(id) = event
                    .get("response")
                    .and_then(|r| r.get("id"))
                    .and_then(Value::as_str)
                {
                    self.response_id = Some(id.to_owned());
                }
            }
            "response.output_item.added" => self.item_added(&event, out),
            "response.output_text.delta" | "response.refusal.delta" => {
                self.text_delta(&event, out);
            }
            "response.function_call_arguments.delta" => self.arguments_delta(&event, out),
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.reasoning_delta(&event, out);
            }
            "response.output_item.done" => {
                self.kept = self.kept.saturating_add(data.len());
                self.item_done(&event, data, out);
            }
            "response.completed" | "response.incomplete" => {
                let Some(response) = event.get("response").filter(|r| r.is_object()) else {
                    return Err(CompletionError::Decode(format!(
                        "a {kind} event carries no response: {}",
                        excerpt(data)
                    )));
                };
                return self.finish(response.clone(), data, out);
            }
            "response.failed" => {
                let error = event.get("response").and_then(|r| r.get("error"));
                return Err(failure(error, "the response failed"));
            }
            "error" => {
                let error = event
                    .get("error")
                    .filter(|e| e.is_object())
                    .unwrap_or(&event);
                return Err(failure(
                    Some(error),
                    "the provider reported an error mid-stream",
                ));
            }
            _ => {}
        }
        Ok(None)
    }
}

impl Sealed for ResponsesStreamDecoder {}

impl StreamDecoder for ResponsesStreamDecoder {
    fn event(&mut self, name: Option<&str>, data: &str, out: &mut Chunks) -> Step {
        let queued = out.len();
        let step = self.read_event(name, data, out);
        if let Ok(None) = step {
            self.streamed.record(out.range(queued..));
        }
        step
    }

    fn closed(self) -> Result<CompletionResponse, CompletionError> {
        Err(codec::cut_stream("before response.completed after ", &self))
    }

    fn received(&self) -> String {
        let count = |kind: ItemKind| self.items.iter().filter(|i| i.kind == kind).count();
        let text: usize = self
            .items
            .iter()
            .filter(|i| i.kind == ItemKind::Message)
            .map(|i| i.text.len())
            .sum();
        format!(
            "{} event(s), the last `{}`: {} bytes of text, {} function call(s), {} reasoning \
             item(s)",
            self.events,
            excerpt(&self.last_type),
            text,
            count(ItemKind::FunctionCall),
            count(ItemKind::Reasoning),
        )
    }

    fn kept(&self) -> usize {
        self.kept
    }

    fn parts(&self) -> usize {
        self.items.len().max(self.done_items.len())
    }
}

/// The `delta` text of an event.
fn delta(event: &Value) -> &str {
    event
        .get("delta")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::completion::FinishReason;

    /// A new decoder fed `events`: the decoder, the chunks queued, and the response of the
    /// last event.
    fn feed(events: &[Value]) -> (ResponsesStreamDecoder, Chunks, Option<CompletionResponse>) {
        let mut decoder = ResponsesStreamDecoder::default();
        let mut out = Chunks::new();
        let mut done = None;
        for event in events {
            done = decoder.event(None, &event.to_string(), &mut out).unwrap();
        }
        (decoder, out, done)
    }

    #[test]
    fn deltas_stream_and_the_final_object_is_the_response() {
        let (_, out, done) = feed(&[
            json!({"type": "response.created", "response": {"id": "r1"}}),
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "function_call", "id": "fc", "call_id": "c1", "name": "add"}}),
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc",
                   "output_index": 0, "delta": "{}"}),
            json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 1,
                   "delta": "hi"}),
            json!({"type": "response.completed", "response": {"status": "completed",
                   "usage": {"input_tokens": 1, "output_tokens": 2}}}),
        ]);
        let done = done.unwrap();
        assert_eq!(out.len(), 3);
        assert!(
            matches!(&out[0], StreamChunk::ToolCall { id, name: Some(n), .. }
            if id == "c1" && n == "add")
        );
        assert_eq!(done.text(), "hi");
        assert_eq!(done.finish_reason, Some(FinishReason::ToolCalls));
        assert_eq!(done.response_id.as_deref(), Some("r1"));
        assert_eq!(done.usage.total_tokens, 3);
    }

    #[test]
    fn whole_items_without_deltas_still_stream() {
        let (_, out, done) = feed(&[
            json!({"type": "response.output_item.done", "output_index": 0,
                   "item": {"type": "message", "id": "m",
                            "content": [{"type": "output_text", "text": "whole"}]}}),
            json!({"type": "response.incomplete", "response": {"status": "incomplete",
                   "incomplete_details": {"reason": "max_output_tokens"}}}),
        ]);
        let done = done.unwrap();
        assert!(matches!(&out[0], StreamChunk::Text(text) if text == "whole"));
        assert_eq!(done.text(), "whole");
        assert_eq!(done.finish_reason, Some(FinishReason::Length));
    }

    #[test]
    fn cut_failed_and_malformed_streams_are_errors_with_excerpts() {
        let delta = json!({"type": "response.output_text.delta", "output_index": 0, "delta": "ab"});
        let (decoder, mut out, _) = feed(&[delta]);
        let error = decoder.closed().unwrap_err().to_string();
        assert!(
            error.contains("1 event(s)") && error.contains("2 bytes of text"),
            "{error}"
        );

        let mut decoder = ResponsesStreamDecoder::default();
        let failed = json!({"type": "response.failed",
                            "response": {"error": {"code": "server_error", "message": "boom"}}});
        let error = decoder
            .event(None, &failed.to_string(), &mut out)
            .unwrap_err();
        assert!(error.to_string().contains("server_error: boom"), "{error}");

        let garbage = format!("not json {}", "x".repeat(100_000));
        let error = decoder
            .event(None, &garbage, &mut out)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("not JSON") && error.len() < 3_000,
            "{}",
            error.len()
        );
    }
}
