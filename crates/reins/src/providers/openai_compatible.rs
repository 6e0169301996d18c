//! Any server that speaks the Chat Completions API, with presets for the services users run:
//! Ollama, vLLM, llama.cpp's server, LM Studio, OpenRouter, Groq, DeepSeek, Mistral, Together,
//! Fireworks, xAI, and Azure OpenAI. Switching service is one line:
//!
//! ```no_run
//! use reins::providers::openai_compatible::OpenAICompatible;
//!
//! # fn main() -> Result<(), reins::providers::ProviderError> {
//! let local = OpenAICompatible::ollama()?.completion("qwen3:0.6b");
//! let hosted = OpenAICompatible::groq_from_env()?.completion("llama-3.3-70b-versatile");
//! let azure = OpenAICompatible::azure_from_env("my-gpt-deployment")?.completion("gpt-4.1");
//! # let _ = (local, hosted, azure);
//! # Ok(())
//! # }
//! ```
//!
//! Each preset is a [`Service`]: its base URL, key variable, [`ChatQuirks`] and the provider
//! name its traces carry. A preset's builder ([`OpenAICompatible::service`]) can still change
//! anything, e.g. point at a proxy.
//!
//! # What reins accepts from a compatible server
//!
//! Servers differ from OpenAI in more than their [`ChatQuirks`]. A tool call's `arguments`,
//! JSON text in OpenAI's protocols, is accepted as a JSON object too (some servers send one),
//! by Chat Completions and by the Responses API
//! ([`OpenAI::responses`](super::openai::OpenAI::responses) with the server's base URL),
//! streamed or not: the call runs with those arguments, and a streamed call streams them as
//! their JSON text.
//!
//! # The provider name in traces
//!
//! A model's spans carry `gen_ai.provider.name`. The OpenTelemetry GenAI conventions name some
//! of these services, and their presets use those names: `groq`, `deepseek`, `mistral_ai`,
//! `x_ai`, and `azure.ai.openai` for [`OpenAICompatible::azure`]. The conventions allow other
//! values, so the other presets name themselves in lowercase (`ollama`, `llama.cpp`,
//! `lm_studio`, `vllm`, `openrouter`, `together`, `fireworks`), and a server reins knows nothing
//! of ([`OpenAICompatible::builder`]) is [`COMPATIBLE_PROVIDER`]: none of them is OpenAI, and
//! traces that said `openai` would mix their calls with OpenAI's in every view and metric keyed
//! by provider. [`ProviderBuilder::provider_name`] sets another.

use super::openai::{Chat, ChatCompletionsModel, ChatQuirks};
use super::transport::{HttpClient, Provider, ProviderDefaults, required_env, sealed::Sealed};
use super::{Auth, HttpModel, ProviderBuilder, ProviderError};
use std::sync::Arc;

/// A service that speaks Chat Completions: where it is, how it is keyed, what it does
/// differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Service {
    /// Its name, for messages.
    pub name: &'static str,
    /// The base URL (requests go to `{base_url}/chat/completions`).
    pub base_url: &'static str,
    /// The environment variable holding its key, for services that need one.
    pub key_env: Option<&'static str>,
    /// What it does differently from OpenAI.
    pub quirks: ChatQuirks,
    /// Its `gen_ai.provider.name` in traces (see the [module docs](self)); `None` reports
    /// [`COMPATIBLE_PROVIDER`].
    pub provider: Option<&'static str>,
}

/// The `gen_ai.provider.name` of a server that speaks Chat Completions and has no name of its
/// own in reins (a base URL given to [`OpenAICompatible::builder`]).
pub const COMPATIBLE_PROVIDER: &str = "openai_compatible";

