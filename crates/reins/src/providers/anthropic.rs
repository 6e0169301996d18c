//! Anthropic's Messages API (`POST {base}/v1/messages`).
//!
//! ```no_run
//! use reins::providers::anthropic::{self, Anthropic};
//!
//! # fn main() -> Result<(), reins::providers::ProviderError> {
//! let model = Anthropic::from_env()?.completion(anthropic::CLAUDE_SONNET_4_5);
//! # let _ = model;
//! # Ok(())
//! # }
//! ```
//!
//! How a [`CompletionRequest`] is sent:
//!
//! - `system` is the preamble, then the text of every [`Message::System`] of the history, then
//!   the context documents, joined by blank lines.
//! - The API requires user and assistant turns to alternate, so consecutive user messages and
//!   tool results are merged into one user message (its `tool_result` blocks first, as the API
//!   requires), and consecutive assistant messages into one assistant message. Text that is
//!   empty or only whitespace is left out: the API rejects such text blocks.
//! - `max_tokens` is required by the API: a request without one is sent
//!   [`DEFAULT_MAX_TOKENS`] (see [`AnthropicModel::with_default_max_tokens`]).
//! - `tool_choice` maps `Auto` to `auto`, `Required` to `any`, `Specific` to `tool` and `None`
//!   to `none`; it is sent only when the request advertises tools.
//! - [`CompletionRequest::additional_params`] (e.g. `thinking`, `top_k`, `stop_sequences`,
//!   `metadata`) are shallow-merged into the body last, so they win.
//! - Native structured output is not used ([`CompletionModel::supports_native_output`] is
//!   false): agents ask for structured answers through an output tool.
//!
//! Reasoning: a `thinking` block becomes [`AssistantContent::Reasoning`] with its signature, and
//! is sent back unchanged as a `thinking` block, as the API requires within a tool loop.
//! Reasoning without a signature (e.g. from another provider) cannot be verified by Anthropic
//! and is not sent. A `redacted_thinking` block is kept as reasoning with empty text whose
//! signature is [`REDACTED_THINKING_PREFIX`] followed by the block's encrypted `data`; it is
//! sent back as the `redacted_thinking` block it was.
//!
//! Usage: `input_tokens` counts every token read, cache reads and cache writes included
//! (Anthropic reports those separately); the provider's own numbers stay in the raw response.

use crate::agent::hook::shallow_merge;
use crate::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, CompletionStream,
    FinishReason, RawResponse, StreamChunk, Usage, parse_arguments,
};
use crate::message::{AssistantContent, Message, OneOrMany, Reasoning, ToolChoice};
use crate::providers::http::{
    self, ApiKey, HttpSettings, ProviderError, RetryPolicy, Timeouts, optional_env, required_env,
};
use reqwest::header::HeaderValue;
use serde_json::{Map, Value, json};
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::Arc;

/// `claude-opus-4-6`.
pub const CLAUDE_OPUS_4_6: &str = "claude-opus-4-6";
/// `claude-sonnet-4-6`.
pub const CLAUDE_SONNET_4_6: &str = "claude-sonnet-4-6";
/// `claude-opus-4-5`.
pub const CLAUDE_OPUS_4_5: &str = "claude-opus-4-5";
/// `claude-sonnet-4-5`.
pub const CLAUDE_SONNET_4_5: &str = "claude-sonnet-4-5";
/// `claude-haiku-4-5`.
pub const CLAUDE_HAIKU_4_5: &str = "claude-haiku-4-5";
/// `claude-opus-4-1`.
pub const CLAUDE_OPUS_4_1: &str = "claude-opus-4-1";
/// `claude-opus-4-0`.
pub const CLAUDE_OPUS_4_0: &str = "claude-opus-4-0";
/// `claude-sonnet-4-0`.
pub const CLAUDE_SONNET_4_0: &str = "claude-sonnet-4-0";

/// The default base URL of the Anthropic API (the `/v1/messages` path is added to it).
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The default `anthropic-version` header.
pub const DEFAULT_VERSION: &str = "2023-06-01";
/// The `max_tokens` sent when a request sets none (the API requires one).
pub const DEFAULT_MAX_TOKENS: u64 = 4096;
/// Marks the signature of reasoning that stands for a `redacted_thinking` block: the rest of
/// the signature is the block's encrypted `data`. Thinking signatures never contain `:`, so
/// the two cannot be confused.
pub const REDACTED_THINKING_PREFIX: &str = "redacted_thinking:";

