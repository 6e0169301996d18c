//! Google's Gemini API (`generativelanguage.googleapis.com`): `generateContent` and
//! `streamGenerateContent`.
//!
//! ```no_run
//! use reins::providers::gemini::{GEMINI_2_5_FLASH, Gemini};
//!
//! # fn main() -> Result<(), reins::providers::ProviderError> {
//! let model = Gemini::from_env()?.completion(GEMINI_2_5_FLASH);
//! # let _ = model;
//! # Ok(())
//! # }
//! ```
//!
//! How reins' requests and responses map onto Gemini's format:
//!
//! - **The key** travels in the `x-goog-api-key` header, never in the URL (URLs end up in
//!   error messages and logs).
//! - **System instructions**: the preamble, every [`Message::System`] of the history and the
//!   context documents become the parts of `systemInstruction`, in that order.
//! - **Contents**: user messages and tool results are `user` contents, assistant messages
//!   `model` contents; consecutive contents of one role are merged into one, as Gemini expects
//!   the results of parallel calls in a single content. A tool result is a
//!   `functionResponse {name, response: {"result": text}}`.
//! - **Call ids**: a `functionCall` that comes with an `id` keeps it; one without (the usual
//!   case) is named `call_0`, `call_1`, … in its order in the turn. Ids are sent back on
//!   `functionCall` and `functionResponse` parts, except these synthesized ones; Gemini pairs
//!   calls and responses by name and order.
//! - **Tool schemas** are sent as `parametersJsonSchema` (and a native output schema as
//!   `responseJsonSchema`): the fields that take JSON Schema as schemars writes it, rather
//!   than `parameters`/`responseSchema`, an OpenAPI subset that rejects keywords such as
//!   `$schema` and has no `$defs` or type arrays. Gemini still supports only a
//!   part of JSON Schema there, so reins adjusts each schema without changing its meaning:
//!   the root `$schema` is dropped, `definitions` is renamed `$defs`, a `$ref` that has
//!   sibling keywords moves into a one-element `anyOf` (Gemini rejects siblings of `$ref`),
//!   and a string or number `const` becomes a one-value `enum`.
//! - **Tool choice**: `Auto` → `AUTO`, `Required` → `ANY`, `Specific(name)` → `ANY` with
//!   `allowedFunctionNames: [name]`, `None` → `NONE`. It is sent only with tools.
//! - **Generation config**: `temperature`, `maxOutputTokens` and, for native structured
//!   output, `responseMimeType: "application/json"` with `responseJsonSchema`. Gemini 2.x
//!   models refuse JSON output combined with function calling (HTTP 400); for an agent with
//!   tools on those models use `OutputMode::Tool`, or
//!   [`GeminiModel::with_native_output(false)`](GeminiModel::with_native_output).
//! - **`additional_params`** are shallow-merged into the body: a top-level key given there
//!   replaces reins' own, so `{"generationConfig": {..}}` replaces the whole generation
//!   config. To add generation settings such as `thinkingConfig` next to reins' own, use
//!   [`GeminiModel::with_generation_config`].
//!
//! # Finish reasons
//!
//! `STOP` → [`FinishReason::Stop`], or [`FinishReason::ToolCalls`] when the turn holds
//! function calls (Gemini says `STOP` for those turns too); `MAX_TOKENS` →
//! [`FinishReason::Length`]; `SAFETY`, `RECITATION`, `BLOCKLIST`, `PROHIBITED_CONTENT`,
//! `SPII` and the `IMAGE_*` filters → [`FinishReason::ContentFilter`]; any other reason is
//! kept by name in [`FinishReason::Other`]. A prompt Gemini blocks (`promptFeedback.blockReason`
//! and no candidate) is an error naming the reason, not an empty answer.
//!
//! # Usage
//!
//! Input tokens are `promptTokenCount`; output tokens are `candidatesTokenCount` plus
//! `thoughtsTokenCount` (thinking is generated, and billed, as output); the total is
//! `totalTokenCount`.
//!
//! # Thoughts and thought signatures
//!
//! Parts marked `thought: true` (thought summaries, sent when `thinkingConfig.includeThoughts`
//! is set) are read as [`Reasoning`]. Gemini's thinking models also attach an opaque
//! `thoughtSignature` to parts — to the first `functionCall` of a turn, to a text part, or to
//! an empty text part at the end of a stream — and Gemini 3 rejects a function-calling turn
//! whose signature was not sent back. reins keeps every signature in a [`Reasoning`] part's
//! `signature`, so it stays in the run's history:
//!
//! - a signature on a thought part is that part's signature;
//! - a signature on any other part becomes a [`Reasoning`] part with empty text placed
//!   **right after** the part that carried it (after the text it ends, or after the tool call).
//!
//! When the history is sent back, a [`Reasoning`] part is sent only if it has a signature: with
//! text, as a thought part carrying it; with empty text, as the `thoughtSignature` of the text
//! or function-call part just before it (or alone, in an empty text part, when there is none).
//! Reasoning without a signature is not sent back. For Gemini 3 and later models, a model
//! turn whose function calls have no signature at all (a turn that came from another model,
//! or was written by hand) gets the validator-skipping signature Google documents for such
//! histories (`skip_thought_signature_validator`) on its first call.
//!
//! # Streaming
//!
//! `streamGenerateContent?alt=sse` sends one `GenerateContentResponse` per event and ends by
//! closing the connection. Text and thoughts are streamed as they arrive; Gemini sends each
//! `functionCall` whole, so each becomes one [`StreamChunk::ToolCall`] carrying the whole
//! arguments JSON. The stream ends with [`StreamChunk::Done`] holding what
//! [`completion`](CompletionModel::completion) returns for the same parts, with the last event
//! as its raw response. A stream that breaks, or that closes before any candidate carried a
//! `finishReason`, ends with an error saying what was received — never with a shorter answer.

