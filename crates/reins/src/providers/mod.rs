//! Real model providers: OpenAI (Chat Completions and Responses), Anthropic, Gemini, and any
//! server that speaks Chat Completions (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, Groq,
//! DeepSeek, Mistral, Together, Fireworks, xAI, Azure OpenAI).
//!
//! Every provider has the same shape: `Provider::from_env()?` (or `Provider::builder()`, a
//! [`ProviderBuilder`]), then `.completion(model)` gives an [`HttpModel`], a
//! [`CompletionModel`](crate::completion::CompletionModel).
//!
//! A protocol is a codec with no I/O in it; every request goes through one HTTP path that
//! does, the same way for all of them:
//!
//! - **Credentials** ([`Auth`]): the key is an [`ApiKey`] (never in `Debug` output, logs or
//!   errors; a server that echoes it back has it replaced) sent as a bearer token or in the
//!   provider's header. Redirects are not followed ([`Redirects`]), so a credential never
//!   leaves for another server; a redirect is a
//!   [`CompletionError::Redirected`].
//! - **Retries** ([`RetryPolicy`]): HTTP 429, 5xx and connection failures, with exponential
//!   backoff and jitter, honoring `Retry-After`.
//! - **Timeouts** ([`Timeouts`]): connect, first byte, idle between reads, and a total
//!   deadline for the whole call, retries and stream included.
//! - **Limits** ([`Limits`]): a body, an event and a line of a stream; crossing one is a
//!   [`CompletionError::TooLarge`].
//! - **Errors** quote at most 2 KiB of what the server sent; a streamed answer that is not an
//!   event stream, or that breaks, says what was received.

pub mod anthropic;
pub mod gemini;
#[cfg(feature = "local")]
pub mod local;
pub mod openai;
pub mod openai_compatible;
mod transport;

pub use transport::{
    ApiKey, Auth, HttpModel, Limits, Protocol, Provider, ProviderBuilder, ProviderError, Redirects,
    RetryPolicy, StreamDecoder, Timeouts,
};

use crate::completion::{CompletionError, CompletionRequest};
use serde_json::{Map, Value};

/// Internals reachable for the crate's benchmarks only; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use super::transport::{SseDecoder, SseError, SseEvent};
}

/// Context documents as one block of text, the same for every provider.
pub(crate) fn render_documents(request: &CompletionRequest) -> String {
    let mut text = String::from("Context documents:\n");
    for document in &request.documents {
        text.push_str(&format!(
            "<document id=\"{}\">\n{}\n</document>\n",
            document.id, document.text
        ));
    }
    text
}

/// `body` with the request's `additional_params` merged in last (they win, key by key). They
/// must be a JSON object (or null): anything else cannot be merged and is an error, never
/// silently dropped.
pub(crate) fn merge_additional_params(
    mut body: Map<String, Value>,
    request: &CompletionRequest,
) -> Result<Value, CompletionError> {
    match &request.additional_params {
        None | Some(Value::Null) => {}
        Some(Value::Object(params)) => {
            body.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        Some(other) => {
            return Err(CompletionError::InvalidRequest(format!(
                "additional_params must be a JSON object to merge into the request body, got: {}",
                transport::excerpt_json(other)
            )));
        }
    }
    Ok(Value::Object(body))
}

/// Defines a provider client's `builder()` and `from_env()`, the same for every provider.
macro_rules! client_constructors {
    ($client:ident, $key_env:literal, $base_url_env:literal) => {
        impl $client {
            #[doc = concat!("A client configured from `", $key_env, "` and, when set, `", $base_url_env, "`.")]
            pub fn from_env() -> Result<Self, $crate::providers::ProviderError> {
                $crate::providers::ProviderBuilder::from_env()?.build()
            }

            /// A builder, for an explicit key, base URL, headers, timeouts, retries, limits
            /// and redirects, and this provider's own options.
            pub fn builder() -> $crate::providers::ProviderBuilder<$client> {
                $crate::providers::ProviderBuilder::new()
            }
        }
    };
}
pub(crate) use client_constructors;