/// A client for the Anthropic API. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Anthropic {
    inner: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    settings: HttpSettings,
    client: reqwest::Client,
    /// The `x-api-key` header value, marked sensitive so it never shows in `Debug` output.
    api_key_header: Option<HeaderValue>,
}

impl Anthropic {
    /// A client configured from `ANTHROPIC_API_KEY` and, when set, `ANTHROPIC_BASE_URL`.
    pub fn from_env() -> Result<Self, ProviderError> {
        let mut builder = Anthropic::builder().api_key(required_env("ANTHROPIC_API_KEY")?);
        if let Some(base_url) = optional_env("ANTHROPIC_BASE_URL") {
            builder = builder.base_url(base_url);
        }
        builder.build()
    }

    /// A builder, for an explicit key, base URL, API version, beta features, headers,
    /// timeouts and retries.
    pub fn builder() -> AnthropicBuilder {
        AnthropicBuilder::default()
    }

    /// A model served through the Messages API, e.g. [`CLAUDE_SONNET_4_5`].
    pub fn completion(&self, model: impl Into<String>) -> AnthropicModel {
        AnthropicModel {
            shared: Arc::clone(&self.inner),
            model: model.into(),
            default_max_tokens: DEFAULT_MAX_TOKENS,
        }
    }
}

/// Builds an [`Anthropic`] client.
#[derive(Debug, Default)]
pub struct AnthropicBuilder {
    api_key: Option<ApiKey>,
    base_url: Option<String>,
    version: Option<String>,
    betas: Vec<String>,
    headers: Vec<(String, String)>,
    timeouts: Option<Timeouts>,
    retry: Option<RetryPolicy>,
}

impl AnthropicBuilder {
    /// The API key, sent as the `x-api-key` header.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(ApiKey::new(key));
        self
    }

    /// The base URL (default [`DEFAULT_BASE_URL`]); requests go to `{base_url}/v1/messages`.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The `anthropic-version` header (default [`DEFAULT_VERSION`]).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// Enables a beta feature: the names given are sent, comma-separated, in the
    /// `anthropic-beta` header.
    pub fn beta(mut self, feature: impl Into<String>) -> Self {
        self.betas.push(feature.into());
        self
    }

    /// A header sent with every request (it replaces a header of the same name set by the
    /// builder, e.g. `anthropic-version`).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Connect, first-byte and idle-stream timeouts.
    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = Some(timeouts);
        self
    }

    /// How failed calls are retried (HTTP 429, 5xx including Anthropic's 529 "overloaded",
    /// and connection failures).
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = Some(retry);
        self
    }

    /// Builds the client. Without a key, requests are sent without `x-api-key` (e.g. to a
    /// gateway that adds it). A key or header that is not valid in HTTP is an error.
    pub fn build(self) -> Result<Anthropic, ProviderError> {
        let api_key_header = match &self.api_key {
            Some(key) => {
                let mut value = HeaderValue::from_str(key.expose())
                    .map_err(|_| ProviderError::InvalidHeader("x-api-key".to_owned()))?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        let base_url = self.base_url.unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let mut settings = HttpSettings::new(base_url, self.api_key);
        let version = self.version.as_deref().unwrap_or(DEFAULT_VERSION);
        settings.add_header("anthropic-version", version)?;
        if !self.betas.is_empty() {
            settings.add_header("anthropic-beta", &self.betas.join(","))?;
        }
        for (name, value) in &self.headers {
            settings.add_header(name, value)?;
        }
        if let Some(timeouts) = self.timeouts {
            settings.timeouts = timeouts;
        }
        if let Some(retry) = self.retry {
            settings.retry = retry;
        }
        let client = settings.client()?;
        Ok(Anthropic {
            inner: Arc::new(Shared {
                settings,
                client,
                api_key_header,
            }),
        })
    }
}

/// A model served through Anthropic's Messages API.
#[derive(Clone, Debug)]
pub struct AnthropicModel {
    shared: Arc<Shared>,
    model: String,
    default_max_tokens: u64,
}

impl AnthropicModel {
    /// The model name sent with each request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The `max_tokens` sent when a request sets none (default [`DEFAULT_MAX_TOKENS`]; the API
    /// requires a limit on every request).
    pub fn with_default_max_tokens(mut self, max_tokens: u64) -> Self {
        self.default_max_tokens = max_tokens;
        self
    }

    /// The JSON body sent for `request` (`stream` selects the streamed form).
    ///
    /// Fails with [`CompletionError::InvalidRequest`] when the request asks for native
    /// structured output (this model uses an output tool instead) or when its
    /// `additional_params` are not a JSON object.
    pub fn request_body(
        &self,
        request: &CompletionRequest,
        stream: bool,
    ) -> Result<Value, CompletionError> {
        if request.output_schema.is_some() {
            return Err(CompletionError::InvalidRequest(
                "Anthropic models do not take a native output schema; use structured output \
                 through an output tool (OutputMode::Tool or OutputMode::Auto)"
                    .to_owned(),
            ));
        }
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert(
            "max_tokens".into(),
            json!(request.max_tokens.unwrap_or(self.default_max_tokens)),
        );
        if let Some(system) = system_text(request) {
            body.insert("system".into(), json!(system));
        }
        body.insert("messages".into(), Value::Array(messages(&request.history)));
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "name": tool.name,
                        "description": tool.description,
                        "input_schema": tool.parameters,
                    })
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
            if let Some(choice) = &request.tool_choice {
                body.insert(
                    "tool_choice".into(),
                    match choice {
                        ToolChoice::Auto => json!({"type": "auto"}),
                        ToolChoice::Required => json!({"type": "any"}),
                        ToolChoice::Specific(name) => json!({"type": "tool", "name": name}),
                        ToolChoice::None => json!({"type": "none"}),
                    },
                );
            }
        }
        if let Some(temperature) = request.temperature {
            body.insert("temperature".into(), json!(temperature));
        }
        if stream {
            body.insert("stream".into(), json!(true));
        }
        let body = Value::Object(body);
        match &request.additional_params {
            None | Some(Value::Null) => Ok(body),
            Some(params @ Value::Object(_)) => Ok(shallow_merge(body, params.clone())),
            Some(other) => Err(CompletionError::InvalidRequest(format!(
                "additional_params must be a JSON object to merge into the request body, \
                 got: {other}"
            ))),
        }
    }

    async fn post(&self, body: &Value) -> Result<reqwest::Response, CompletionError> {
        let shared = &self.shared;
        let url = shared.settings.url("v1/messages");
        http::send(&shared.settings, || {
            let builder = shared.client.post(&url).json(body);
            match &shared.api_key_header {
                Some(key) => builder.header("x-api-key", key.clone()),
                None => builder,
            }
        })
        .await
    }
}

