//! OpenAI: the Chat Completions API ([`OpenAI::completion`]) and the Responses API
//! ([`OpenAI::responses`]).

mod chat;
pub mod responses;

pub use chat::ChatCompletionsModel;
pub(crate) use chat::ChatDialect;
pub use responses::ResponsesModel;

use super::http::{
    ApiKey, HttpSettings, ProviderError, RetryPolicy, Timeouts, optional_env, required_env,
};
use std::sync::Arc;

/// `gpt-5.5`.
pub const GPT_5_5: &str = "gpt-5.5";
/// `gpt-5`.
pub const GPT_5: &str = "gpt-5";
/// `gpt-5-mini`.
pub const GPT_5_MINI: &str = "gpt-5-mini";
/// `gpt-5-nano`.
pub const GPT_5_NANO: &str = "gpt-5-nano";
/// `gpt-4.1`.
pub const GPT_4_1: &str = "gpt-4.1";
/// `gpt-4.1-mini`.
pub const GPT_4_1_MINI: &str = "gpt-4.1-mini";
/// `gpt-4o`.
pub const GPT_4O: &str = "gpt-4o";
/// `gpt-4o-mini`.
pub const GPT_4O_MINI: &str = "gpt-4o-mini";
/// `o3`.
pub const O3: &str = "o3";
/// `o4-mini`.
pub const O4_MINI: &str = "o4-mini";

/// The default base URL of the OpenAI API.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// A client for the OpenAI API. Cheap to clone.
#[derive(Clone, Debug)]
pub struct OpenAI {
    pub(crate) inner: Arc<Shared>,
}

#[derive(Debug)]
pub(crate) struct Shared {
    pub settings: HttpSettings,
    pub client: reqwest::Client,
}

impl OpenAI {
    /// A client configured from `OPENAI_API_KEY` and, when set, `OPENAI_BASE_URL`.
    pub fn from_env() -> Result<Self, ProviderError> {
        let mut builder = OpenAI::builder().api_key(required_env("OPENAI_API_KEY")?);
        if let Some(base_url) = optional_env("OPENAI_BASE_URL") {
            builder = builder.base_url(base_url);
        }
        builder.build()
    }

    /// A builder, for an explicit key, base URL, headers, organization, project, timeouts and
    /// retries.
    pub fn builder() -> OpenAIBuilder {
        OpenAIBuilder::default()
    }

    /// A model speaking the Chat Completions API.
    pub fn completion(&self, model: impl Into<String>) -> ChatCompletionsModel {
        ChatCompletionsModel::new(Arc::clone(&self.inner), model.into(), ChatDialect::OpenAI)
    }

    /// A model speaking the Responses API.
    pub fn responses(&self, model: impl Into<String>) -> ResponsesModel {
        ResponsesModel::new(Arc::clone(&self.inner), model.into())
    }
}

/// Builds an [`OpenAI`] client.
#[derive(Debug, Default)]
pub struct OpenAIBuilder {
    api_key: Option<ApiKey>,
    base_url: Option<String>,
    headers: Vec<(String, String)>,
    organization: Option<String>,
    project: Option<String>,
    timeouts: Option<Timeouts>,
    retry: Option<RetryPolicy>,
}

impl OpenAIBuilder {
    /// The API key.
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

    /// The `OpenAI-Organization` header.
    pub fn organization(mut self, organization: impl Into<String>) -> Self {
        self.organization = Some(organization.into());
        self
    }

    /// The `OpenAI-Project` header.
    pub fn project(mut self, project: impl Into<String>) -> Self {
        self.project = Some(project.into());
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

    /// Builds the client. Without a key, requests are sent without authorization.
    pub fn build(self) -> Result<OpenAI, ProviderError> {
        let base_url = self.base_url.unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let mut settings = HttpSettings::new(base_url, self.api_key);
        if let Some(organization) = &self.organization {
            settings.add_header("OpenAI-Organization", organization)?;
        }
        if let Some(project) = &self.project {
            settings.add_header("OpenAI-Project", project)?;
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
        Ok(OpenAI {
            inner: Arc::new(Shared { settings, client }),
        })
    }
}