use super::http::{
    self, ApiKey, HttpSettings, ProviderError, RetryPolicy, Timeouts, optional_env, required_env,
};
use crate::agent::hook::shallow_merge;
use crate::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, CompletionStream,
    FinishReason, RawResponse, StreamChunk, Usage,
};
use crate::message::{AssistantContent, Message, OneOrMany, Reasoning, ToolChoice};
use reqwest::header::{AUTHORIZATION, HeaderValue};
use serde_json::{Map, Value, json};
use std::collections::VecDeque;
use std::sync::Arc;

/// `gemini-3-pro-preview`.
pub const GEMINI_3_PRO_PREVIEW: &str = "gemini-3-pro-preview";
/// `gemini-3-flash-preview`.
pub const GEMINI_3_FLASH_PREVIEW: &str = "gemini-3-flash-preview";
/// `gemini-2.5-pro`.
pub const GEMINI_2_5_PRO: &str = "gemini-2.5-pro";
/// `gemini-2.5-flash`.
pub const GEMINI_2_5_FLASH: &str = "gemini-2.5-flash";
/// `gemini-2.5-flash-lite`.
pub const GEMINI_2_5_FLASH_LITE: &str = "gemini-2.5-flash-lite";
/// `gemini-2.0-flash`.
pub const GEMINI_2_0_FLASH: &str = "gemini-2.0-flash";

/// The default base URL of the Gemini API.
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// The header that carries the key.
const KEY_HEADER: &str = "x-goog-api-key";

/// The signature Google documents for function calls that have none of their own (a history
/// from another model); Gemini 3 then skips its signature check for that turn.
const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

/// A client for the Gemini API. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Gemini {
    inner: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    settings: HttpSettings,
    client: reqwest::Client,
    /// The key as a header value, marked sensitive so it never shows in `Debug`.
    key_header: Option<HeaderValue>,
}