/// Ollama on this machine.
pub const OLLAMA: Service = local("Ollama", "ollama", "http://localhost:11434/v1", true);
/// llama.cpp's `llama-server` on this machine.
pub const LLAMA_CPP: Service = local("llama.cpp", "llama.cpp", "http://localhost:8080/v1", false);
/// LM Studio on this machine.
pub const LM_STUDIO: Service = local("LM Studio", "lm_studio", "http://localhost:1234/v1", true);
/// vLLM's OpenAI-compatible server on this machine (structured output natively).
pub const VLLM: Service = local("vLLM", "vllm", "http://localhost:8000/v1", true);
/// OpenRouter.
pub const OPENROUTER: Service = hosted(
    "OpenRouter",
    "openrouter",
    "https://openrouter.ai/api/v1",
    "OPENROUTER_API_KEY",
    ChatQuirks::COMPATIBLE.with_native_output(true),
);
/// Groq (`max_completion_tokens`, as OpenAI).
pub const GROQ: Service = hosted(
    "Groq",
    "groq",
    "https://api.groq.com/openai/v1",
    "GROQ_API_KEY",
    ChatQuirks::COMPATIBLE.with_max_tokens_field("max_completion_tokens"),
);
/// DeepSeek (JSON mode only, no JSON schema: structured output uses an output tool).
pub const DEEPSEEK: Service = hosted(
    "DeepSeek",
    "deepseek",
    "https://api.deepseek.com/v1",
    "DEEPSEEK_API_KEY",
    ChatQuirks::COMPATIBLE,
);
/// Mistral (it rejects `stream_options`, and reports usage in the last chunk anyway).
pub const MISTRAL: Service = hosted(
    "Mistral",
    "mistral_ai",
    "https://api.mistral.ai/v1",
    "MISTRAL_API_KEY",
    ChatQuirks::COMPATIBLE
        .with_native_output(true)
        .with_stream_usage_option(false),
);
/// Together AI.
pub const TOGETHER: Service = hosted(
    "Together",
    "together",
    "https://api.together.xyz/v1",
    "TOGETHER_API_KEY",
    ChatQuirks::COMPATIBLE.with_native_output(true),
);
/// Fireworks AI.
pub const FIREWORKS: Service = hosted(
    "Fireworks",
    "fireworks",
    "https://api.fireworks.ai/inference/v1",
    "FIREWORKS_API_KEY",
    ChatQuirks::COMPATIBLE.with_native_output(true),
);
/// xAI (Grok).
pub const XAI: Service = hosted(
    "xAI",
    "x_ai",
    "https://api.x.ai/v1",
    "XAI_API_KEY",
    ChatQuirks::COMPATIBLE.with_native_output(true),
);

/// Azure OpenAI's `gen_ai.provider.name`, as the GenAI conventions spell it.
const AZURE_PROVIDER: &str = "azure.ai.openai";

/// The Azure OpenAI `api-version` sent when none is chosen.
pub const AZURE_API_VERSION: &str = "2024-10-21";

const fn local(
    name: &'static str,
    provider: &'static str,
    base_url: &'static str,
    native_output: bool,
) -> Service {
    Service {
        name,
        base_url,
        key_env: None,
        quirks: ChatQuirks::COMPATIBLE.with_native_output(native_output),
        provider: Some(provider),
    }
}

const fn hosted(
    name: &'static str,
    provider: &'static str,
    base_url: &'static str,
    key_env: &'static str,
    quirks: ChatQuirks,
) -> Service {
    Service {
        name,
        base_url,
        key_env: Some(key_env),
        quirks,
        provider: Some(provider),
    }
}

/// A client for a server that speaks Chat Completions. Cheap to clone.
#[derive(Clone, Debug)]
pub struct OpenAICompatible {
    client: Arc<HttpClient>,
    quirks: ChatQuirks,
    provider: &'static str,
}

/// Builds an [`OpenAICompatible`] client: [`ProviderBuilder`] plus the server's quirks.
pub type OpenAICompatibleBuilder = ProviderBuilder<OpenAICompatible>;

/// The options of an [`OpenAICompatibleBuilder`].
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct CompatibleOptions {
    quirks: ChatQuirks,
    provider: &'static str,
}

impl Default for CompatibleOptions {
    fn default() -> Self {
        CompatibleOptions {
            quirks: ChatQuirks::COMPATIBLE,
            provider: COMPATIBLE_PROVIDER,
        }
    }
}

impl OpenAICompatible {
    /// A builder for a server at `base_url` (e.g. `http://localhost:8000/v1`), with the quirks
    /// of an unknown server ([`ChatQuirks::COMPATIBLE`]).
    pub fn builder(base_url: impl Into<String>) -> OpenAICompatibleBuilder {
        ProviderBuilder::new().base_url(base_url)
    }

