//! The OpenAI Responses API (`POST /responses`).
//!
//! # How a request is written
//!
//! - The preamble, every system message of the history and the context documents become the
//!   `instructions` text, in that order, separated by blank lines.
//! - User messages become `{role: "user", content}` input items. An assistant message becomes,
//!   part by part and in order, `{role: "assistant", content}` items for its text,
//!   `{type: "function_call", call_id, name, arguments}` items for its tool calls (arguments as
//!   a JSON string) and, see below, reasoning items. Tool results become
//!   `{type: "function_call_output", call_id, output}` items.
//! - Tools are sent flat (`{type: "function", name, description, parameters, strict: false}`).
//!   `strict` is sent as `false` because the Responses API otherwise rewrites every schema
//!   into strict mode, which makes optional arguments mandatory.
//! - `max_tokens` is sent as `max_output_tokens`; an output schema as
//!   `text.format = {type: "json_schema", name: "output", schema}`;
//!   [`additional_params`](crate::completion::CompletionRequest::additional_params) are merged
//!   over the top-level keys last, so they can set anything (e.g. `reasoning`).
//!
//! # Reasoning
//!
//! The Responses API returns reasoning as items that should be sent back on the next turn,
//! which only works when the server can decode them: either by their id from its own storage,
//! or from their `encrypted_content`. reins' [`Reasoning`] holds only a text and an opaque
//! signature, so:
//!
//! - a reasoning item's summary texts (or, when it has no summary, its reasoning texts) become
//!   [`Reasoning::text`], joined with blank lines; its `encrypted_content`, when the response
//!   carries one, becomes [`Reasoning::signature`];
//! - by default reasoning is never sent back (as with Chat Completions): the model simply does
//!   not see its earlier reasoning;
//! - with [`ResponsesModel::with_encrypted_reasoning`], requests ask for
//!   `include: ["reasoning.encrypted_content"]` with `store: false` (nothing is kept on
//!   OpenAI's side), and every reasoning part of the history that has a signature is sent back
//!   as `{type: "reasoning", summary, encrypted_content: signature}`. Only turn this on for
//!   histories whose reasoning signatures came from this API.
//!
//! # Finish reasons
//!
//! `incomplete` with reason `max_output_tokens` is [`FinishReason::Length`], with
//! `content_filter` [`FinishReason::ContentFilter`]; a completed turn with function calls is
//! [`FinishReason::ToolCalls`]; a completed turn whose message is a refusal keeps the refusal
//! as its text and finishes with [`FinishReason::ContentFilter`]; other completed turns are
//! [`FinishReason::Stop`]. A `failed` response is a [`CompletionError`].

use super::Shared;
use crate::agent::hook::shallow_merge;
use crate::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, CompletionStream,
    FinishReason, RawResponse, StreamAssembler, StreamChunk, Usage, parse_arguments,
};
use crate::message::{AssistantContent, Message, OneOrMany, Reasoning, ToolChoice};
use crate::providers::http;
use crate::providers::render_documents;
use serde_json::{Map, Value, json};
use std::collections::VecDeque;
use std::sync::Arc;

/// A model served through the OpenAI Responses API. Build it with
/// [`OpenAI::responses`](super::OpenAI::responses).
#[derive(Clone, Debug)]
pub struct ResponsesModel {
    shared: Arc<Shared>,
    model: String,
    native_output: bool,
    encrypted_reasoning: bool,
}

impl ResponsesModel {
    pub(crate) fn new(shared: Arc<Shared>, model: String) -> Self {
        ResponsesModel {
            shared,
            model,
            native_output: true,
            encrypted_reasoning: false,
        }
    }

    /// Declares whether the server supports `text.format: json_schema` (true by default;
    /// structured output falls back to an output tool when false).
    pub fn with_native_output(mut self, supported: bool) -> Self {
        self.native_output = supported;
        self
    }

