//! A streamed Messages answer: typed events (`message_start`, `content_block_start`,
//! `content_block_delta`, `message_delta`, …) ended by `message_stop`.

use super::response::{describe_error, parse, tool_use};
use crate::completion::{CompletionError, CompletionResponse, StreamChunk, parse_arguments};
use crate::providers::codec::{self, Chunks, Step};
use crate::providers::transport::{StreamDecoder, excerpt, excerpt_json, sealed::Sealed};
use serde_json::{Map, Value, json};
use std::fmt::Write as _;

/// How many content blocks a cut stream's error describes: a server may start any number,
/// and the error stays short.
const LISTED_BLOCKS: usize = 8;

/// One content block of a streamed message, as far as it has arrived.
#[derive(Debug)]
struct BlockBuilder {
    index: u64,
    /// The block as `content_block_start` gave it.
    start: Value,
    text: String,
    thinking: String,
    signature: String,
    /// The tool input's JSON text, from `input_json_delta`s.
    input_json: Option<String>,
    /// The provider's id of a `tool_use` block.
    tool_id: Option<String>,
    /// The start's input as its event spelled it, when reading it rounded an integer beyond
    /// 64 bits (`json_integers::exact_text`): what streams of it.
    start_input_text: Option<String>,
}

impl BlockBuilder {
    fn kind(&self) -> &str {
        self.start
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
    }

    /// The block in the shape a blocking response would carry.
    fn build(self) -> Value {
        let mut block = match self.start {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                block.insert("text".into(), json!(self.text));
            }
            Some("thinking") => {
                block.insert("thinking".into(), json!(self.thinking));
                block.insert("signature".into(), json!(self.signature));
            }
            _ => {}
        }
        if let Some(input) = self.input_json {
            block.insert("input".into(), parse_arguments(&input));
        }
        Value::Object(block)
    }

    /// Streams the input a `tool_use` block's start carried, when no `input_json_delta`
    /// streamed one: the call runs with that input, so whoever acts on the streamed
    /// arguments must see it. Anthropic starts a block with `"input": {}` and streams the
    /// input in deltas, whose text then replaces the start's; an empty object streams
    /// nothing, as the empty text it reads the same as. Once streamed, the text is the
    /// block's input text, so a delta arriving later still yields what streamed.
    fn stream_start_input(&mut self, out: &mut Chunks) {
        let (Some(id), None) = (&self.tool_id, &self.input_json) else {
            return;
        };
        let text = match self.start.get("input") {
            None | Some(Value::Null) => return,
            Some(Value::Object(input)) if input.is_empty() => return,
            Some(input) => self
                .start_input_text
                .take()
                .unwrap_or_else(|| input.to_string()),
        };
        out.push_back(codec::tool_call_chunk(id.as_str(), None, text.as_str()));
        self.input_json = Some(text);
    }
}

/// Decodes the typed events of a streamed Messages response into chunks, and assembles the
/// message a blocking call would have returned.
#[derive(Debug, Default)]
pub struct MessagesStreamDecoder {
    /// The message from `message_start`, updated by `message_delta`s.
    message: Map<String, Value>,
    /// A `message_start` arrived.
    started: bool,
    blocks: Vec<BlockBuilder>,
    /// How many events were read, and the type of the last one (for error messages).
    events: usize,
    last_event: String,
    /// Bytes kept that no chunk streams: the message's events, block starts, signatures,
    /// and the input of blocks other than `tool_use`.
    kept: usize,
    /// The ids of the turn's tool calls, kept distinct: two `tool_use` blocks the server
    /// gives one id are two calls.
    ids: codec::CallIds,
}