impl Gemini {
    /// A client configured from `GEMINI_API_KEY` and, when set, `GEMINI_BASE_URL`.
    pub fn from_env() -> Result<Self, ProviderError> {
        let mut builder = Gemini::builder().api_key(required_env("GEMINI_API_KEY")?);
        if let Some(base_url) = optional_env("GEMINI_BASE_URL") {
            builder = builder.base_url(base_url);
        }
        builder.build()
    }

    /// A builder, for an explicit key, base URL, headers, timeouts and retries.
    pub fn builder() -> GeminiBuilder {
        GeminiBuilder::default()
    }

    /// A model served by the Gemini API, e.g. [`GEMINI_2_5_FLASH`]. A name without a `/` is
    /// addressed as `models/{name}`; a full resource name (`models/…`, `tunedModels/…`) is
    /// used as given.
    pub fn completion(&self, model: impl Into<String>) -> GeminiModel {
        GeminiModel {
            shared: Arc::clone(&self.inner),
            model: model.into(),
            native_output: true,
            generation_config: Map::new(),
        }
    }
}

/// Builds a [`Gemini`] client.
#[derive(Debug, Default)]
pub struct GeminiBuilder {
    api_key: Option<ApiKey>,
    base_url: Option<String>,
    headers: Vec<(String, String)>,
    timeouts: Option<Timeouts>,
    retry: Option<RetryPolicy>,
}

