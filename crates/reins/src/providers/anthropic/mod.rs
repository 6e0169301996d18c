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
//! Streaming: a `tool_use` block's input streams as its `input_json_delta` fragments, which
//! then are its input. A server that gives the whole input in `content_block_start` and sends
//! no delta (Anthropic itself starts with `"input": {}`) has that input streamed as one
//! fragment of JSON text when the block stops, so the streamed arguments are those the call
//! runs with.
//!
//! Usage: `input_tokens` counts every token read, cache reads and cache writes included
//! (Anthropic reports those separately); the provider's own numbers stay in the raw response.
//!
//! [`CompletionRequest`]: crate::completion::CompletionRequest
//! [`CompletionRequest::additional_params`]: crate::completion::CompletionRequest::additional_params
//! [`Message::System`]: crate::message::Message::System
//! [`AssistantContent::Reasoning`]: crate::message::AssistantContent::Reasoning
//! [`CompletionModel::supports_native_output`]: crate::completion::CompletionModel::supports_native_output

mod request;
mod response;
mod stream;

use super::codec;
use super::{Auth, HttpModel, ProviderBuilder, hosted_client};

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

hosted_client! {
    /// A client for the Anthropic API. Cheap to clone.
    Anthropic {
        options: AnthropicOptions,
        base_url: DEFAULT_BASE_URL,
        auth: Auth::header("x-api-key"),
        key_env: "ANTHROPIC_API_KEY",
        base_url_env: "ANTHROPIC_BASE_URL",
        headers: AnthropicOptions::headers,
    }
}

/// Builds an [`Anthropic`] client: [`ProviderBuilder`] plus the API version and beta
/// features. The key is sent as the `x-api-key` header.
pub type AnthropicBuilder = ProviderBuilder<Anthropic>;

/// The options of an [`AnthropicBuilder`].
#[doc(hidden)]
#[derive(Debug, Clone, Default)]
pub struct AnthropicOptions {
    version: Option<String>,
    betas: Vec<String>,
}

impl AnthropicOptions {
    /// The `anthropic-version` header, and `anthropic-beta` when features are enabled.
    fn headers(&self) -> Vec<(&'static str, String)> {
        let version = self.version.as_deref().unwrap_or(DEFAULT_VERSION);
        let mut headers = vec![("anthropic-version", version.to_owned())];
        if !self.betas.is_empty() {
            headers.push(("anthropic-beta", self.betas.join(",")));
        }
        headers
    }
}

impl Anthropic {
    /// A model served through the Messages API, e.g. [`CLAUDE_SONNET_4_5`].
    pub fn completion(&self, model: impl Into<String>) -> AnthropicModel {
        self.model(Messages {
            model: model.into(),
            default_max_tokens: DEFAULT_MAX_TOKENS,
        })
    }
}

impl ProviderBuilder<Anthropic> {
    /// The `anthropic-version` header (default [`DEFAULT_VERSION`]).
    pub fn version(self, version: impl Into<String>) -> Self {
        self.with_options(|options| options.version = Some(version.into()))
    }

    /// Enables a beta feature: the names given are sent, comma-separated, in the
    /// `anthropic-beta` header.
    pub fn beta(self, feature: impl Into<String>) -> Self {
        self.with_options(|options| options.betas.push(feature.into()))
    }
}

/// A model served through Anthropic's Messages API.
pub type AnthropicModel = HttpModel<Messages>;

/// The Messages protocol for one model (see [`AnthropicModel`]).
#[derive(Debug, Clone)]
pub struct Messages {
    model: String,
    default_max_tokens: u64,
}

// Native structured output is never asked for: agents use an output tool (see the module
// docs), and `request::body` refuses a request with an output schema.
codec::protocol! {
    Messages => request::body, response::parse, stream::MessagesStreamDecoder;
    provider(_messages) => "anthropic",
    path(_messages, _stream) => "v1/messages".to_owned(),
    native_output(_messages) => false,
}

impl HttpModel<Messages> {
    /// The `max_tokens` sent when a request sets none (default [`DEFAULT_MAX_TOKENS`]; the API
    /// requires a limit on every request).
    pub fn with_default_max_tokens(self, max_tokens: u64) -> Self {
        self.with_protocol(|messages| messages.default_max_tokens = max_tokens)
    }
}