    /// Asks for reasoning as encrypted content (`include: ["reasoning.encrypted_content"]`,
    /// `store: false`) and sends the reasoning parts of the history back with it, so a
    /// reasoning model keeps its reasoning across the turns of a run (off by default; see the
    /// [module documentation](self)).
    pub fn with_encrypted_reasoning(mut self, enabled: bool) -> Self {
        self.encrypted_reasoning = enabled;
        self
    }

    /// The model name sent with each request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The JSON body sent for `request` (`stream` selects the streamed form).
    pub fn request_body(&self, request: &CompletionRequest, stream: bool) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        if let Some(instructions) = instructions(request) {
            body.insert("instructions".into(), json!(instructions));
        }
        body.insert("input".into(), Value::Array(self.input(request)));
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                        "strict": false,
                    })
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        if let Some(choice) = &request.tool_choice {
            body.insert(
                "tool_choice".into(),
                match choice {
                    ToolChoice::Auto => json!("auto"),
                    ToolChoice::None => json!("none"),
                    ToolChoice::Required => json!("required"),
                    ToolChoice::Specific(name) => json!({"type": "function", "name": name}),
                },
            );
        }
        if let Some(temperature) = request.temperature {
            body.insert("temperature".into(), json!(temperature));
        }
        if let Some(max_tokens) = request.max_tokens {
            body.insert("max_output_tokens".into(), json!(max_tokens));
        }
        if let Some(schema) = &request.output_schema {
            body.insert(
                "text".into(),
                json!({
                    "format": {"type": "json_schema", "name": "output", "schema": schema},
                }),
            );
        }
        if self.encrypted_reasoning {
            body.insert("include".into(), json!(["reasoning.encrypted_content"]));
            body.insert("store".into(), json!(false));
        }
        if stream {
            body.insert("stream".into(), json!(true));
        }
        let body = Value::Object(body);
        match &request.additional_params {
            Some(params) => shallow_merge(body, params.clone()),
            None => body,
        }
    }

    fn input(&self, request: &CompletionRequest) -> Vec<Value> {
        let mut items = Vec::with_capacity(request.history.len());
        for message in &request.history {
            match message {
                // Sent as `instructions`.
                Message::System { .. } => {}
                Message::User { content } => {
                    items.push(json!({"role": "user", "content": content}));
                }
                Message::Assistant { content } => self.assistant_items(content, &mut items),
                Message::Tool(result) => items.push(json!({
                    "type": "function_call_output",
                    "call_id": result.tool_call_id,
                    "output": result.content,
                })),
            }
        }
        items
    }

    fn assistant_items(&self, content: &OneOrMany<AssistantContent>, items: &mut Vec<Value>) {
        let start = items.len();
        let mut text = String::new();
        let mut reasoning_only = true;
        let flush = |text: &mut String, items: &mut Vec<Value>| {
            if !text.is_empty() {
                items.push(json!({"role": "assistant", "content": std::mem::take(text)}));
            }
        };
        for part in content.iter() {
            match part {
                AssistantContent::Text(part) => {
                    if !part.text.is_empty() {
                        reasoning_only = false;
                    }
                    text.push_str(&part.text);
                }
                AssistantContent::ToolCall(call) => {
                    flush(&mut text, items);
                    reasoning_only = false;
                    items.push(json!({
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": call.arguments_text(),
                    }));
                }
                AssistantContent::Reasoning(reasoning) => {
                    flush(&mut text, items);
                    if let Some(item) = self.reasoning_item(reasoning) {
                        items.push(item);
                    }
                }
            }
        }
        flush(&mut text, items);
        // A reasoning item must be followed by the output it led to; alone it is rejected.
        if reasoning_only {
            items.truncate(start);
        }
    }

    fn reasoning_item(&self, reasoning: &Reasoning) -> Option<Value> {
        if !self.encrypted_reasoning {
            return None;
        }
        let encrypted = reasoning.signature.as_deref()?;
        let summary = if reasoning.text.is_empty() {
            json!([])
        } else {
            json!([{"type": "summary_text", "text": reasoning.text}])
        };
        Some(json!({
            "type": "reasoning",
            "summary": summary,
            "encrypted_content": encrypted,
        }))
    }

    async fn post(&self, body: &Value) -> Result<reqwest::Response, CompletionError> {
        let settings = &self.shared.settings;
        let url = settings.url("responses");
        http::send(settings, || {
            let builder = self.shared.client.post(&url).json(body);
            match &settings.api_key {
                Some(key) => builder.bearer_auth(key.expose()),
                None => builder,
            }
        })
        .await
    }
}

