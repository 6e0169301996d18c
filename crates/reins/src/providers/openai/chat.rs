//! The Chat Completions wire format, spoken by OpenAI and by every compatible server.

use super::Shared;
use crate::agent::hook::shallow_merge;
use crate::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, CompletionStream,
    FinishReason, RawResponse, StreamAssembler, StreamChunk, Usage, parse_arguments,
};
use crate::message::{AssistantContent, Message, OneOrMany, Reasoning, ToolChoice};
use crate::providers::http;
use serde_json::{Map, Value, json};
use std::collections::VecDeque;
use std::sync::Arc;

/// The differences between servers that speak Chat Completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChatDialect {
    /// OpenAI itself: `max_completion_tokens`.
    OpenAI,
    /// Other servers: `max_tokens`, and an assistant message's `content` is `""` rather than
    /// null (llama.cpp's server rejects null).
    Compatible,
}

/// A model served through the Chat Completions API.
#[derive(Clone, Debug)]
pub struct ChatCompletionsModel {
    shared: Arc<Shared>,
    model: String,
    dialect: ChatDialect,
    native_output: bool,
}

impl ChatCompletionsModel {
    pub(crate) fn new(shared: Arc<Shared>, model: String, dialect: ChatDialect) -> Self {
        ChatCompletionsModel {
            shared,
            model,
            dialect,
            native_output: true,
        }
    }

    /// Declares whether the server supports `response_format: json_schema` (true by default
    /// for OpenAI; structured output falls back to an output tool when false).
    pub fn with_native_output(mut self, supported: bool) -> Self {
        self.native_output = supported;
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
        body.insert("messages".into(), Value::Array(self.messages(request)));
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": tool.name,
                            "description": tool.description,
                            "parameters": tool.parameters,
                        }
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
                    ToolChoice::Specific(name) => {
                        json!({"type": "function", "function": {"name": name}})
                    }
                },
            );
        }
        if let Some(temperature) = request.temperature {
            body.insert("temperature".into(), json!(temperature));
        }
        if let Some(max_tokens) = request.max_tokens {
            let key = match self.dialect {
                ChatDialect::OpenAI => "max_completion_tokens",
                ChatDialect::Compatible => "max_tokens",
            };
            body.insert(key.into(), json!(max_tokens));
        }
        if let Some(schema) = &request.output_schema {
            body.insert(
                "response_format".into(),
                json!({
                    "type": "json_schema",
                    "json_schema": {"name": "output", "schema": schema},
                }),
            );
        }
        if stream {
            body.insert("stream".into(), json!(true));
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        let body = Value::Object(body);
        match &request.additional_params {
            Some(params) => shallow_merge(body, params.clone()),
            None => body,
        }
    }

    fn messages(&self, request: &CompletionRequest) -> Vec<Value> {
        let mut messages = Vec::with_capacity(request.history.len() + 2);
        if let Some(preamble) = &request.preamble {
            messages.push(json!({"role": "system", "content": preamble}));
        }
        if !request.documents.is_empty() {
            messages.push(
                json!({"role": "user", "content": crate::providers::render_documents(request)}),
            );
        }
        for message in &request.history {
            match message {
                Message::System { content } => {
                    messages.push(json!({"role": "system", "content": content}));
                }
                Message::User { content } => {
                    messages.push(json!({"role": "user", "content": content}));
                }
                Message::Assistant { content } => messages.push(self.assistant_message(content)),
                Message::Tool(result) => messages.push(json!({
                    "role": "tool",
                    "tool_call_id": result.tool_call_id,
                    "content": result.content,
                })),
            }
        }
        messages
    }

    fn assistant_message(&self, content: &OneOrMany<AssistantContent>) -> Value {
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        for part in content.iter() {
            match part {
                AssistantContent::Text(part) => text.push_str(&part.text),
                AssistantContent::ToolCall(call) => tool_calls.push(json!({
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.arguments_text(),
                    },
                })),
                // Chat Completions has no way to send reasoning back.
                AssistantContent::Reasoning(_) => {}
            }
        }
        let content = if !text.is_empty() {
            json!(text)
        } else if self.dialect == ChatDialect::Compatible || tool_calls.is_empty() {
            json!("")
        } else {
            Value::Null
        };
        let mut message = json!({"role": "assistant", "content": content});
        if !tool_calls.is_empty() {
            message["tool_calls"] = Value::Array(tool_calls);
        }
        message
    }

    async fn post(&self, body: &Value) -> Result<reqwest::Response, CompletionError> {
        let settings = &self.shared.settings;
        let url = settings.url("chat/completions");
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

pub(crate) fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

fn usage(value: &Value) -> Usage {
    let read = |key: &str| value.get(key).and_then(Value::as_u64).unwrap_or(0);
    let (input, output) = (read("prompt_tokens"), read("completion_tokens"));
    Usage {
        input_tokens: input,
        output_tokens: output,
        total_tokens: value
            .get("total_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(input + output),
    }
}

/// Reads a blocking Chat Completions response.
pub(crate) fn parse_response(raw: Value) -> Result<CompletionResponse, CompletionError> {
    let choice = raw
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| CompletionError::Decode(format!("the response has no choices: {raw}")))?;
    let message = choice
        .get("message")
        .ok_or_else(|| CompletionError::Decode(format!("the choice has no message: {raw}")))?;
    let mut parts = Vec::new();
    for key in ["reasoning_content", "reasoning"] {
        if let Some(reasoning) = message.get(key).and_then(Value::as_str) {
            if !reasoning.is_empty() {
                parts.push(AssistantContent::Reasoning(Reasoning {
                    text: reasoning.to_owned(),
                    signature: None,
                }));
                break;
            }
        }
    }
    if let Some(text) = message.get("content").and_then(Value::as_str) {
        if !text.is_empty() {
            parts.push(AssistantContent::text(text));
        }
    }
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (index, call) in calls.iter().enumerate() {
            let function = call.get("function").unwrap_or(&Value::Null);
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    CompletionError::Decode(format!("a tool call has no name: {call}"))
                })?;
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("call_{index}"), str::to_owned);
            let arguments = match function.get("arguments") {
                Some(Value::String(text)) => parse_arguments(text),
                Some(Value::Object(map)) => Value::Object(map.clone()),
                _ => json!({}),
            };
            parts.push(AssistantContent::tool_call(id, name, arguments));
        }
    }
    let content =
        OneOrMany::many(parts).unwrap_or_else(|| OneOrMany::one(AssistantContent::text("")));
    Ok(CompletionResponse {
        content,
        usage: raw.get("usage").map(usage).unwrap_or_default(),
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(finish_reason),
        response_id: raw.get("id").and_then(Value::as_str).map(str::to_owned),
        raw: RawResponse::new(raw),
    })
}

