//! A turn's content built from Gemini parts, shared by blocking and streamed answers.

use super::names;
use crate::completion::{CompletionError, StreamChunk};
use crate::json_integers::OversizedLiterals;
use crate::message::{AssistantContent, Reasoning};
use crate::providers::codec::{self, Chunks};
use serde_json::Value;

/// Builds a turn's content from Gemini parts, whether they come in one response or spread
/// over a stream's events: consecutive text joins into one part, and so do consecutive
/// thought fragments until one carries a signature. Where it streams, it also says what
/// each part adds. (Not [`StreamAssembler`](crate::completion::StreamAssembler): that has no
/// place for signatures.)
#[derive(Debug, Default)]
pub(super) struct TurnBuilder {
    parts: Vec<AssistantContent>,
    calls: usize,
    text_len: usize,
    reasoning_len: usize,
    /// Bytes kept that no chunk carries: signatures, and the ids of calls.
    kept: usize,
    /// The ids of the turn's calls, kept distinct.
    ids: codec::CallIds,
}

impl TurnBuilder {
    /// Adds one part; streamed, `out` is where its chunks go, with the text of the event
    /// that carried it.
    pub(super) fn part(
        &mut self,
        part: &Value,
        mut out: Option<(&mut Chunks, &OversizedLiterals<'_>)>,
    ) -> Result<(), CompletionError> {
        let signature = part
            .get("thoughtSignature")
            .and_then(Value::as_str)
            .filter(|signature| !signature.is_empty());
        if let Some(signature) = signature {
            self.kept = self.kept.saturating_add(signature.len());
        }
        if let Some(call) = part.get("functionCall") {
            let name = names::from_gemini(codec::call_name(call, "functionCall part", part)?);
            let given = call.get("id").and_then(Value::as_str);
            let mut id = codec::call_id(given.filter(|id| !id.is_empty()), self.calls);
            self.ids.claim(&mut id);
            self.calls += 1;
            self.kept = self.kept.saturating_add(id.len());
            let mut arguments = codec::arguments_from_object(call.get("args"));
            if let Some((out, event)) = out.as_mut() {
                // Read with the event: an integer beyond 64 bits in them was rounded, and the
                // call keeps the model's text instead (a whole answer's calls are kept so
                // once its body is read).
                let text = match event.exact_text(&arguments) {
                    Some(text) => {
                        arguments = Value::String(text.clone());
                        text
                    }
                    None => arguments.to_string(),
                };
                out.push_back(codec::tool_call_chunk(id.as_str(), Some(name), text));
            }
            self.parts
                .push(AssistantContent::tool_call(id, name, arguments));
            if let Some(signature) = signature {
                self.signature_after(signature);
            }
            return Ok(());
        }
        let text = part.get("text").and_then(Value::as_str);
        if part.get("thought").and_then(Value::as_bool) == Some(true) {
            let text = text.unwrap_or_default();
            if !text.is_empty() {
                self.reasoning_len += text.len();
                if let Some((out, _)) = out {
                    out.push_back(StreamChunk::Reasoning(text.to_owned()));
                }
            }
            match self.parts.last_mut() {
                Some(AssistantContent::Reasoning(reasoning)) if reasoning.signature.is_none() => {
                    reasoning.text.push_str(text);
                    reasoning.signature = signature.map(str::to_owned);
                }
                _ if text.is_empty() && signature.is_none() => {}
                _ => self.parts.push(AssistantContent::Reasoning(Reasoning {
                    text: text.to_owned(),
                    signature: signature.map(str::to_owned),
                })),
            }
            return Ok(());
        }
        if let Some(text) = text.filter(|text| !text.is_empty()) {
            self.text_len += text.len();
            if let Some((out, _)) = out {
                out.push_back(StreamChunk::Text(text.to_owned()));
            }
            match self.parts.last_mut() {
                Some(AssistantContent::Text(existing)) => existing.text.push_str(text),
                _ => self.parts.push(AssistantContent::text(text)),
            }
        }
        // Other kinds of parts (inline data, code execution) stay in the raw response.
        if let Some(signature) = signature {
            self.signature_after(signature);
        }
        Ok(())
    }

    /// Keeps a signature carried by a non-thought part, right after that part.
    fn signature_after(&mut self, signature: &str) {
        self.parts.push(AssistantContent::Reasoning(Reasoning {
            text: String::new(),
            signature: Some(signature.to_owned()),
        }));
    }

    /// Bytes kept that no streamed chunk carries (see [`StreamDecoder::kept`]).
    ///
    /// [`StreamDecoder::kept`]: crate::providers::StreamDecoder::kept
    pub(super) fn kept(&self) -> usize {
        self.kept
    }

    /// How many parts the turn has so far.
    pub(super) fn parts(&self) -> usize {
        self.parts.len()
    }

    pub(super) fn has_calls(&self) -> bool {
        self.calls > 0
    }

    pub(super) fn summary(&self) -> String {
        format!(
            "{} characters of text, {} of thoughts and {} function call(s)",
            self.text_len, self.reasoning_len, self.calls
        )
    }

    /// The turn's parts, in order.
    pub(super) fn into_parts(self) -> Vec<AssistantContent> {
        self.parts
    }
}

/// The parts of a response's first candidate.
pub(super) fn candidate_parts(candidate: &Value) -> &[Value] {
    candidate
        .get("content")
        .and_then(|content| content.get("parts"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}