/// The preamble, the system messages and the context documents, as one text.
fn instructions(request: &CompletionRequest) -> Option<String> {
    let mut sections: Vec<String> = Vec::new();
    if let Some(preamble) = request.preamble.as_ref().filter(|p| !p.is_empty()) {
        sections.push(preamble.clone());
    }
    for message in &request.history {
        if let Message::System { content } = message {
            if !content.is_empty() {
                sections.push(content.clone());
            }
        }
    }
    if !request.documents.is_empty() {
        sections.push(render_documents(request));
    }
    (!sections.is_empty()).then(|| sections.join("\n\n"))
}

/// At most `max` bytes of `text`, cut at a character boundary.
fn excerpt(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn usage(value: &Value) -> Usage {
    let read = |key: &str| value.get(key).and_then(Value::as_u64).unwrap_or(0);
    let (input, output) = (read("input_tokens"), read("output_tokens"));
    Usage {
        input_tokens: input,
        output_tokens: output,
        total_tokens: value
            .get("total_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(input + output),
    }
}

/// The error a failed response reports, naming its code and message.
fn failure(error: Option<&Value>, context: &str) -> CompletionError {
    let error = error.filter(|e| !e.is_null());
    let code = error.and_then(|e| {
        e.get("code").and_then(Value::as_str).or_else(|| {
            e.get("type")
                .and_then(Value::as_str)
                .filter(|kind| *kind != "error")
        })
    });
    let message = error.and_then(|e| e.get("message")).and_then(Value::as_str);
    let detail = match (code, message, error) {
        (Some(code), Some(message), _) => format!("{code}: {message}"),
        (Some(code), None, _) => code.to_owned(),
        (None, Some(message), _) => message.to_owned(),
        (None, None, Some(error)) => error.to_string(),
        (None, None, None) => "no error details".to_owned(),
    };
    CompletionError::Other(format!("{context}: {detail}"))
}

/// The error of a response whose status is `failed` or that carries an error object.
fn response_failure(raw: &Value) -> Option<CompletionError> {
    let failed = raw.get("status").and_then(Value::as_str) == Some("failed");
    let error = raw.get("error").filter(|e| !e.is_null());
    (failed || error.is_some()).then(|| failure(error, "the response failed"))
}

/// What the output items of a response say.
struct Output {
    parts: Vec<AssistantContent>,
    has_calls: bool,
    refused: bool,
}

/// Reads output items into content parts, in order. Items reins has no part for (built-in
/// tool calls such as web search) are left out; they stay in the raw response.
fn read_output(items: &[Value]) -> Result<Output, CompletionError> {
    let mut output = Output {
        parts: Vec::new(),
        has_calls: false,
        refused: false,
    };
    for (index, item) in items.iter().enumerate() {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                let (text, refused) = message_text(item);
                output.refused |= refused;
                if !text.is_empty() {
                    output.parts.push(AssistantContent::text(text));
                }
            }
            Some("function_call") => {
                let name = item.get("name").and_then(Value::as_str).ok_or_else(|| {
                    CompletionError::Decode(format!("a function call has no name: {item}"))
                })?;
                let id = call_id(item, index as u64);
                let arguments = match item.get("arguments") {
                    Some(Value::String(text)) => parse_arguments(text),
                    Some(Value::Object(map)) => Value::Object(map.clone()),
                    _ => json!({}),
                };
                output.has_calls = true;
                output
                    .parts
                    .push(AssistantContent::tool_call(id, name, arguments));
            }
            Some("reasoning") => {
                let text = reasoning_text(item);
                let signature = item
                    .get("encrypted_content")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                if !text.is_empty() || signature.is_some() {
                    output
                        .parts
                        .push(AssistantContent::Reasoning(Reasoning { text, signature }));
                }
            }
            _ => {}
        }
    }
    Ok(output)
}

