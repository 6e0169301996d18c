//! A streamed Chat Completions answer: `data:` chunks with deltas, ended by `data: [DONE]`.

use super::response::{ANSWER, finish_reason, reasoning_text};
use crate::completion::{
    CompletionError, CompletionResponse, FinishReason, RawResponse, StreamAssembler, StreamChunk,
    Usage,
};
use crate::json_integers::OversizedLiterals;
use crate::providers::codec::{self, Chunks, Step};
use crate::providers::transport::{
    MAX_ANSWER_PARTS, StreamDecoder, excerpt_json, sealed::Sealed, too_many_parts,
};
use serde_json::{Value, json};

/// A tool call the stream started.
#[derive(Debug)]
struct StartedCall {
    /// The stream's `index` of the call.
    index: u64,
    /// The id reins gives the call.
    id: String,
    /// The id the server sent, when another call of the turn had it (`id` is then a fresh
    /// one): the call's later fragments may repeat it.
    sent_as: Option<String>,
    /// Some fragment of the call named its function.
    named: bool,
}

impl StartedCall {
    /// The id the server knows the call by.
    fn sent_id(&self) -> &str {
        self.sent_as.as_deref().unwrap_or(&self.id)
    }
}

/// Decodes a streamed Chat Completions answer into chunks.
#[derive(Debug, Default)]
pub struct ChatStreamDecoder {
    assembler: StreamAssembler,
    /// The calls by the stream's `index`, in the order they started.
    calls: Vec<StartedCall>,
    /// Their ids, kept distinct: two calls the server gives one id are two calls.
    ids: codec::CallIds,
    usage: Usage,
    finish_reason: Option<FinishReason>,
    response_id: Option<String>,
    /// The last chunk received, as the raw response.
    last: Value,
    events: usize,
    text_bytes: usize,
    /// Some event carried reasoning, text or a tool call.
    answered: bool,
    /// Bytes kept that no chunk counts: the ids of the calls.
    kept: usize,
}

