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
//!   errors; a server that echoes it back, in an error or in an answer — streamed fragments
//!   included, even split across them — has it replaced, as have header and query values
//!   that look like credentials; in an error also percent-encoded, as a URL echoes it) sent
//!   as a bearer token or in the
//!   provider's header. Redirects are not followed ([`Redirects`]), so a credential never
//!   leaves for another server; a redirect is a
//!   [`CompletionError::Redirected`].
//! - **Retries** ([`RetryPolicy`]): HTTP 429, 5xx and connection failures, with exponential
//!   backoff and jitter, honoring `Retry-After`; also a first-byte timeout, after which the
//!   server may still answer the first request: the call may be made (and billed) twice.
//! - **Timeouts** ([`Timeouts`]): connect, first byte, idle between reads, and a total
//!   deadline for the whole call, retries and stream included.
//! - **Limits** ([`Limits`]): a body, an event and a line of a stream; crossing one is a
//!   [`CompletionError::TooLarge`].
//! - **Errors** quote at most 2 KiB of what the server sent (control sequences as text, see
//!   [`crate::text`]); a streamed answer that is not an event stream, or that breaks, says
//!   what was received. A stream that ends before the server said why the answer ended (a
//!   Chat `[DONE]` before any `finish_reason`, no Anthropic `message_stop` or one before any
//!   `stop_reason`, no Responses
//!   `response.completed`, no Gemini `finishReason`) is a cut one: a
//!   [`CompletionError::Decode`](crate::completion::CompletionError::Decode), never a
//!   partial answer.
//!
//! ```
//! use reins::agent::{AgentBuilder, PromptError};
//! use reins::providers::openai::{self, OpenAI};
//! use reins::providers::{RetryPolicy, Timeouts};
//! use std::time::Duration;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), reins::providers::ProviderError> {
//! let client = OpenAI::builder()
//!     .api_key("sk-example-not-a-real-key")
//!     // Nothing listens here: the call below fails at once.
//!     .base_url("http://127.0.0.1:9/v1")
//!     .retry(RetryPolicy::none())
//!     .timeouts(Timeouts {
//!         total: Duration::from_secs(30),
//!         ..Timeouts::default()
//!     })
//!     .build()?;
//! // The key shows nowhere: not in `Debug` output, not in an error.
//! assert!(!format!("{client:?}").contains("sk-example"));
//!
//! let agent = AgentBuilder::new(client.completion(openai::GPT_5_MINI)).build();
//! let error = agent.prompt("Hello?").await.unwrap_err();
//! assert!(matches!(error, PromptError::Completion { .. }), "{error:?}");
//! assert!(!format!("{error} {error:?}").contains("sk-example"));
//! # Ok(())
//! # }
//! ```
//!
//! [`CompletionError::Redirected`]: crate::completion::CompletionError::Redirected
//! [`CompletionError::TooLarge`]: crate::completion::CompletionError::TooLarge

pub mod anthropic;
mod codec;
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

/// The embedded model renders context documents as every hosted protocol does.
#[cfg(feature = "local")]
pub(crate) use codec::render_documents;

/// Internals reachable for the crate's benchmarks only; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use super::transport::{EchoFilter, Secrets, SseDecoder, SseError, SseEvent};
}

/// Defines a hosted service's client: the struct (a connection shared by its models), its
/// [`Provider`] implementation from the service's defaults, and its `builder()` and
/// `from_env()`; the same for every service but for these settings. `headers`, when given,
/// writes the headers the service's options add to every request.
macro_rules! hosted_client {
    (
        $(#[$doc:meta])*
        $client:ident {
            options: $options:ty,
            base_url: $base_url:expr,
            auth: $auth:expr,
            key_env: $key_env:literal,
            base_url_env: $base_url_env:literal,
            $(headers: $headers:expr,)?
        }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $client {
            client: std::sync::Arc<$crate::providers::transport::HttpClient>,
        }

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

            /// A model of this service speaking `protocol`, over this client's connection.
            fn model<P: $crate::providers::Protocol>(
                &self,
                protocol: P,
            ) -> $crate::providers::HttpModel<P> {
                $crate::providers::HttpModel::new(std::sync::Arc::clone(&self.client), protocol)
            }
        }

        impl $crate::providers::transport::sealed::Sealed for $client {}

        impl $crate::providers::Provider for $client {
            type Options = $options;
            const DEFAULTS: $crate::providers::transport::ProviderDefaults =
                $crate::providers::transport::ProviderDefaults {
                    base_url: Some($base_url),
                    auth: || $auth,
                    key_env: $key_env,
                    base_url_env: $base_url_env,
                };

            $(
                fn headers(options: &$options) -> Vec<(&'static str, String)> {
                    ($headers)(options)
                }
            )?

            fn from_client(
                client: std::sync::Arc<$crate::providers::transport::HttpClient>,
                _: $options,
            ) -> Self {
                $client { client }
            }
        }
    };
}
pub(crate) use hosted_client;