/// The text of a message item: its `output_text` parts and refusals, joined.
fn message_text(item: &Value) -> (String, bool) {
    let mut text = String::new();
    let mut refused = false;
    let parts = item.get("content").and_then(Value::as_array);
    for part in parts.into_iter().flatten() {
        match part.get("type").and_then(Value::as_str) {
            Some("output_text") => {
                text.push_str(part.get("text").and_then(Value::as_str).unwrap_or_default());
            }
            Some("refusal") => {
                refused = true;
                text.push_str(
                    part.get("refusal")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                );
            }
            _ => {}
        }
    }
    (text, refused)
}

/// The text of a reasoning item: its summaries, or its reasoning texts when it has no
/// summary, joined with blank lines.
fn reasoning_text(item: &Value) -> String {
    let texts = |key: &str| -> Vec<&str> {
        item.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect()
    };
    let summary = texts("summary");
    if summary.is_empty() {
        texts("content").join("\n\n")
    } else {
        summary.join("\n\n")
    }
}

/// The id a function-call item is answered by: `call_id`, else the item's id.
fn call_id(item: &Value, index: u64) -> String {
    item.get("call_id")
        .or_else(|| item.get("id"))
        .and_then(Value::as_str)
        .map_or_else(|| format!("call_{index}"), str::to_owned)
}

fn finish_reason(raw: &Value, has_calls: bool, refused: bool) -> FinishReason {
    match raw.get("status").and_then(Value::as_str) {
        Some("incomplete") => {
            let reason = raw
                .get("incomplete_details")
                .and_then(|d| d.get("reason"))
                .and_then(Value::as_str);
            match reason {
                Some("max_output_tokens") => FinishReason::Length,
                Some("content_filter") => FinishReason::ContentFilter,
                Some(other) => FinishReason::Other(other.to_owned()),
                None => FinishReason::Other("incomplete".to_owned()),
            }
        }
        Some("completed") | None if has_calls => FinishReason::ToolCalls,
        Some("completed") | None if refused => FinishReason::ContentFilter,
        Some("completed") | None => FinishReason::Stop,
        Some(other) => FinishReason::Other(other.to_owned()),
    }
}

/// Builds the response from `raw` (the response object) and its output items.
fn build_response(raw: Value, output: Output) -> CompletionResponse {
    let finish = finish_reason(&raw, output.has_calls, output.refused);
    let content =
        OneOrMany::many(output.parts).unwrap_or_else(|| OneOrMany::one(AssistantContent::text("")));
    CompletionResponse {
        content,
        usage: raw.get("usage").map(usage).unwrap_or_default(),
        finish_reason: Some(finish),
        response_id: raw.get("id").and_then(Value::as_str).map(str::to_owned),
        raw: RawResponse::new(raw),
    }
}

/// Reads a whole Responses API response object.
fn parse_response(raw: Value) -> Result<CompletionResponse, CompletionError> {
    if let Some(error) = response_failure(&raw) {
        return Err(error);
    }
    let items = raw.get("output").and_then(Value::as_array).ok_or_else(|| {
        CompletionError::Decode(format!(
            "the response has no output: {}",
            excerpt(&raw.to_string(), 2_000)
        ))
    })?;
    let output = read_output(items)?;
    Ok(build_response(raw, output))
}

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
struct ResponsesStreamDecoder {
    assembler: StreamAssembler,
    items: Vec<StreamedItem>,
    /// Finished output items by `output_index`, for a final event that lists no output.
    done_items: Vec<(u64, Value)>,
    response_id: Option<String>,
    events: usize,
    last_type: String,
}