impl MessagesStreamDecoder {
    /// Reads one event, queueing the chunks it carries. Returns true at `message_stop`. An
    /// error leaves `out` as it was.
    fn read_event(
        &mut self,
        name: Option<&str>,
        data: &str,
        out: &mut Chunks,
    ) -> Result<bool, CompletionError> {
        let event = codec::event_json(data, name)?;
        let kind = codec::event_type(&event, name);
        self.events += 1;
        self.last_event.clone_from(&kind);
        // The message's events and block starts are kept whole (merged into the message, or
        // held as the block's start), so they count whole.
        match kind.as_str() {
            "message_start" => {
                self.started = true;
                self.keep(data.len());
                if let Some(Value::Object(message)) = event.get("message") {
                    self.message = message.clone();
                }
            }
            "content_block_start" => {
                self.keep(data.len());
                self.block_start(&event, data, out)?;
            }
            "content_block_delta" => self.block_delta(&event, out)?,
            "message_delta" => {
                self.keep(data.len());
                self.message_delta(&event);
            }
            "content_block_stop" => {
                // A stop naming no block ends none; `message_stop` ends them all.
                let index = event.get("index").and_then(Value::as_u64);
                let block = self
                    .blocks
                    .iter_mut()
                    .rev()
                    .find(|b| Some(b.index) == index);
                if let Some(block) = block {
                    block.stream_start_input(out);
                }
            }
            "message_stop" => {
                // No message started: nothing of an answer came, and an empty one would pass
                // for the model's (a gateway whose upstream failed may end a stream so).
                if !self.started {
                    return Err(codec::cut_stream(
                        "with `message_stop` before any `message_start`; received ",
                        &*self,
                    ));
                }
                // Anthropic says why the answer ended in `message_delta`: without it, the
                // stream was cut (the other protocols' streams are held to the same).
                if self.message.get("stop_reason").is_none_or(Value::is_null) {
                    return Err(codec::cut_stream(
                        "with `message_stop` before any `stop_reason` (the server never said \
                         why the answer ended); received ",
                        &*self,
                    ));
                }
                // A server may leave blocks unstopped: the answer ends them all.
                for block in &mut self.blocks {
                    block.stream_start_input(out);
                }
                return Ok(true);
            }
            "error" => {
                return Err(CompletionError::Other(format!(
                    "Anthropic sent an `error` event mid-stream: {}",
                    describe_error(&event)
                )));
            }
            // `ping`, and event types added to the API later.
            _ => {}
        }
        Ok(false)
    }

    /// Counts `bytes` kept that no chunk streams.
    fn keep(&mut self, bytes: usize) {
        self.kept = self.kept.saturating_add(bytes);
    }

    fn index(event: &Value) -> Result<u64, CompletionError> {
        event.get("index").and_then(Value::as_u64).ok_or_else(|| {
            CompletionError::Decode(format!(
                "a stream event has no block index: {}",
                excerpt_json(event)
            ))
        })
    }