    /// A builder for `service`: its base URL, quirks and provider name (its key is not read;
    /// see [`from_service`](Self::from_service)).
    pub fn service(service: &Service) -> OpenAICompatibleBuilder {
        ProviderBuilder::new()
            .base_url(service.base_url)
            .quirks(service.quirks)
            .provider_name(service.provider.unwrap_or(COMPATIBLE_PROVIDER))
    }

    /// A client for `service`, keyed from its key variable when it has one.
    pub fn from_service(service: &Service) -> Result<Self, ProviderError> {
        let builder = Self::service(service);
        match service.key_env {
            Some(variable) => builder.api_key(required_env(variable)?).build(),
            None => builder.build(),
        }
    }

    /// Ollama on this machine ([`OLLAMA`]).
    pub fn ollama() -> Result<Self, ProviderError> {
        Self::from_service(&OLLAMA)
    }

    /// llama.cpp's server on this machine ([`LLAMA_CPP`]).
    pub fn llama_cpp() -> Result<Self, ProviderError> {
        Self::from_service(&LLAMA_CPP)
    }

    /// LM Studio on this machine ([`LM_STUDIO`]).
    pub fn lm_studio() -> Result<Self, ProviderError> {
        Self::from_service(&LM_STUDIO)
    }

    /// vLLM's server at `base_url` ([`VLLM`]'s quirks).
    pub fn vllm(base_url: impl Into<String>) -> Result<Self, ProviderError> {
        Self::service(&VLLM).base_url(base_url).build()
    }

    /// OpenRouter, keyed by `OPENROUTER_API_KEY`.
    pub fn openrouter_from_env() -> Result<Self, ProviderError> {
        Self::from_service(&OPENROUTER)
    }

    /// Groq, keyed by `GROQ_API_KEY`.
    pub fn groq_from_env() -> Result<Self, ProviderError> {
        Self::from_service(&GROQ)
    }

    /// DeepSeek, keyed by `DEEPSEEK_API_KEY`.
    pub fn deepseek_from_env() -> Result<Self, ProviderError> {
        Self::from_service(&DEEPSEEK)
    }

    /// Mistral, keyed by `MISTRAL_API_KEY`.
    pub fn mistral_from_env() -> Result<Self, ProviderError> {
        Self::from_service(&MISTRAL)
    }

    /// Together, keyed by `TOGETHER_API_KEY`.
    pub fn together_from_env() -> Result<Self, ProviderError> {
        Self::from_service(&TOGETHER)
    }

    /// Fireworks, keyed by `FIREWORKS_API_KEY`.
    pub fn fireworks_from_env() -> Result<Self, ProviderError> {
        Self::from_service(&FIREWORKS)
    }

    /// xAI, keyed by `XAI_API_KEY`.
    pub fn xai_from_env() -> Result<Self, ProviderError> {
        Self::from_service(&XAI)
    }

    /// Azure OpenAI: a deployment of the resource at `endpoint`
    /// (`https://{resource}.openai.azure.com`). Requests go to
    /// `{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=…`
    /// ([`AZURE_API_VERSION`] unless `.query("api-version", …)` says otherwise) with the key
    /// in the `api-key` header, and OpenAI's own quirks; its traces name the provider
    /// `azure.ai.openai`.
    pub fn azure(endpoint: &str, deployment: &str) -> OpenAICompatibleBuilder {
        let base_url = format!(
            "{}/openai/deployments/{}",
            endpoint.trim_end_matches('/'),
            deployment
        );
        ProviderBuilder::new()
            .base_url(base_url)
            .auth(Auth::header("api-key"))
            .query("api-version", AZURE_API_VERSION)
            .quirks(ChatQuirks::OPENAI)
            .provider_name(AZURE_PROVIDER)
    }

    /// Azure OpenAI from `AZURE_OPENAI_ENDPOINT` and `AZURE_OPENAI_API_KEY` (and
    /// `OPENAI_API_VERSION` when set): the deployment named `deployment`.
    pub fn azure_from_env(deployment: &str) -> Result<Self, ProviderError> {
        let endpoint = required_env("AZURE_OPENAI_ENDPOINT")?;
        let mut builder =
            Self::azure(&endpoint, deployment).api_key(required_env("AZURE_OPENAI_API_KEY")?);
        if let Some(version) = super::transport::optional_env("OPENAI_API_VERSION") {
            builder = builder.query("api-version", version);
        }
        builder.build()
    }