impl GeminiBuilder {
    /// The API key, sent in the `x-goog-api-key` header.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(ApiKey::new(key));
        self
    }

    /// The base URL (default [`DEFAULT_BASE_URL`]).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// A header sent with every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Connect, first-byte and idle-stream timeouts.
    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = Some(timeouts);
        self
    }

    /// How failed calls are retried.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = Some(retry);
        self
    }

    /// Builds the client. Without a key, requests are sent without one (e.g. to a proxy that
    /// adds it). A key that cannot be an HTTP header value is an error.
    pub fn build(self) -> Result<Gemini, ProviderError> {
        let base_url = self.base_url.unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let key_header = match &self.api_key {
            Some(key) => {
                let mut value = HeaderValue::from_str(key.expose())
                    .map_err(|_| ProviderError::InvalidHeader(KEY_HEADER.to_owned()))?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        let mut settings = HttpSettings::new(base_url, self.api_key);
        for (name, value) in &self.headers {
            settings.add_header(name, value)?;
        }
        // A key passed as a plain header must not show in `Debug` either.
        for (name, value) in settings.headers.iter_mut() {
            if name.as_str() == KEY_HEADER || *name == AUTHORIZATION {
                value.set_sensitive(true);
            }
        }
        if let Some(timeouts) = self.timeouts {
            settings.timeouts = timeouts;
        }
        if let Some(retry) = self.retry {
            settings.retry = retry;
        }
        let client = settings.client()?;
        Ok(Gemini {
            inner: Arc::new(Shared {
                settings,
                client,
                key_header,
            }),
        })
    }
}

/// A model served by the Gemini API.
#[derive(Clone, Debug)]
pub struct GeminiModel {
    shared: Arc<Shared>,
    model: String,
    native_output: bool,
    generation_config: Map<String, Value>,
}

impl GeminiModel {
    /// The model name sent with each request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Declares whether this model is asked for JSON natively (`responseMimeType` and
    /// `responseJsonSchema`; true by default). With false, structured output falls back to an
    /// output tool — what Gemini 2.x needs when the agent also has tools.
    pub fn with_native_output(mut self, supported: bool) -> Self {
        self.native_output = supported;
        self
    }

    /// Generation settings added to every request's `generationConfig`, e.g.
    /// `json!({"thinkingConfig": {"includeThoughts": true}})`. Keys of the request itself
    /// (temperature, output limit, output schema) take precedence; a value that is not a JSON
    /// object is ignored.
    pub fn with_generation_config(mut self, config: Value) -> Self {
        if let Value::Object(config) = config {
            self.generation_config.extend(config);
        }
        self
    }

    /// The JSON body sent for `request` (the same for blocking and streamed calls).
    pub fn request_body(&self, request: &CompletionRequest) -> Value {
        let mut body = Map::new();
        let (system, contents) = self.contents(request);
        if !system.is_empty() {
            body.insert("systemInstruction".into(), json!({ "parts": system }));
        }
        body.insert("contents".into(), Value::Array(contents));
        if !request.tools.is_empty() {
            let declarations: Vec<Value> = request
                .tools
                .iter()
                .map(|tool| {
                    let mut declaration = Map::new();
                    declaration.insert("name".into(), json!(tool.name));
                    declaration.insert("description".into(), json!(tool.description));
                    if !tool.parameters.is_null() {
                        declaration.insert(
                            "parametersJsonSchema".into(),
                            gemini_schema(&tool.parameters),
                        );
                    }
                    Value::Object(declaration)
                })
                .collect();
            body.insert(
                "tools".into(),
                json!([{ "functionDeclarations": declarations }]),
            );
            if let Some(choice) = &request.tool_choice {
                let config = match choice {
                    ToolChoice::Auto => json!({"mode": "AUTO"}),
                    ToolChoice::None => json!({"mode": "NONE"}),
                    ToolChoice::Required => json!({"mode": "ANY"}),
                    ToolChoice::Specific(name) => {
                        json!({"mode": "ANY", "allowedFunctionNames": [name]})
                    }
                };
                body.insert(
                    "toolConfig".into(),
                    json!({ "functionCallingConfig": config }),
                );
            }
        }
        let mut generation = self.generation_config.clone();
        if let Some(temperature) = request.temperature {
            generation.insert("temperature".into(), json!(temperature));
        }
        if let Some(max_tokens) = request.max_tokens {
            generation.insert("maxOutputTokens".into(), json!(max_tokens));
        }
        if let Some(schema) = request
            .output_schema
            .as_ref()
            .filter(|_| self.native_output)
        {
            generation.insert("responseMimeType".into(), json!("application/json"));
            generation.insert("responseJsonSchema".into(), gemini_schema(schema));
        }
        if !generation.is_empty() {
            body.insert("generationConfig".into(), Value::Object(generation));
        }
        let body = Value::Object(body);
        match &request.additional_params {
            Some(params) => shallow_merge(body, params.clone()),
            None => body,
        }
    }

    /// The parts of `systemInstruction` and the `contents`.
    fn contents(&self, request: &CompletionRequest) -> (Vec<Value>, Vec<Value>) {
        let mut system = Vec::new();
        if let Some(preamble) = &request.preamble {
            system.push(json!({ "text": preamble }));
        }
        let mut contents: Vec<Value> = Vec::with_capacity(request.history.len());
        let needs_signatures = requires_signatures(&self.model);
        for message in &request.history {
            match message {
                Message::System { content } => system.push(json!({ "text": content })),
                Message::User { content } => {
                    push_content(&mut contents, "user", vec![json!({ "text": content })]);
                }
                Message::Assistant { content } => {
                    let parts = model_parts(content, needs_signatures);
                    push_content(&mut contents, "model", parts);
                }
                Message::Tool(result) => {
                    let mut response = Map::new();
                    if sent_id(&result.tool_call_id) {
                        response.insert("id".into(), json!(result.tool_call_id));
                    }
                    response.insert("name".into(), json!(result.tool_name));
                    response.insert("response".into(), json!({ "result": result.content }));
                    push_content(
                        &mut contents,
                        "user",
                        vec![json!({ "functionResponse": response })],
                    );
                }
            }
        }
        if !request.documents.is_empty() {
            system.push(json!({ "text": super::render_documents(request) }));
        }
        (system, contents)
    }

    /// The path of a method of this model, e.g. `models/gemini-2.5-flash:generateContent`.
    fn method_path(&self, method: &str) -> String {
        if self.model.contains('/') {
            format!("{}:{method}", self.model)
        } else {
            format!("models/{}:{method}", self.model)
        }
    }

    async fn post(&self, path: &str, body: &Value) -> Result<reqwest::Response, CompletionError> {
        let shared = &self.shared;
        let url = shared.settings.url(path);
        http::send(&shared.settings, || {
            let builder = shared.client.post(&url).json(body);
            match &shared.key_header {
                Some(key) => builder.header(KEY_HEADER, key.clone()),
                None => builder,
            }
        })
        .await
    }
}

/// Appends a content, merging it into the last one when both have the same role. A content
/// without parts is left out (Gemini rejects empty contents).
fn push_content(contents: &mut Vec<Value>, role: &str, parts: Vec<Value>) {
    if parts.is_empty() {
        return;
    }
    if let Some(last) = contents.last_mut() {
        if last.get("role").and_then(Value::as_str) == Some(role) {
            if let Some(existing) = last.get_mut("parts").and_then(Value::as_array_mut) {
                existing.extend(parts);
                return;
            }
        }
    }
    contents.push(json!({ "role": role, "parts": parts }));
}

/// The parts of a `model` content: see the module docs for where signatures go.
fn model_parts(content: &OneOrMany<AssistantContent>, needs_signatures: bool) -> Vec<Value> {
    let mut parts: Vec<Value> = Vec::with_capacity(content.len());
    // Whether the last part pushed is a text or call part sent just before the current item,
    // so an empty signed reasoning part can hand its signature to it.
    let mut attachable = false;
    for item in content.iter() {
        match item {
            AssistantContent::Text(text) => {
                attachable = !text.text.is_empty();
                if attachable {
                    parts.push(json!({ "text": text.text }));
                }
            }
            AssistantContent::ToolCall(call) => {
                let mut function_call = Map::new();
                if sent_id(&call.id) {
                    function_call.insert("id".into(), json!(call.id));
                }
                function_call.insert("name".into(), json!(call.name));
                function_call.insert("args".into(), call_args(&call.arguments));
                parts.push(json!({ "functionCall": function_call }));
                attachable = true;
            }
            AssistantContent::Reasoning(Reasoning {
                text,
                signature: Some(signature),
            }) => {
                let target = parts
                    .last_mut()
                    .filter(|_| attachable && text.is_empty())
                    .and_then(Value::as_object_mut)
                    .filter(|part| !part.contains_key("thoughtSignature"));
                match target {
                    Some(part) => {
                        part.insert("thoughtSignature".into(), json!(signature));
                    }
                    None if text.is_empty() => {
                        parts.push(json!({ "text": "", "thoughtSignature": signature }));
                    }
                    None => parts.push(json!({
                        "text": text,
                        "thought": true,
                        "thoughtSignature": signature,
                    })),
                }
                attachable = false;
            }
            // Gemini has no use for reasoning it cannot verify.
            AssistantContent::Reasoning(Reasoning {
                signature: None, ..
            }) => attachable = false,
        }
    }
    let is_call = |part: &Value| part.get("functionCall").is_some();
    let signed = parts
        .iter()
        .any(|part| is_call(part) && part.get("thoughtSignature").is_some());
    if needs_signatures && !signed {
        if let Some(first) = parts
            .iter_mut()
            .find(|part| is_call(part))
            .and_then(Value::as_object_mut)
        {
            first.insert("thoughtSignature".into(), json!(SKIP_SIGNATURE));
        }
    }
    parts
}

/// A call's arguments as Gemini's `args` object. Arguments that are not an object (text a
/// model sent that was not JSON) are kept under `"arguments"`, so the model still sees them.
fn call_args(arguments: &Value) -> Value {
    match arguments {
        Value::Object(_) => arguments.clone(),
        Value::Null => json!({}),
        other => json!({ "arguments": other }),
    }
}

/// Whether `id` is sent back to Gemini: every id but those reins synthesized (`call_{n}`).
fn sent_id(id: &str) -> bool {
    !id.is_empty()
        && !id
            .strip_prefix("call_")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether the model validates thought signatures of function calls: Gemini 3 and later.
fn requires_signatures(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    let Some(version) = name.strip_prefix("gemini-") else {
        return false;
    };
    let major: String = version.chars().take_while(char::is_ascii_digit).collect();
    major.parse::<u32>().is_ok_and(|major| major >= 3)
}

/// A JSON schema adjusted to what Gemini's `parametersJsonSchema` and `responseJsonSchema`
/// accept, with the same meaning (see the module docs).
fn gemini_schema(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Value::Object(root) = &mut schema {
        root.remove("$schema");
        if let Some(definitions) = root.remove("definitions") {
            match root.get_mut("$defs").and_then(Value::as_object_mut) {
                Some(defs) => {
                    if let Value::Object(definitions) = definitions {
                        for (name, definition) in definitions {
                            defs.entry(name).or_insert(definition);
                        }
                    }
                }
                None => {
                    root.insert("$defs".into(), definitions);
                }
            }
        }
    }
    adjust_schema(&mut schema);
    schema
}

fn adjust_schema(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(Value::String(reference)) = map.get_mut("$ref") {
        if let Some(name) = reference.strip_prefix("#/definitions/") {
            *reference = format!("#/$defs/{name}");
        }
    }
    if map.contains_key("$ref")
        && !map.contains_key("anyOf")
        && map.keys().any(|key| !key.starts_with('$'))
    {
        if let Some(reference) = map.remove("$ref") {
            map.insert("anyOf".into(), json!([{ "$ref": reference }]));
        }
    }
    if !map.contains_key("enum")
        && map
            .get("const")
            .is_some_and(|value| value.is_string() || value.is_number())
    {
        if let Some(value) = map.remove("const") {
            map.insert("enum".into(), json!([value]));
        }
    }
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                if let Value::Object(schemas) = value {
                    schemas.values_mut().for_each(adjust_schema);
                }
            }
            "items" | "additionalProperties" | "not" | "contains" | "propertyNames" => {
                match value {
                    Value::Array(schemas) => schemas.iter_mut().for_each(adjust_schema),
                    other => adjust_schema(other),
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(schemas) = value {
                    schemas.iter_mut().for_each(adjust_schema);
                }
            }
            _ => {}
        }
    }
}