    /// Starts a block; `data` is the event's text.
    fn block_start(
        &mut self,
        event: &Value,
        data: &str,
        out: &mut Chunks,
    ) -> Result<(), CompletionError> {
        let index = Self::index(event)?;
        let mut start = event.get("content_block").cloned().unwrap_or(Value::Null);
        let text_field = |key: &str| {
            start
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let mut block = BlockBuilder {
            index,
            text: text_field("text"),
            thinking: text_field("thinking"),
            signature: text_field("signature"),
            input_json: None,
            tool_id: None,
            start_input_text: None,
            start: Value::Null,
        };
        let renamed = match start.get("type").and_then(Value::as_str) {
            Some("text") if !block.text.is_empty() => {
                out.push_back(StreamChunk::Text(block.text.clone()));
                false
            }
            Some("thinking") if !block.thinking.is_empty() => {
                out.push_back(StreamChunk::Reasoning(block.thinking.clone()));
                false
            }
            Some("tool_use") => {
                let missing = "a tool_use block starts without an id or name";
                let (id, name) = tool_use(&start, missing, event)?;
                let mut id = id.to_owned();
                let renamed = self.ids.claim(&mut id).is_some();
                out.push_back(codec::tool_call_chunk(id.as_str(), Some(name), ""));
                block.tool_id = Some(id);
                block.start_input_text = start
                    .get("input")
                    .and_then(|input| crate::json_integers::exact_text(input, data));
                renamed
            }
            _ => false,
        };
        // A call given an id another call of the turn has is assembled under its new one.
        if let (true, Some(id), Some(slot)) = (renamed, &block.tool_id, start.get_mut("id")) {
            *slot = Value::String(id.clone());
        }
        block.start = start;
        self.blocks.push(block);
        Ok(())
    }

    fn block_delta(&mut self, event: &Value, out: &mut Chunks) -> Result<(), CompletionError> {
        let index = Self::index(event)?;
        let Some(block) = self.blocks.iter_mut().rev().find(|b| b.index == index) else {
            return Err(CompletionError::Decode(format!(
                "a content_block_delta for block {index}, which never started: {}",
                excerpt_json(event)
            )));
        };
        let delta = event.get("delta").unwrap_or(&Value::Null);
        let field = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
        let kind = delta.get("type").and_then(Value::as_str);
        // Text streamed into a block that keeps none would be shown and then lost.
        let fits = match kind {
            Some("text_delta") => block.kind() == "text",
            Some("thinking_delta" | "signature_delta") => block.kind() == "thinking",
            _ => true,
        };
        if !fits {
            return Err(CompletionError::Decode(format!(
                "a `{}` for block {index}, a `{}` block: {}",
                kind.unwrap_or_default(),
                excerpt(block.kind()),
                excerpt_json(event)
            )));
        }
        match kind {
            Some("text_delta") => {
                let text = field("text");
                if !text.is_empty() {
                    block.text.push_str(text);
                    out.push_back(StreamChunk::Text(text.to_owned()));
                }
            }
            Some("thinking_delta") => {
                let text = field("thinking");
                if !text.is_empty() {
                    block.thinking.push_str(text);
                    out.push_back(StreamChunk::Reasoning(text.to_owned()));
                }
            }
            Some("signature_delta") => {
                let signature = field("signature");
                self.kept = self.kept.saturating_add(signature.len());
                block.signature.push_str(signature);
            }
            Some("input_json_delta") => {
                let fragment = field("partial_json");
                block
                    .input_json
                    .get_or_insert_with(String::new)
                    .push_str(fragment);
                match &block.tool_id {
                    Some(id) if !fragment.is_empty() => {
                        out.push_back(codec::tool_call_chunk(id.as_str(), None, fragment));
                    }
                    Some(_) => {}
                    // The input of a block reins does not stream (a server tool's) is kept.
                    None => self.kept = self.kept.saturating_add(fragment.len()),
                }
            }
            // `citations_delta` and delta types added later change no content reins reads.
            _ => {}
        }
        Ok(())
    }

    fn message_delta(&mut self, event: &Value) {
        if let Some(Value::Object(delta)) = event.get("delta") {
            for (key, value) in delta {
                if !value.is_null() {
                    self.message.insert(key.clone(), value.clone());
                }
            }
        }
        // Usage in `message_delta` is cumulative: its counts replace those of `message_start`.
        if let Some(Value::Object(update)) = event.get("usage") {
            let usage = self
                .message
                .entry("usage")
                .or_insert_with(|| Value::Object(Map::new()));
            if !usage.is_object() {
                *usage = Value::Object(Map::new());
            }
            if let Value::Object(usage) = usage {
                for (key, value) in update {
                    if !value.is_null() {
                        usage.insert(key.clone(), value.clone());
                    }
                }
            }
        }
    }

    /// The assembled message, read as a blocking response would be.
    fn finish(mut self) -> Result<CompletionResponse, CompletionError> {
        // In the order the blocks started, as they streamed (an honest server starts them in
        // index order): sorted by index, a server starting them out of order would make the
        // streamed calls (numbered as they arrive) name other calls than those the run makes.
        let content: Vec<Value> = self.blocks.into_iter().map(BlockBuilder::build).collect();
        self.message.insert("content".into(), Value::Array(content));
        parse(Value::Object(self.message))
    }
}

impl Sealed for MessagesStreamDecoder {}

impl StreamDecoder for MessagesStreamDecoder {
    fn event(&mut self, name: Option<&str>, data: &str, out: &mut Chunks) -> Step {
        if self.read_event(name, data, out)? {
            std::mem::take(self).finish().map(Some)
        } else {
            Ok(None)
        }
    }

    fn closed(self) -> Result<CompletionResponse, CompletionError> {
        Err(codec::cut_stream("before `message_stop`; received ", &self))
    }

    /// What was received, for the error of a cut stream.
    fn received(&self) -> String {
        let mut text = format!("{} event(s)", self.events);
        if !self.last_event.is_empty() {
            let _ = write!(text, ", the last a `{}`", excerpt(&self.last_event));
        }
        if self.blocks.is_empty() {
            text.push_str(", and no content block");
        } else {
            let kinds: Vec<String> = self
                .blocks
                .iter()
                .take(LISTED_BLOCKS)
                .map(|block| match block.kind() {
                    "text" => format!("text ({} bytes)", block.text.len()),
                    "thinking" => format!("thinking ({} bytes)", block.thinking.len()),
                    "tool_use" => format!(
                        "tool_use `{}`",
                        excerpt(
                            block
                                .start
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                        )
                    ),
                    other => excerpt(other),
                })
                .collect();
            let _ = write!(text, "; content blocks: {}", kinds.join(", "));
            let unlisted = self.blocks.len().saturating_sub(LISTED_BLOCKS);
            if unlisted > 0 {
                let _ = write!(text, " and {unlisted} more");
            }
        }
        text
    }

    fn kept(&self) -> usize {
        self.kept
    }

    fn parts(&self) -> usize {
        self.blocks.len()
    }
}
