//! The Chat Completions protocol (`POST {base}/chat/completions`), spoken by OpenAI and by
//! every compatible server; the differences between servers are [`ChatQuirks`].

mod request;
mod response;
mod stream;

use crate::providers::codec;
use crate::providers::transport::HttpModel;

pub(crate) use request::tool_choice;
pub(crate) use response::finish_reason;

/// A model served through the Chat Completions API.
pub type ChatCompletionsModel = HttpModel<Chat>;

/// What servers that speak Chat Completions do differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChatQuirks {
    /// The body field of the output limit: `max_completion_tokens` (OpenAI, Azure) or
    /// `max_tokens` (most other servers).
    pub max_tokens_field: &'static str,
    /// An assistant message with tool calls and no text carries `content: ""` instead of
    /// `null` (llama.cpp's server rejects null).
    pub empty_content_as_text: bool,
    /// Whether `response_format: json_schema` is understood (structured output falls back to
    /// an output tool when not).
    pub native_output: bool,
    /// Whether a streamed request asks for usage with `stream_options.include_usage` (servers
    /// that reject unknown fields, or report usage anyway, are not sent it).
    pub stream_usage_option: bool,
}

impl ChatQuirks {
    /// OpenAI's own API (and Azure OpenAI).
    pub const OPENAI: ChatQuirks = ChatQuirks {
        max_tokens_field: "max_completion_tokens",
        empty_content_as_text: false,
        native_output: true,
        stream_usage_option: true,
    };

    /// A server that speaks Chat Completions and nothing more is known of it.
    pub const COMPATIBLE: ChatQuirks = ChatQuirks {
        max_tokens_field: "max_tokens",
        empty_content_as_text: true,
        native_output: false,
        stream_usage_option: true,
    };

    /// These quirks with native structured output on or off.
    pub const fn with_native_output(mut self, supported: bool) -> Self {
        self.native_output = supported;
        self
    }

    /// These quirks with the stream usage option on or off.
    pub const fn with_stream_usage_option(mut self, sent: bool) -> Self {
        self.stream_usage_option = sent;
        self
    }

    /// These quirks with another output-limit field.
    pub const fn with_max_tokens_field(mut self, field: &'static str) -> Self {
        self.max_tokens_field = field;
        self
    }
}

/// The Chat Completions protocol for one model (see [`ChatCompletionsModel`]).
#[derive(Debug, Clone)]
pub struct Chat {
    model: String,
    quirks: ChatQuirks,
    /// The service's `gen_ai.provider.name`: OpenAI's, or that of a compatible server.
    provider: &'static str,
}

impl Chat {
    pub(crate) fn new(model: String, quirks: ChatQuirks, provider: &'static str) -> Self {
        Chat {
            model,
            quirks,
            provider,
        }
    }
}

codec::protocol! {
    Chat => request::body, response::parse, stream::ChatStreamDecoder;
    provider(chat) => chat.provider,
    path(_chat, _stream) => "chat/completions".to_owned(),
    native_output(chat) => chat.quirks.native_output,
}

impl HttpModel<Chat> {
    /// Declares whether the server supports `response_format: json_schema` (true by default
    /// for OpenAI; structured output falls back to an output tool when false).
    pub fn with_native_output(self, supported: bool) -> Self {
        self.with_protocol(|chat| chat.quirks.native_output = supported)
    }

    /// The server's quirks this model is sent with.
    pub fn quirks(&self) -> ChatQuirks {
        self.protocol().quirks
    }
}
