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
//! - **System instructions**: the preamble, every
//!   [`Message::System`](crate::message::Message::System) of the history and the context
//!   documents become the parts of `systemInstruction`, in that order.
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
//! - **Tool names**: Gemini refuses a function name that starts with a digit or `-`, which
//!   the other providers accept: such a name is sent with `_` before it (and one that
//!   already starts with `_`s then a digit or `-` gets one `_` more, so every name maps
//!   back), in declarations, the tool choice and the history alike, and the calls Gemini
//!   makes are read back under the tool's own name. A 64-character name so shifted is one
//!   character over Gemini's limit.
//! - **Tool choice**: `Auto` → `AUTO`, `Required` → `ANY`, `Specific(name)` → `ANY` with
//!   `allowedFunctionNames: [name]`, `None` → `NONE`. It is sent only with tools.
//! - **Generation config**: `temperature`, `maxOutputTokens` and, for native structured
//!   output, `responseMimeType: "application/json"` with `responseJsonSchema`. Gemini 2.x
//!   models refuse JSON output combined with function calling (HTTP 400); for an agent with
//!   tools on those models use `OutputMode::Tool`, or
//!   [`GeminiModel::with_native_output(false)`](GeminiModel::with_native_output).
//! - **`additional_params`** (a JSON object; anything else is an
//!   [`InvalidRequest`](crate::completion::CompletionError::InvalidRequest)) are
//!   shallow-merged into the body: a top-level key given there replaces reins' own, so
//!   `{"generationConfig": {..}}` replaces the whole generation config. To add generation
//!   settings such as `thinkingConfig` next to reins' own, use
//!   [`GeminiModel::with_generation_config`](GeminiModel::with_generation_config).
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
//! Input tokens are `promptTokenCount` (of which `cachedContentTokenCount` were read from a
//! cache: [`Usage::cache_read_input_tokens`](crate::completion::Usage::cache_read_input_tokens)); output tokens are `candidatesTokenCount` plus
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
//! [`completion`](crate::completion::CompletionModel::completion) returns for the same parts,
//! with the last event as its raw response. A stream that breaks, or that closes before any
//! candidate carried a `finishReason`, ends with an error saying what was received — never
//! with a shorter answer.
//!
//! [`FinishReason::Stop`]: crate::completion::FinishReason::Stop
//! [`FinishReason::ToolCalls`]: crate::completion::FinishReason::ToolCalls
//! [`FinishReason::Length`]: crate::completion::FinishReason::Length
//! [`FinishReason::ContentFilter`]: crate::completion::FinishReason::ContentFilter
//! [`FinishReason::Other`]: crate::completion::FinishReason::Other
//! [`Reasoning`]: crate::message::Reasoning
//! [`StreamChunk::ToolCall`]: crate::completion::StreamChunk::ToolCall
//! [`StreamChunk::Done`]: crate::completion::StreamChunk::Done

mod history;
mod names;
mod request;
mod response;
mod schema;
mod stream;
mod turn;

use super::codec;
use super::{Auth, HttpModel, ProviderBuilder, hosted_client};
pub use names::function_name;
use serde_json::{Map, Value};

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

hosted_client! {
    /// A client for the Gemini API. Cheap to clone.
    Gemini {
        options: (),
        base_url: DEFAULT_BASE_URL,
        auth: Auth::header(KEY_HEADER),
        key_env: "GEMINI_API_KEY",
        base_url_env: "GEMINI_BASE_URL",
    }
}

/// Builds a [`Gemini`] client: [`ProviderBuilder`], with the key sent in the
/// `x-goog-api-key` header.
pub type GeminiBuilder = ProviderBuilder<Gemini>;

impl Gemini {
    /// A model served by the Gemini API, e.g. [`GEMINI_2_5_FLASH`]. A name without a `/` is
    /// addressed as `models/{name}`; a full resource name (`models/…`, `tunedModels/…`) is
    /// used as given.
    pub fn completion(&self, model: impl Into<String>) -> GeminiModel {
        self.model(GenerateContent {
            model: model.into(),
            native_output: true,
            generation_config: Map::new(),
        })
    }
}