impl CompletionModel for AnthropicModel {
    async fn completion(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        let body = self.request_body(request, false)?;
        let response = self.post(&body).await?;
        let raw = http::read_json(response, self.shared.settings.timeouts.idle).await?;
        parse_response(raw)
    }

    async fn stream(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionStream, CompletionError> {
        let body = self.request_body(request, true)?;
        let response = self.post(&body).await?;
        let events = http::sse_events(response, self.shared.settings.timeouts.idle);
        Ok(http::chunk_stream(events, StreamDecoder::default()))
    }

    fn supports_native_output(&self) -> bool {
        false
    }
}

/// The `system` text: preamble, system messages of the history, then context documents.
fn system_text(request: &CompletionRequest) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(preamble) = &request.preamble {
        parts.push(preamble.clone());
    }
    for message in &request.history {
        if let Message::System { content } = message {
            parts.push(content.clone());
        }
    }
    if !request.documents.is_empty() {
        parts.push(super::render_documents(request));
    }
    parts.retain(|part| !part.trim().is_empty());
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// The history as alternating user and assistant messages of content blocks.
fn messages(history: &[Message]) -> Vec<Value> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::with_capacity(history.len());
    for message in history {
        let (role, blocks) = match message {
            Message::System { .. } => continue,
            Message::User { content } if content.trim().is_empty() => continue,
            Message::User { content } => ("user", vec![json!({"type": "text", "text": content})]),
            Message::Tool(result) => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": result.tool_call_id,
                    "content": result.content,
                })],
            ),
            Message::Assistant { content } => ("assistant", assistant_blocks(content)),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, mut blocks)| {
            if role == "user" {
                // Tool results must open the user message that answers the tool calls.
                let (mut results, rest): (Vec<Value>, Vec<Value>) = blocks
                    .into_iter()
                    .partition(|block| block["type"] == "tool_result");
                results.extend(rest);
                blocks = results;
            }
            json!({"role": role, "content": blocks})
        })
        .collect()
}

