//! OpenAI: the Chat Completions API ([`OpenAI::completion`]) and the Responses API
//! ([`OpenAI::responses`]).

mod chat;
pub mod responses;

pub use chat::{Chat, ChatCompletionsModel, ChatQuirks};
pub(crate) use chat::{finish_reason, tool_choice};
pub use responses::ResponsesModel;

use super::{Auth, ProviderBuilder, hosted_client};

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

/// OpenAI's `gen_ai.provider.name` in telemetry.
pub(crate) const PROVIDER_NAME: &str = "openai";

/// The default base URL of the OpenAI API.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

hosted_client! {
    /// A client for the OpenAI API. Cheap to clone.
    OpenAI {
        options: (),
        base_url: DEFAULT_BASE_URL,
        auth: Auth::Bearer,
        key_env: "OPENAI_API_KEY",
        base_url_env: "OPENAI_BASE_URL",
    }
}

/// Builds an [`OpenAI`] client: [`ProviderBuilder`] plus the organization and project
/// headers.
pub type OpenAIBuilder = ProviderBuilder<OpenAI>;

impl OpenAI {
    /// A model speaking the Chat Completions API.
    pub fn completion(&self, model: impl Into<String>) -> ChatCompletionsModel {
        self.model(Chat::new(model.into(), ChatQuirks::OPENAI, PROVIDER_NAME))
    }

    /// A model speaking the Responses API.
    pub fn responses(&self, model: impl Into<String>) -> ResponsesModel {
        self.model(responses::Responses::new(model.into()))
    }
}

impl ProviderBuilder<OpenAI> {
    /// The `OpenAI-Organization` header.
    pub fn organization(self, organization: impl Into<String>) -> Self {
        self.header("OpenAI-Organization", organization)
    }

    /// The `OpenAI-Project` header.
    pub fn project(self, project: impl Into<String>) -> Self {
        self.header("OpenAI-Project", project)
    }
}