impl ChatStreamDecoder {
    /// Reads one call's fragment of the event whose text is `data`.
    fn tool_call_delta(&mut self, call: &Value, data: &OversizedLiterals<'_>, out: &mut Chunks) {
        let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
        let function = call.get("function").unwrap_or(&Value::Null);
        let name = function.get("name").and_then(Value::as_str);
        let arguments = codec::arguments_text(function.get("arguments"), data);
        let arguments = arguments.as_ref();
        let given = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        // A fragment continues the call last started at its index, unless it names another
        // id: servers that omit `index` (it then reads as 0) send each call whole, with its
        // own id, and merging them would garble the first and lose the rest.
        let current = self
            .calls
            .iter()
            .rposition(|call| call.index == index)
            .filter(|&at| given.is_none_or(|given| given == self.calls[at].sent_id()));
        let at = match current {
            Some(at) => at,
            None => {
                let mut id = codec::call_id(given, index);
                let sent_as = self.ids.claim(&mut id);
                let sent_len = sent_as.as_ref().map_or(0, String::len);
                self.kept = self.kept.saturating_add(id.len() + sent_len);
                self.calls.push(StartedCall {
                    index,
                    id,
                    sent_as,
                    named: false,
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[at];
        call.named |= name.is_some();
        let id = call.id.clone();
        self.assembler.tool_call(&id, name, arguments);
        out.push_back(codec::tool_call_chunk(id, name, arguments));
    }

    /// The answer at `[DONE]`: an error when the server never said why it finished (as an
    /// Anthropic stream without `message_stop`, a Responses one without
    /// `response.completed`, a Gemini one without `finishReason`), or a call was never named.
    fn done(&mut self) -> Result<CompletionResponse, CompletionError> {
        if self.finish_reason.is_none() {
            // Nothing answered: a gateway whose upstream failed ends the stream so, and an
            // empty answer would pass for the model's. Something answered: a proxy that cut
            // the stream ends it so, and the run would act on part of an answer.
            let awaited = if self.answered {
                "with [DONE] before any finish_reason (the server never said why the answer \
                 ended) after "
            } else {
                "with [DONE] before any answer (no text, tool call or finish_reason) after "
            };
            return Err(codec::cut_stream(awaited, &*self));
        }
        if let Some(call) = self.calls.iter().find(|call| !call.named) {
            let quoted = json!({"index": call.index, "id": call.sent_id()});
            return Err(codec::nameless_call("tool call", &quoted));
        }
        Ok(self.finish())
    }

    fn finish(&mut self) -> CompletionResponse {
        let decoder = std::mem::take(self);
        decoder.assembler.finish(
            decoder.usage,
            decoder.finish_reason,
            decoder.response_id,
            RawResponse::new(decoder.last),
        )
    }
}

impl Sealed for ChatStreamDecoder {}

impl StreamDecoder for ChatStreamDecoder {
    fn event(&mut self, _name: Option<&str>, data: &str, out: &mut Chunks) -> Step {
        self.events += 1;
        if data.trim() == "[DONE]" {
            return self.done().map(Some);
        }
        let chunk = codec::event_json(data, None)?;
        if let Some(error) = chunk.get("error") {
            return Err(CompletionError::Other(format!(
                "the provider reported an error mid-stream: {}",
                excerpt_json(error)
            )));
        }
        if let Some(id) = chunk.get("id").and_then(Value::as_str) {
            self.response_id.get_or_insert_with(|| id.to_owned());
        }
        if let Some(usage_value) = chunk.get("usage").filter(|u| !u.is_null()) {
            self.usage = ANSWER.read_usage(usage_value);
        }
        if let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) {
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(finish_reason(reason));
            }
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            if let Some(text) = reasoning_text(delta) {
                self.answered = true;
                self.assembler.reasoning(text);
                out.push_back(StreamChunk::Reasoning(text.to_owned()));
            }
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                if !text.is_empty() {
                    self.answered = true;
                    self.text_bytes += text.len();
                    self.assembler.text(text);
                    out.push_back(StreamChunk::Text(text.to_owned()));
                }
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                let literals = OversizedLiterals::in_source(data);
                for call in calls {
                    // One event can start any number of calls, each looked up among those
                    // before it: the limit holds within the event too.
                    if self.calls.len() > MAX_ANSWER_PARTS {
                        return Err(too_many_parts());
                    }
                    self.answered = true;
                    self.tool_call_delta(call, &literals, out);
                }
            }
        }
        self.last = chunk;
        Ok(None)
    }

    fn closed(self) -> Result<CompletionResponse, CompletionError> {
        Err(codec::cut_stream("without [DONE] after ", &self))
    }

    fn received(&self) -> String {
        format!(
            "{} event(s), {} bytes of text and {} tool call(s); the last event: {}",
            self.events,
            self.text_bytes,
            self.calls.len(),
            excerpt_json(&self.last)
        )
    }

    fn kept(&self) -> usize {
        self.kept
    }

    fn parts(&self) -> usize {
        self.calls.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[Value]) -> CompletionResponse {
        let mut decoder = ChatStreamDecoder::default();
        let mut out = Chunks::new();
        for chunk in chunks {
            let step = decoder.event(None, &chunk.to_string(), &mut out).unwrap();
            assert!(step.is_none());
        }
        let end = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
        assert!(
            decoder
                .event(None, &end.to_string(), &mut out)
                .unwrap()
                .is_none()
        );
        decoder.event(None, "[DONE]", &mut out).unwrap().unwrap()
    }

    fn tool_chunk(call: Value) -> Value {
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
    }

    #[test]
    fn done_with_spaces_around_it_ends_the_answer() {
        let mut decoder = ChatStreamDecoder::default();
        let mut out = Chunks::new();
        let text = json!({"choices": [{"index": 0, "delta": {"content": "hi"},
                                       "finish_reason": "stop"}]});
        assert!(
            decoder
                .event(None, &text.to_string(), &mut out)
                .unwrap()
                .is_none()
        );
        let done = decoder.event(None, " [DONE] ", &mut out).unwrap();
        assert_eq!(done.map(|response| response.text()).as_deref(), Some("hi"));
    }

    #[test]
    fn calls_without_an_index_are_told_apart_by_their_ids() {
        // Some compatible servers send each call whole, with an id but no `index`.
        let response = decode(&[
            tool_chunk(
                json!({"id": "call_a", "function": {"name": "add", "arguments": "{\"a\":1}"}}),
            ),
            tool_chunk(
                json!({"id": "call_b", "function": {"name": "mul", "arguments": "{\"b\":2}"}}),
            ),
        ]);
        let calls: Vec<_> = response
            .tool_calls()
            .map(|call| (call.id.clone(), call.name.clone(), call.arguments.clone()))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("call_a".to_owned(), "add".to_owned(), json!({"a": 1})),
                ("call_b".to_owned(), "mul".to_owned(), json!({"b": 2})),
            ]
        );
    }
}