fn assistant_blocks(content: &OneOrMany<AssistantContent>) -> Vec<Value> {
    let mut blocks = Vec::with_capacity(content.len());
    for part in content.iter() {
        match part {
            AssistantContent::Text(text) if text.text.trim().is_empty() => {}
            AssistantContent::Text(text) => {
                blocks.push(json!({"type": "text", "text": text.text}));
            }
            AssistantContent::ToolCall(call) => blocks.push(json!({
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": tool_input(&call.arguments),
            })),
            AssistantContent::Reasoning(reasoning) => match reasoning.signature.as_deref() {
                Some(signature) if !signature.is_empty() => {
                    match signature.strip_prefix(REDACTED_THINKING_PREFIX) {
                        Some(data) => {
                            blocks.push(json!({"type": "redacted_thinking", "data": data}));
                        }
                        None => blocks.push(json!({
                            "type": "thinking",
                            "thinking": reasoning.text,
                            "signature": signature,
                        })),
                    }
                }
                // Anthropic verifies thinking by its signature: unsigned reasoning cannot be
                // sent back.
                _ => {}
            },
        }
    }
    blocks
}

/// A tool call's arguments as the `input` object the API requires. Arguments kept as text
/// because they were not a JSON object (a malformed call the run reported) are sent as `{}`
/// unless the text holds an object.
fn tool_input(arguments: &Value) -> Value {
    match arguments {
        Value::Object(_) => arguments.clone(),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(object @ Value::Object(_)) => object,
            _ => json!({}),
        },
        _ => json!({}),
    }
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

fn usage(value: &Value) -> Usage {
    let read = |key: &str| value.get(key).and_then(Value::as_u64).unwrap_or(0);
    Usage::new(
        read("input_tokens")
            + read("cache_creation_input_tokens")
            + read("cache_read_input_tokens"),
        read("output_tokens"),
    )
}

/// Reads a Messages API response (also used for the message a stream assembles, so both
/// forms give the same [`CompletionResponse`]).
fn parse_response(raw: Value) -> Result<CompletionResponse, CompletionError> {
    if raw.get("type").and_then(Value::as_str) == Some("error") {
        return Err(CompletionError::Other(format!(
            "Anthropic answered with an error: {}",
            describe_error(&raw)
        )));
    }
    let blocks = raw
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            CompletionError::Decode(format!(
                "the response has no content array: {}",
                truncate(&raw.to_string(), 2_000)
            ))
        })?;
    let mut parts = Vec::with_capacity(blocks.len());
    for block in blocks {
        if let Some(part) = content_part(block)? {
            parts.push(part);
        }
    }
    let content =
        OneOrMany::many(parts).unwrap_or_else(|| OneOrMany::one(AssistantContent::text("")));
    Ok(CompletionResponse {
        content,
        usage: raw.get("usage").map(usage).unwrap_or_default(),
        finish_reason: raw
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(finish_reason),
        response_id: raw.get("id").and_then(Value::as_str).map(str::to_owned),
        raw: RawResponse::new(raw),
    })
}

/// One content block as a content part; `None` for blocks reins does not model (server
/// tools, empty text), which stay in the raw response.
fn content_part(block: &Value) -> Result<Option<AssistantContent>, CompletionError> {
    let text_field = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
    let part = match block.get("type").and_then(Value::as_str) {
        Some("text") => {
            let text = text_field("text");
            (!text.is_empty()).then(|| AssistantContent::text(text))
        }
        Some("tool_use") => {
            let id = block.get("id").and_then(Value::as_str);
            let name = block.get("name").and_then(Value::as_str);
            let (Some(id), Some(name)) = (id, name) else {
                return Err(CompletionError::Decode(format!(
                    "a tool_use block has no id or name: {block}"
                )));
            };
            let input = match block.get("input") {
                None | Some(Value::Null) => json!({}),
                Some(input) => input.clone(),
            };
            Some(AssistantContent::tool_call(id, name, input))
        }
        Some("thinking") => {
            let signature = text_field("signature");
            Some(AssistantContent::Reasoning(Reasoning {
                text: text_field("thinking").to_owned(),
                signature: (!signature.is_empty()).then(|| signature.to_owned()),
            }))
        }
        Some("redacted_thinking") => Some(AssistantContent::Reasoning(Reasoning {
            text: String::new(),
            signature: Some(format!("{REDACTED_THINKING_PREFIX}{}", text_field("data"))),
        })),
        _ => None,
    };
    Ok(part)
}