/// Decodes a streamed Chat Completions response into chunks.
struct ChatStreamDecoder {
    assembler: StreamAssembler,
    /// Tool-call ids by the stream's `index`.
    call_ids: Vec<(u64, String)>,
    usage: Usage,
    finish_reason: Option<FinishReason>,
    response_id: Option<String>,
    /// The last chunk received, as the raw response.
    last: Value,
    done: bool,
}

impl ChatStreamDecoder {
    fn new() -> Self {
        ChatStreamDecoder {
            assembler: StreamAssembler::new(),
            call_ids: Vec::new(),
            usage: Usage::default(),
            finish_reason: None,
            response_id: None,
            last: Value::Null,
            done: false,
        }
    }

    /// Reads one event's data, returning the chunks it carries.
    fn event(
        &mut self,
        data: &str,
        out: &mut VecDeque<StreamChunk>,
    ) -> Result<(), CompletionError> {
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|error| {
            CompletionError::Decode(format!("a stream event is not JSON ({error}): {data}"))
        })?;
        if let Some(error) = chunk.get("error") {
            return Err(CompletionError::Other(format!(
                "the provider reported an error mid-stream: {error}"
            )));
        }
        if let Some(id) = chunk.get("id").and_then(Value::as_str) {
            self.response_id.get_or_insert_with(|| id.to_owned());
        }
        if let Some(usage_value) = chunk.get("usage").filter(|u| !u.is_null()) {
            self.usage = usage(usage_value);
        }
        if let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) {
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(finish_reason(reason));
            }
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            for key in ["reasoning_content", "reasoning"] {
                if let Some(text) = delta.get(key).and_then(Value::as_str) {
                    if !text.is_empty() {
                        self.assembler.reasoning(text);
                        out.push_back(StreamChunk::Reasoning(text.to_owned()));
                        break;
                    }
                }
            }
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                if !text.is_empty() {
                    self.assembler.text(text);
                    out.push_back(StreamChunk::Text(text.to_owned()));
                }
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for call in calls {
                    self.tool_call_delta(call, out);
                }
            }
        }
        self.last = chunk;
        Ok(())
    }

    fn tool_call_delta(&mut self, call: &Value, out: &mut VecDeque<StreamChunk>) {
        let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
        let function = call.get("function").unwrap_or(&Value::Null);
        let name = function.get("name").and_then(Value::as_str);
        let arguments = function
            .get("arguments")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let id = match self.call_ids.iter().find(|(i, _)| *i == index) {
            Some((_, id)) => id.clone(),
            None => {
                let id = call
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("call_{index}"), str::to_owned);
                self.call_ids.push((index, id.clone()));
                id
            }
        };
        self.assembler.tool_call(&id, name, arguments);
        out.push_back(StreamChunk::ToolCall {
            id,
            name: name.map(str::to_owned),
            delta: arguments.to_owned(),
        });
    }

    fn finish(self) -> CompletionResponse {
        let raw = RawResponse::new(self.last);
        self.assembler
            .finish(self.usage, self.finish_reason, self.response_id, raw)
    }
}

impl CompletionModel for ChatCompletionsModel {
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
        Ok(http::chunk_stream(events, ChatStreamDecoder::new()))
    }

    fn supports_native_output(&self) -> bool {
        self.native_output
    }
}

impl ChatStreamDecoder {
    fn assembler_summary(&self) -> String {
        format!(
            "{} tool call(s); last event: {}",
            self.call_ids.len(),
            self.last
        )
    }
}

impl http::TurnDecoder for ChatStreamDecoder {
    fn event(
        &mut self,
        event: &crate::providers::sse::SseEvent,
        out: &mut VecDeque<StreamChunk>,
    ) -> Result<Option<CompletionResponse>, CompletionError> {
        ChatStreamDecoder::event(self, &event.data, out)?;
        Ok(self
            .done
            .then(|| std::mem::replace(self, ChatStreamDecoder::new()).finish()))
    }

    fn closed(self) -> Result<CompletionResponse, CompletionError> {
        // The connection closed without `[DONE]`: a cut stream, not an answer.
        Err(CompletionError::Decode(format!(
            "the stream ended without [DONE] after {}",
            self.assembler_summary()
        )))
    }
}