/// A model served by the Gemini API.
pub type GeminiModel = HttpModel<GenerateContent>;

/// The `generateContent` protocol for one model (see [`GeminiModel`]).
#[derive(Debug, Clone)]
pub struct GenerateContent {
    model: String,
    native_output: bool,
    /// Settings added to every request's `generationConfig`.
    generation_config: Map<String, Value>,
}

impl GenerateContent {
    /// The path of a method of this model, e.g. `models/gemini-2.5-flash:generateContent`.
    fn method_path(&self, method: &str) -> String {
        if self.model.contains('/') {
            format!("{}:{method}", self.model)
        } else {
            format!("models/{}:{method}", self.model)
        }
    }
}

// The body is the same for blocking and streamed calls; only the path differs.
codec::protocol! {
    GenerateContent => request::body, response::parse, stream::GeminiStreamDecoder;
    provider(_gemini) => "gcp.gemini",
    path(gemini, stream) => if stream {
        format!("{}?alt=sse", gemini.method_path("streamGenerateContent"))
    } else {
        gemini.method_path("generateContent")
    },
    native_output(gemini) => gemini.native_output,
}

impl HttpModel<GenerateContent> {
    /// Declares whether this model is asked for JSON natively (`responseMimeType` and
    /// `responseJsonSchema`; true by default). With false, structured output falls back to an
    /// output tool — what Gemini 2.x needs when the agent also has tools.
    pub fn with_native_output(self, supported: bool) -> Self {
        self.with_protocol(|gemini| gemini.native_output = supported)
    }

    /// Generation settings added to every request's `generationConfig`, e.g.
    /// `json!({"thinkingConfig": {"includeThoughts": true}})`. Keys of the request itself
    /// (temperature, output limit, output schema) take precedence; a value that is not a JSON
    /// object is ignored.
    pub fn with_generation_config(self, config: Value) -> Self {
        self.with_protocol(|gemini| {
            if let Value::Object(config) = config {
                gemini.generation_config.extend(config);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::completion::CompletionRequest;
    use crate::message::Message;
    use crate::providers::Protocol;
    use serde_json::json;

    fn model(name: &str) -> GeminiModel {
        Gemini::builder()
            .api_key("k")
            .build()
            .expect("a client")
            .completion(name)
    }

    #[test]
    fn paths_name_the_model_or_its_full_resource_name() {
        let flash = model("gemini-2.5-flash");
        assert_eq!(
            flash.protocol().path(false),
            "models/gemini-2.5-flash:generateContent"
        );
        assert_eq!(
            flash.protocol().path(true),
            "models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            model("tunedModels/mine").protocol().path(false),
            "tunedModels/mine:generateContent"
        );
    }

    #[test]
    fn generation_config_is_added_and_the_request_wins() {
        let model = model(GEMINI_2_5_FLASH)
            .with_generation_config(json!({"temperature": 1.0, "thinkingConfig": {"a": 1}}))
            .with_generation_config(json!("not an object"));
        let mut request = CompletionRequest::new(vec![Message::user("hi")]);
        request.temperature = Some(0.5);
        let body = model.request_body(&request, true).expect("a body");
        assert_eq!(
            body["generationConfig"],
            json!({"temperature": 0.5, "thinkingConfig": {"a": 1}})
        );
        assert_eq!(body, model.request_body(&request, false).expect("a body"));
    }

    #[test]
    fn native_output_can_be_turned_off() {
        let mut request = CompletionRequest::new(vec![Message::user("hi")]);
        request.output_schema = Some(json!({"type": "object"}));
        let native = model(GEMINI_2_5_FLASH);
        assert!(native.protocol().supports_native_output());
        let body = native.request_body(&request, false).expect("a body");
        assert_eq!(
            body["generationConfig"]["responseMimeType"],
            "application/json"
        );
        let plain = native.with_native_output(false);
        assert!(!plain.protocol().supports_native_output());
        let body = plain.request_body(&request, false).expect("a body");
        assert!(body.get("generationConfig").is_none(), "{body}");
    }
}