/// `error_type: message` of an Anthropic error object (`{"type": "error", "error": {..}}`).
fn describe_error(value: &Value) -> String {
    let error = value.get("error").unwrap_or(value);
    let kind = error.get("type").and_then(Value::as_str);
    let message = error.get("message").and_then(Value::as_str);
    match (kind, message) {
        (Some(kind), Some(message)) => format!("{kind}: {message}"),
        _ => truncate(&value.to_string(), 2_000).to_owned(),
    }
}

fn truncate(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

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
}

/// Decodes the typed events of a streamed Messages response into chunks, and assembles the
/// message a blocking call would have returned.
#[derive(Debug, Default)]
struct StreamDecoder {
    /// The message from `message_start`, updated by `message_delta`s.
    message: Map<String, Value>,
    blocks: Vec<BlockBuilder>,
    /// How many events were read, and the type of the last one (for error messages).
    events: usize,
    last_event: String,
}

impl StreamDecoder {
    /// Reads one event, queueing the chunks it carries. Returns true at `message_stop`. An
    /// error leaves `out` as it was.
    fn event(
        &mut self,
        name: Option<&str>,
        data: &str,
        out: &mut VecDeque<StreamChunk>,
    ) -> Result<bool, CompletionError> {
        let event: Value = serde_json::from_str(data).map_err(|error| {
            CompletionError::Decode(format!(
                "a stream event{} is not JSON ({error}): {}",
                name.map(|name| format!(" `{name}`")).unwrap_or_default(),
                truncate(data, 2_000)
            ))
        })?;
        let kind = event
            .get("type")
            .and_then(Value::as_str)
            .or(name)
            .unwrap_or_default()
            .to_owned();
        self.events += 1;
        self.last_event.clone_from(&kind);
        match kind.as_str() {
            "message_start" => {
                if let Some(Value::Object(message)) = event.get("message") {
                    self.message = message.clone();
                }
            }
            "content_block_start" => self.block_start(&event, out)?,
            "content_block_delta" => self.block_delta(&event, out)?,
            "message_delta" => self.message_delta(&event),
            "message_stop" => return Ok(true),
            "error" => {
                return Err(CompletionError::Other(format!(
                    "Anthropic sent an `error` event mid-stream: {}",
                    describe_error(&event)
                )));
            }
            // `ping`, `content_block_stop`, and event types added to the API later.
            _ => {}
        }
        Ok(false)
    }

    fn index(event: &Value) -> Result<u64, CompletionError> {
        event.get("index").and_then(Value::as_u64).ok_or_else(|| {
            CompletionError::Decode(format!("a stream event has no block index: {event}"))
        })
    }