fn finish_reason(reason: &str, has_calls: bool) -> FinishReason {
    match reason {
        "STOP" if has_calls => FinishReason::ToolCalls,
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY"
        | "RECITATION"
        | "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

fn usage(metadata: &Value) -> Usage {
    let read = |key: &str| metadata.get(key).and_then(Value::as_u64).unwrap_or(0);
    let input = read("promptTokenCount");
    let output = read("candidatesTokenCount") + read("thoughtsTokenCount");
    Usage {
        input_tokens: input,
        output_tokens: output,
        total_tokens: metadata
            .get("totalTokenCount")
            .and_then(Value::as_u64)
            .unwrap_or(input + output),
    }
}

/// The error for a response that says Gemini refused the prompt or failed, if it is one.
fn refusal(response: &Value) -> Option<CompletionError> {
    if let Some(error) = response.get("error") {
        return Some(CompletionError::Other(format!(
            "Gemini reported an error: {error}"
        )));
    }
    let has_candidates = response
        .get("candidates")
        .and_then(Value::as_array)
        .is_some_and(|candidates| !candidates.is_empty());
    let feedback = response.get("promptFeedback")?;
    let reason = feedback.get("blockReason").and_then(Value::as_str)?;
    (!has_candidates).then(|| {
        CompletionError::Other(format!(
            "Gemini blocked the prompt (blockReason {reason}); promptFeedback: {feedback}"
        ))
    })
}

/// Builds a turn's content from Gemini parts, whether they come in one response or spread
/// over a stream's events: consecutive text joins into one part, and so do consecutive
/// thought fragments until one carries a signature. Where it streams, it also says what
/// each part adds. (Not [`StreamAssembler`](crate::completion::StreamAssembler): that has no
/// place for signatures.)
#[derive(Debug, Default)]
struct TurnBuilder {
    parts: Vec<AssistantContent>,
    calls: usize,
    text_len: usize,
    reasoning_len: usize,
}

impl TurnBuilder {
    fn part(
        &mut self,
        part: &Value,
        mut out: Option<&mut VecDeque<StreamChunk>>,
    ) -> Result<(), CompletionError> {
        let signature = part
            .get("thoughtSignature")
            .and_then(Value::as_str)
            .filter(|signature| !signature.is_empty());
        if let Some(call) = part.get("functionCall") {
            let name = call.get("name").and_then(Value::as_str).ok_or_else(|| {
                CompletionError::Decode(format!("a functionCall part has no name: {part}"))
            })?;
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty())
                .map_or_else(|| format!("call_{}", self.calls), str::to_owned);
            self.calls += 1;
            let arguments = match call.get("args") {
                Some(Value::Object(args)) => Value::Object(args.clone()),
                None | Some(Value::Null) => json!({}),
                Some(other) => other.clone(),
            };
            if let Some(out) = out.as_deref_mut() {
                out.push_back(StreamChunk::ToolCall {
                    id: id.clone(),
                    name: Some(name.to_owned()),
                    delta: arguments.to_string(),
                });
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
                if let Some(out) = out {
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
            if let Some(out) = out {
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

    fn has_calls(&self) -> bool {
        self.calls > 0
    }

    fn summary(&self) -> String {
        format!(
            "{} characters of text, {} of thoughts and {} function call(s)",
            self.text_len, self.reasoning_len, self.calls
        )
    }

    fn content(self) -> OneOrMany<AssistantContent> {
        OneOrMany::many(self.parts).unwrap_or_else(|| OneOrMany::one(AssistantContent::text("")))
    }
}

/// The parts of a response's first candidate.
fn candidate_parts(candidate: &Value) -> &[Value] {
    candidate
        .get("content")
        .and_then(|content| content.get("parts"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Reads a blocking `generateContent` response.
fn parse_response(raw: Value) -> Result<CompletionResponse, CompletionError> {
    if let Some(error) = refusal(&raw) {
        return Err(error);
    }
    let candidate = raw
        .get("candidates")
        .and_then(|candidates| candidates.get(0))
        .ok_or_else(|| CompletionError::Decode(format!("the response has no candidates: {raw}")))?;
    let mut turn = TurnBuilder::default();
    for part in candidate_parts(candidate) {
        turn.part(part, None)?;
    }
    let finish = candidate
        .get("finishReason")
        .and_then(Value::as_str)
        .map(|reason| finish_reason(reason, turn.has_calls()));
    Ok(CompletionResponse {
        content: turn.content(),
        usage: raw.get("usageMetadata").map(usage).unwrap_or_default(),
        finish_reason: finish,
        response_id: raw
            .get("responseId")
            .and_then(Value::as_str)
            .map(str::to_owned),
        raw: RawResponse::new(raw),
    })
}

/// Decodes the events of a `streamGenerateContent` response.
#[derive(Debug, Default)]
struct StreamDecoder {
    turn: TurnBuilder,
    usage: Usage,
    finish: Option<String>,
    response_id: Option<String>,
    events: usize,
    /// The last event received: the raw response of the assembled turn.
    last: Value,
}

impl StreamDecoder {
    fn event(
        &mut self,
        data: &str,
        out: &mut VecDeque<StreamChunk>,
    ) -> Result<(), CompletionError> {
        let event: Value = serde_json::from_str(data).map_err(|error| {
            CompletionError::Decode(format!(
                "a stream event is not JSON ({error}) after {}: {data}",
                self.received()
            ))
        })?;
        if let Some(error) = refusal(&event) {
            return Err(error);
        }
        self.events += 1;
        if let Some(id) = event.get("responseId").and_then(Value::as_str) {
            self.response_id.get_or_insert_with(|| id.to_owned());
        }
        if let Some(metadata) = event.get("usageMetadata") {
            self.usage = usage(metadata);
        }
        if let Some(candidate) = event.get("candidates").and_then(|c| c.get(0)) {
            for part in candidate_parts(candidate) {
                self.turn.part(part, Some(out))?;
            }
            if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
                self.finish = Some(reason.to_owned());
            }
        }
        self.last = event;
        Ok(())
    }

    /// What the stream delivered so far, for errors.
    fn received(&self) -> String {
        format!("{} event(s) with {}", self.events, self.turn.summary())
    }

    /// The error for a stream that closed or broke before the turn finished.
    fn cut(&self, error: Option<CompletionError>) -> CompletionError {
        let mut last = self.last.to_string();
        if last.len() > 1_000 {
            let mut end = 1_000;
            while !last.is_char_boundary(end) {
                end -= 1;
            }
            last.truncate(end);
            last.push_str("… [truncated]");
        }
        let received = format!("{}; last event: {last}", self.received());
        match error {
            None => CompletionError::Decode(format!(
                "the stream closed before Gemini finished the turn (no candidate carried a \
                 finishReason); received {received}"
            )),
            Some(CompletionError::Transport(message)) => {
                CompletionError::Transport(format!("{message}; the stream broke after {received}"))
            }
            Some(CompletionError::Timeout(message)) => {
                CompletionError::Timeout(format!("{message}; the stream broke after {received}"))
            }
            Some(CompletionError::Decode(message)) => {
                CompletionError::Decode(format!("{message}; the stream broke after {received}"))
            }
            Some(other) => other,
        }
    }

    /// The assembled turn, once the stream has closed: an error unless some event carried a
    /// `finishReason`.
    fn finish(self) -> Result<CompletionResponse, CompletionError> {
        let Some(reason) = &self.finish else {
            return Err(self.cut(None));
        };
        let finish_reason = finish_reason(reason, self.turn.has_calls());
        Ok(CompletionResponse {
            content: self.turn.content(),
            usage: self.usage,
            finish_reason: Some(finish_reason),
            response_id: self.response_id,
            raw: RawResponse::new(self.last),
        })
    }
}

impl CompletionModel for GeminiModel {
    async fn completion(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        let body = self.request_body(request);
        let response = self
            .post(&self.method_path("generateContent"), &body)
            .await?;
        let raw = http::read_json(response, self.shared.settings.timeouts.idle).await?;
        parse_response(raw)
    }

    async fn stream(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionStream, CompletionError> {
        let body = self.request_body(request);
        let path = format!("{}?alt=sse", self.method_path("streamGenerateContent"));
        let response = self.post(&path, &body).await?;
        let events = http::sse_events(response, self.shared.settings.timeouts.idle);
        Ok(http::chunk_stream(events, StreamDecoder::default()))
    }

    fn supports_native_output(&self) -> bool {
        self.native_output
    }
}

impl http::TurnDecoder for StreamDecoder {
    fn event(
        &mut self,
        event: &crate::providers::sse::SseEvent,
        out: &mut VecDeque<StreamChunk>,
    ) -> Result<Option<CompletionResponse>, CompletionError> {
        StreamDecoder::event(self, &event.data, out)?;
        Ok(None)
    }

    fn closed(self) -> Result<CompletionResponse, CompletionError> {
        // Gemini ends a stream by closing it: the turn is complete only if some event said
        // why the model stopped.
        self.finish()
    }

    fn failed(&self, error: CompletionError) -> CompletionError {
        self.cut(Some(error))
    }
}
