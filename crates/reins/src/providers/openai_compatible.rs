//! Any server that speaks the Chat Completions API: Ollama's `/v1`, vLLM, llama.cpp's server,
//! LM Studio, OpenRouter, Groq, DeepSeek, Together, Mistral.
//!
//! ```no_run
//! use reins::providers::openai_compatible::OpenAICompatible;
//!
//! # fn main() -> Result<(), reins::providers::ProviderError> {
//! let local = OpenAICompatible::ollama()?.completion("qwen3:0.6b");
//! let hosted = OpenAICompatible::groq_from_env()?.completion("llama-3.3-70b-versatile");
//! # let _ = (local, hosted);
//! # Ok(())
//! # }
//! ```

use super::http::{ApiKey, HttpSettings, ProviderError, RetryPolicy, Timeouts, required_env};
use super::openai::{ChatCompletionsModel, ChatDialect, Shared};
use std::sync::Arc;

/// A client for a server that speaks Chat Completions. Cheap to clone.
///
/// Differences from OpenAI handled for every such server: the output limit is sent as
/// `max_tokens`, and an assistant message without text carries `content: ""` instead of
/// null (llama.cpp's server rejects null).
#[derive(Clone, Debug)]
pub struct OpenAICompatible {
    inner: Arc<Shared>,
    native_output: bool,
}

impl OpenAICompatible {
    /// A builder for a server at `base_url` (e.g. `http://localhost:8000/v1`).
    pub fn builder(base_url: impl Into<String>) -> OpenAICompatibleBuilder {
        OpenAICompatibleBuilder {
            base_url: base_url.into(),
            api_key: None,
            headers: Vec::new(),
            timeouts: None,
            retry: None,
            native_output: false,
        }
    }

    /// Ollama on this machine (`http://localhost:11434/v1`).
    pub fn ollama() -> Result<Self, ProviderError> {
        Self::builder("http://localhost:11434/v1").build()
    }

    /// llama.cpp's server on this machine (`http://localhost:8080/v1`).
    pub fn llama_cpp() -> Result<Self, ProviderError> {
        Self::builder("http://localhost:8080/v1").build()
    }

    /// LM Studio on this machine (`http://localhost:1234/v1`).
    pub fn lm_studio() -> Result<Self, ProviderError> {
        Self::builder("http://localhost:1234/v1").build()
    }

    /// vLLM's OpenAI-compatible server at `base_url`.
    pub fn vllm(base_url: impl Into<String>) -> Result<Self, ProviderError> {
        Self::builder(base_url).with_native_output(true).build()
    }

    /// OpenRouter, keyed by `OPENROUTER_API_KEY`.
    pub fn openrouter_from_env() -> Result<Self, ProviderError> {
        Self::hosted("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY")
    }

    /// Groq, keyed by `GROQ_API_KEY`.
    pub fn groq_from_env() -> Result<Self, ProviderError> {
        Self::hosted("https://api.groq.com/openai/v1", "GROQ_API_KEY")
    }

    /// DeepSeek, keyed by `DEEPSEEK_API_KEY`.
    pub fn deepseek_from_env() -> Result<Self, ProviderError> {
        Self::hosted("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY")
    }

    /// Together, keyed by `TOGETHER_API_KEY`.
    pub fn together_from_env() -> Result<Self, ProviderError> {
        Self::hosted("https://api.together.xyz/v1", "TOGETHER_API_KEY")
    }

    /// Mistral, keyed by `MISTRAL_API_KEY`.
    pub fn mistral_from_env() -> Result<Self, ProviderError> {
        Self::hosted("https://api.mistral.ai/v1", "MISTRAL_API_KEY")
    }

    fn hosted(base_url: &str, key_variable: &'static str) -> Result<Self, ProviderError> {
        Self::builder(base_url)
            .api_key(required_env(key_variable)?)
            .build()
    }

    /// A model served by this server.
    pub fn completion(&self, model: impl Into<String>) -> ChatCompletionsModel {
        ChatCompletionsModel::new(
            Arc::clone(&self.inner),
            model.into(),
            ChatDialect::Compatible,
        )
        .with_native_output(self.native_output)
    }
}

/// Builds an [`OpenAICompatible`] client.
#[derive(Debug)]
pub struct OpenAICompatibleBuilder {
    base_url: String,
    api_key: Option<ApiKey>,
    headers: Vec<(String, String)>,
    timeouts: Option<Timeouts>,
    retry: Option<RetryPolicy>,
    native_output: bool,
}

impl OpenAICompatibleBuilder {
    /// The API key, when the server needs one (sent as a bearer token).
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(ApiKey::new(key));
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

    /// Whether the server supports `response_format: json_schema` (false by default).
    pub fn with_native_output(mut self, supported: bool) -> Self {
        self.native_output = supported;
        self
    }

    /// Builds the client.
    pub fn build(self) -> Result<OpenAICompatible, ProviderError> {
        let mut settings = HttpSettings::new(self.base_url, self.api_key);
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
        Ok(OpenAICompatible {
            inner: Arc::new(Shared { settings, client }),
            native_output: self.native_output,
        })
    }
}