impl ResponsesStreamDecoder {
    fn new() -> Self {
        ResponsesStreamDecoder {
            assembler: StreamAssembler::new(),
            items: Vec::new(),
            done_items: Vec::new(),
            response_id: None,
            events: 0,
            last_type: String::from("none"),
        }
    }

    /// Reads one event, queueing the chunks it carries; returns the whole response when the
    /// event ends the turn.
    fn event(
        &mut self,
        name: Option<&str>,
        data: &str,
        out: &mut VecDeque<StreamChunk>,
    ) -> Result<Option<CompletionResponse>, CompletionError> {
        if data.trim() == "[DONE]" {
            return Ok(None);
        }
        let event: Value = serde_json::from_str(data).map_err(|error| {
            CompletionError::Decode(format!(
                "a stream event is not JSON ({error}): {}",
                excerpt(data, 2_000)
            ))
        })?;
        let kind = event
            .get("type")
            .and_then(Value::as_str)
            .or(name)
            .unwrap_or_default()
            .to_owned();
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
                let delta = delta(&event);
                if !delta.is_empty() {
                    let item = self.item(&event, ItemKind::Message);
                    item.text.push_str(delta);
                    self.assembler.text(delta);
                    out.push_back(StreamChunk::Text(delta.to_owned()));
                }
            }
            "response.function_call_arguments.delta" => {
                let delta = delta(&event);
                if !delta.is_empty() {
                    let item = self.item(&event, ItemKind::FunctionCall);
                    item.text.push_str(delta);
                    let id = item.call_id.clone();
                    self.assembler.tool_call(&id, None, delta);
                    out.push_back(StreamChunk::ToolCall {
                        id,
                        name: None,
                        delta: delta.to_owned(),
                    });
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let delta = delta(&event);
                if !delta.is_empty() {
                    let part = event
                        .get("summary_index")
                        .or_else(|| event.get("content_index"))
                        .and_then(Value::as_u64);
                    let item = self.item(&event, ItemKind::Reasoning);
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
            "response.output_item.done" => self.item_done(&event, out),
            "response.completed" | "response.incomplete" => {
                let Some(response) = event.get("response").filter(|r| r.is_object()) else {
                    return Err(CompletionError::Decode(format!(
                        "a {kind} event carries no response: {}",
                        excerpt(data, 2_000)
                    )));
                };
                return self.finish(response.clone()).map(Some);
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

    /// The streamed item an event refers to (by `item_id`, else `output_index`), created when
    /// the stream did not announce it.
    fn item(&mut self, event: &Value, kind: ItemKind) -> &mut StreamedItem {
        let id = event.get("item_id").and_then(Value::as_str);
        let index = event.get("output_index").and_then(Value::as_u64);
        self.item_at(id, index, kind)
    }

    /// The position of the streamed item with id `id` (else at `index`).
    fn find(&self, id: Option<&str>, index: Option<u64>) -> Option<usize> {
        self.items.iter().position(|item| match (id, &item.id) {
            (Some(id), Some(item_id)) => id == item_id,
            _ => index.is_some() && item.index == index,
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
                let call_id = id.map_or_else(
                    || format!("call_{}", index.unwrap_or(self.items.len() as u64)),
                    str::to_owned,
                );
                self.items.push(StreamedItem {
                    id: id.map(str::to_owned),
                    index,
                    kind,
                    call_id,
                    text: String::new(),
                    part: None,
                });
                self.items.len() - 1
            }
        };
        &mut self.items[position]
    }

    fn item_added(&mut self, event: &Value, out: &mut VecDeque<StreamChunk>) {
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
        self.items.push(StreamedItem {
            id: item.get("id").and_then(Value::as_str).map(str::to_owned),
            index,
            kind,
            call_id: call_id.clone(),
            text: String::new(),
            part: None,
        });
        if kind == ItemKind::FunctionCall {
            let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
            self.assembler.tool_call(&call_id, Some(name), "");
            out.push_back(StreamChunk::ToolCall {
                id: call_id,
                name: Some(name.to_owned()),
                delta: String::new(),
            });
        }
    }

    /// Records a finished item, and streams whatever of it no delta carried (some servers send
    /// whole items and no deltas).
    fn item_done(&mut self, event: &Value, out: &mut VecDeque<StreamChunk>) {
        let Some(item) = event.get("item") else {
            return;
        };
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
                let full = item
                    .get("arguments")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let streamed = self.item_at(id, Some(index), ItemKind::FunctionCall);
                if !known {
                    streamed.call_id = call_id(item, index);
                }
                let call = streamed.call_id.clone();
                let rest = remainder(full, &mut streamed.text);
                // A call the stream never announced is streamed whole, with its name.
                let name = item.get("name").and_then(Value::as_str).filter(|_| !known);
                if name.is_some() || rest.is_some() {
                    let delta = rest.unwrap_or_default();
                    self.assembler.tool_call(&call, name, &delta);
                    out.push_back(StreamChunk::ToolCall {
                        id: call,
                        name: name.map(str::to_owned),
                        delta,
                    });
                }
            }
            _ => {}
        }
    }

    /// The whole response at the end of the stream: read from the final response object, as a
    /// blocking call would, so both return the same; from the finished items or the fragments
    /// when the final object lists no output.
    fn finish(&mut self, response: Value) -> Result<CompletionResponse, CompletionError> {
        if let Some(error) = response_failure(&response) {
            return Err(error);
        }
        let listed = response
            .get("output")
            .and_then(Value::as_array)
            .is_some_and(|items| !items.is_empty());
        if listed {
            return parse_response(response);
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
        let usage = response.get("usage").map(usage).unwrap_or_default();
        let id = response
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let assembler = std::mem::take(&mut self.assembler);
        Ok(assembler.finish(usage, Some(finish), id, RawResponse::new(response)))
    }

    /// What the stream delivered, for the error of a stream cut short.
    fn summary(&self) -> String {
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
            self.last_type,
            text,
            count(ItemKind::FunctionCall),
            count(ItemKind::Reasoning),
        )
    }
}

/// The `delta` text of an event.
fn delta(event: &Value) -> &str {
    event
        .get("delta")
        .and_then(Value::as_str)
        .unwrap_or_default()
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

impl CompletionModel for ResponsesModel {
    async fn completion(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        let body = self.request_body(request, false);
        let response = self.post(&body).await?;
        let raw = http::read_json(response, self.shared.settings.timeouts.idle).await?;
        parse_response(raw)
    }

    async fn stream(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionStream, CompletionError> {
        let body = self.request_body(request, true);
        let response = self.post(&body).await?;
        let events = http::sse_events(response, self.shared.settings.timeouts.idle);
        Ok(http::chunk_stream(events, ResponsesStreamDecoder::new()))
    }

    fn supports_native_output(&self) -> bool {
        self.native_output
    }
}

impl http::TurnDecoder for ResponsesStreamDecoder {
    fn event(
        &mut self,
        event: &crate::providers::sse::SseEvent,
        out: &mut VecDeque<StreamChunk>,
    ) -> Result<Option<CompletionResponse>, CompletionError> {
        ResponsesStreamDecoder::event(self, event.event.as_deref(), &event.data, out)
    }

    fn closed(self) -> Result<CompletionResponse, CompletionError> {
        // The connection closed before the final event: a cut stream.
        Err(CompletionError::Decode(format!(
            "the stream ended before response.completed after {}",
            self.summary()
        )))
    }
}
