//! The output items of a streamed response: which item each event refers to, and what a
//! finished item holds that its deltas did not carry.

use super::{ItemKind, ResponsesStreamDecoder, StreamedItem};
use crate::completion::StreamChunk;
use crate::json_integers::{OversizedLiterals, exact_text};
use crate::providers::codec::{self, Chunks};
use crate::providers::openai::responses::response::{call_id, message_text, reasoning_text};
use serde_json::Value;

impl ResponsesStreamDecoder {
    /// The streamed item an event refers to (by `item_id`, else `output_index`), created when
    /// the stream did not announce it.
    pub(super) fn item(&mut self, event: &Value, kind: ItemKind) -> &mut StreamedItem {
        let id = event.get("item_id").and_then(Value::as_str);
        let index = event.get("output_index").and_then(Value::as_u64);
        self.item_at(id, index, kind)
    }

    /// The position of the streamed item with id `id` at `index`: by its id, and by its
    /// index too when both have one (two items a server gives one id stay two), else by its
    /// index alone.
    fn find(&self, id: Option<&str>, index: Option<u64>) -> Option<usize> {
        self.items.iter().position(|item| {
            let same_index = match (index, item.index) {
                (Some(index), Some(item_index)) => index == item_index,
                _ => true,
            };
            match (id, &item.id) {
                (Some(id), Some(item_id)) => id == item_id && same_index,
                _ => index.is_some() && item.index == index,
            }
        })
    }

    fn item_at(
        &mut self,
        id: Option<&str>,
        index: Option<u64>,
        kind: ItemKind,
    ) -> &mut StreamedItem {
        let position = match self.find(id, index) {
            Some(position) => position,
            None => {
                let call_id = codec::call_id(id, index.unwrap_or(self.items.len() as u64));
                self.push_item(id, index, kind, call_id);
                self.items.len() - 1
            }
        };
        &mut self.items[position]
    }

    /// Starts streaming an item; a function call's `call_id` is kept distinct from those of
    /// the turn's other calls.
    fn push_item(
        &mut self,
        id: Option<&str>,
        index: Option<u64>,
        kind: ItemKind,
        mut call_id: String,
    ) -> &mut StreamedItem {
        if kind == ItemKind::FunctionCall {
            self.call_ids.claim(&mut call_id);
        }
        let ids = id.map_or(0, str::len) + call_id.len();
        self.kept = self.kept.saturating_add(ids);
        let position = self.items.len();
        self.items.push(StreamedItem {
            id: id.map(str::to_owned),
            index,
            kind,
            call_id,
            text: String::new(),
            part: None,
        });
        &mut self.items[position]
    }

    /// Records an announced item; a function call is streamed with its name at once.
    pub(super) fn item_added(&mut self, event: &Value, out: &mut Chunks) {
        let Some(item) = event.get("item") else {
            return;
        };
        let index = event.get("output_index").and_then(Value::as_u64);
        let kind = match item.get("type").and_then(Value::as_str) {
            Some("message") => ItemKind::Message,
            Some("function_call") => ItemKind::FunctionCall,
            Some("reasoning") => ItemKind::Reasoning,
            _ => return,
        };
        let call_id = call_id(item, index.unwrap_or(self.items.len() as u64));
        let id = item.get("id").and_then(Value::as_str);
        let call_id = self.push_item(id, index, kind, call_id).call_id.clone();
        if kind == ItemKind::FunctionCall {
            let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
            self.assembler.tool_call(&call_id, Some(name), "");
            out.push_back(codec::tool_call_chunk(call_id, Some(name), ""));
        }
    }

    /// Records a finished item, and streams whatever of it no delta carried (some servers send
    /// whole items and no deltas).
    /// `data` is the event's text.
    pub(super) fn item_done(&mut self, event: &Value, data: &str, out: &mut Chunks) {
        let Some(item) = event.get("item") else {
            return;
        };
        // Arguments sent as an object (some compatible servers) were read with the event: an
        // integer beyond 64 bits in them was rounded, and the model's text is kept instead.
        let mut kept_text = None;
        if let Some(text) = item.get("arguments").and_then(|a| exact_text(a, data)) {
            let mut copy = item.clone();
            if let Some(fields) = copy.as_object_mut() {
                fields.insert("arguments".into(), Value::String(text));
            }
            kept_text = Some(copy);
        }
        let item = kept_text.as_ref().unwrap_or(item);
        let index = event
            .get("output_index")
            .and_then(Value::as_u64)
            .unwrap_or(self.done_items.len() as u64);
        self.done_items.push((index, item.clone()));
        let id = item.get("id").and_then(Value::as_str);
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                let (full, _) = message_text(item);
                let streamed = self.item_at(id, Some(index), ItemKind::Message);
                if let Some(rest) = remainder(&full, &mut streamed.text) {
                    self.assembler.text(&rest);
                    out.push_back(StreamChunk::Text(rest));
                }
            }
            Some("reasoning") => {
                let full = reasoning_text(item);
                let streamed = self.item_at(id, Some(index), ItemKind::Reasoning);
                if let Some(rest) = remainder(&full, &mut streamed.text) {
                    self.assembler.reasoning(&rest);
                    out.push_back(StreamChunk::Reasoning(rest));
                }
            }
            Some("function_call") => {
                let known = self.find(id, Some(index)).is_some();
                let full = codec::arguments_text(
                    item.get("arguments"),
                    &OversizedLiterals::in_source(data),
                );
                let kind = ItemKind::FunctionCall;
                let streamed = if known {
                    self.item_at(id, Some(index), kind)
                } else {
                    self.push_item(id, Some(index), kind, call_id(item, index))
                };
                let call = streamed.call_id.clone();
                let rest = remainder(&full, &mut streamed.text);
                // A call the stream never announced is streamed whole, with its name.
                let name = item.get("name").and_then(Value::as_str).filter(|_| !known);
                if name.is_some() || rest.is_some() {
                    let delta = rest.unwrap_or_default();
                    self.assembler.tool_call(&call, name, &delta);
                    out.push_back(codec::tool_call_chunk(call, name, delta));
                }
            }
            _ => {}
        }
    }
}

/// The part of `full` not streamed yet, when what was streamed is its beginning; `streamed`
/// becomes `full`.
fn remainder(full: &str, streamed: &mut String) -> Option<String> {
    let rest = full.strip_prefix(streamed.as_str())?;
    if rest.is_empty() {
        return None;
    }
    let rest = rest.to_owned();
    streamed.push_str(&rest);
    Some(rest)
}