    fn block_start(
        &mut self,
        event: &Value,
        out: &mut VecDeque<StreamChunk>,
    ) -> Result<(), CompletionError> {
        let index = Self::index(event)?;
        let start = event.get("content_block").cloned().unwrap_or(Value::Null);
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
            start: Value::Null,
        };
        match start.get("type").and_then(Value::as_str) {
            Some("text") if !block.text.is_empty() => {
                out.push_back(StreamChunk::Text(block.text.clone()));
            }
            Some("thinking") if !block.thinking.is_empty() => {
                out.push_back(StreamChunk::Reasoning(block.thinking.clone()));
            }
            Some("tool_use") => {
                let id = start.get("id").and_then(Value::as_str);
                let name = start.get("name").and_then(Value::as_str);
                let (Some(id), Some(name)) = (id, name) else {
                    return Err(CompletionError::Decode(format!(
                        "a tool_use block starts without an id or name: {event}"
                    )));
                };
                block.tool_id = Some(id.to_owned());
                out.push_back(StreamChunk::ToolCall {
                    id: id.to_owned(),
                    name: Some(name.to_owned()),
                    delta: String::new(),
                });
            }
            _ => {}
        }
        block.start = start;
        self.blocks.push(block);
        Ok(())
    }

    fn block_delta(
        &mut self,
        event: &Value,
        out: &mut VecDeque<StreamChunk>,
    ) -> Result<(), CompletionError> {
        let index = Self::index(event)?;
        let Some(block) = self.blocks.iter_mut().rev().find(|b| b.index == index) else {
            return Err(CompletionError::Decode(format!(
                "a content_block_delta for block {index}, which never started: {event}"
            )));
        };
        let delta = event.get("delta").unwrap_or(&Value::Null);
        let field = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
        match delta.get("type").and_then(Value::as_str) {
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
            Some("signature_delta") => block.signature.push_str(field("signature")),
            Some("input_json_delta") => {
                let fragment = field("partial_json");
                block
                    .input_json
                    .get_or_insert_with(String::new)
                    .push_str(fragment);
                if let (Some(id), false) = (&block.tool_id, fragment.is_empty()) {
                    out.push_back(StreamChunk::ToolCall {
                        id: id.clone(),
                        name: None,
                        delta: fragment.to_owned(),
                    });
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

    /// What was received, for the error of a cut stream.
    fn summary(&self) -> String {
        let mut text = format!("{} event(s)", self.events);
        if !self.last_event.is_empty() {
            let _ = write!(text, ", the last a `{}`", self.last_event);
        }
        if self.blocks.is_empty() {
            text.push_str(", and no content block");
        } else {
            let kinds: Vec<String> = self
                .blocks
                .iter()
                .map(|block| match block.kind() {
                    "text" => format!("text ({} bytes)", block.text.len()),
                    "thinking" => format!("thinking ({} bytes)", block.thinking.len()),
                    "tool_use" => format!(
                        "tool_use `{}`",
                        block
                            .start
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                    ),
                    other => other.to_owned(),
                })
                .collect();
            let _ = write!(text, "; content blocks: {}", kinds.join(", "));
        }
        text
    }

    /// The assembled message, read as a blocking response would be.
    fn finish(mut self) -> Result<CompletionResponse, CompletionError> {
        self.blocks.sort_by_key(|block| block.index);
        let content: Vec<Value> = self.blocks.into_iter().map(BlockBuilder::build).collect();
        self.message.insert("content".into(), Value::Array(content));
        parse_response(Value::Object(self.message))
    }
}

impl http::TurnDecoder for StreamDecoder {
    fn event(
        &mut self,
        event: &crate::providers::sse::SseEvent,
        out: &mut VecDeque<StreamChunk>,
    ) -> Result<Option<CompletionResponse>, CompletionError> {
        if StreamDecoder::event(self, event.event.as_deref(), &event.data, out)? {
            std::mem::take(self).finish().map(Some)
        } else {
            Ok(None)
        }
    }

    fn closed(self) -> Result<CompletionResponse, CompletionError> {
        // The connection closed before `message_stop`: a cut stream, not an answer.
        Err(CompletionError::Decode(format!(
            "the stream ended before `message_stop`; received {}",
            self.summary()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_user_turns_merge_with_tool_results_first() {
        let history = vec![
            Message::user("hi"),
            Message::Assistant {
                content: OneOrMany::one(AssistantContent::tool_call("t1", "f", json!({}))),
            },
            Message::user("also this"),
            Message::tool_result("t1", "f", "done"),
        ];
        let wire = messages(&history);
        assert_eq!(wire.len(), 3);
        assert_eq!(wire[2]["content"][0]["type"], "tool_result");
        assert_eq!(wire[2]["content"][1]["text"], "also this");
    }

    #[test]
    fn blank_text_is_left_out_and_roles_still_alternate() {
        let history = vec![
            Message::user("hi"),
            Message::assistant("  "),
            Message::user(""),
            Message::user("again"),
        ];
        assert_eq!(
            messages(&history),
            vec![json!({"role": "user", "content": [
                {"type": "text", "text": "hi"},
                {"type": "text", "text": "again"}
            ]})]
        );
    }

    #[test]
    fn redacted_thinking_round_trips() {
        let block = json!({"type": "redacted_thinking", "data": "abc"});
        let Ok(Some(part)) = content_part(&block) else {
            panic!("a redacted block is kept");
        };
        assert_eq!(
            assistant_blocks(&OneOrMany::one(part)),
            vec![block],
            "sent back as it came"
        );
    }

    #[test]
    fn malformed_arguments_are_sent_as_an_object() {
        assert_eq!(tool_input(&json!("{oops")), json!({}));
        assert_eq!(tool_input(&json!("{\"a\":1}")), json!({"a": 1}));
    }
}