    /// A model served by this server.
    pub fn completion(&self, model: impl Into<String>) -> ChatCompletionsModel {
        HttpModel::new(
            Arc::clone(&self.client),
            Chat::new(model.into(), self.quirks, self.provider),
        )
    }
}

impl ProviderBuilder<OpenAICompatible> {
    /// The server's quirks (default [`ChatQuirks::COMPATIBLE`], or the preset's).
    pub fn quirks(self, quirks: ChatQuirks) -> Self {
        self.with_options(|options| options.quirks = quirks)
    }

    /// Whether the server supports `response_format: json_schema`.
    pub fn with_native_output(self, supported: bool) -> Self {
        self.with_options(|options| options.quirks.native_output = supported)
    }

    /// The `gen_ai.provider.name` its models' spans carry (default [`COMPATIBLE_PROVIDER`],
    /// or the preset's): the conventions' name where they have one for the service
    /// (`perplexity`, say), else a lowercase name of your own.
    pub fn provider_name(self, name: &'static str) -> Self {
        self.with_options(|options| options.provider = name)
    }
}

impl Sealed for OpenAICompatible {}

impl Provider for OpenAICompatible {
    type Options = CompatibleOptions;
    const DEFAULTS: ProviderDefaults = ProviderDefaults {
        base_url: None,
        auth: || Auth::Bearer,
        key_env: "OPENAI_API_KEY",
        base_url_env: "OPENAI_BASE_URL",
    };

    fn from_client(client: Arc<HttpClient>, options: CompatibleOptions) -> Self {
        OpenAICompatible {
            client,
            quirks: options.quirks,
            provider: options.provider,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::completion::CompletionModel;
    use crate::providers::openai::OpenAI;

    /// The `gen_ai.provider.name` of a model served through `builder`'s client.
    fn provider_of(builder: OpenAICompatibleBuilder) -> String {
        let client = builder
            .api_key("test-key")
            .build()
            .expect("the client builds");
        let model = client.completion("some-model");
        model.provider_name().unwrap_or("(none)").to_owned()
    }

    #[test]
    fn presets_name_their_provider_as_the_genai_conventions_do_and_none_claims_openai() {
        let named = [
            (GROQ, "groq"),
            (DEEPSEEK, "deepseek"),
            (MISTRAL, "mistral_ai"),
            (XAI, "x_ai"),
            (OLLAMA, "ollama"),
            (LLAMA_CPP, "llama.cpp"),
            (LM_STUDIO, "lm_studio"),
            (VLLM, "vllm"),
            (OPENROUTER, "openrouter"),
            (TOGETHER, "together"),
            (FIREWORKS, "fireworks"),
        ];
        for (service, expected) in named {
            assert_eq!(service.provider, Some(expected), "{}", service.name);
            assert_eq!(
                provider_of(OpenAICompatible::service(&service)),
                expected,
                "{}",
                service.name
            );
        }
        let azure = OpenAICompatible::azure("https://r.openai.azure.com", "d");
        assert_eq!(provider_of(azure), "azure.ai.openai");
        let unknown = OpenAICompatible::builder("http://127.0.0.1:9/v1");
        assert_eq!(provider_of(unknown), COMPATIBLE_PROVIDER);
        let unnamed = Service {
            provider: None,
            ..VLLM
        };
        assert_eq!(
            provider_of(OpenAICompatible::service(&unnamed)),
            COMPATIBLE_PROVIDER
        );
        let renamed =
            OpenAICompatible::builder("http://127.0.0.1:9/v1").provider_name("perplexity");
        assert_eq!(provider_of(renamed), "perplexity");

        let openai = OpenAI::builder()
            .api_key("test-key")
            .build()
            .expect("builds");
        assert_eq!(
            openai.completion("gpt-test").provider_name(),
            Some("openai")
        );
        assert_eq!(openai.responses("gpt-test").provider_name(), Some("openai"));
    }
}
