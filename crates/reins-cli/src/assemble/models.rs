//! The agent file's models, built once and shared by every agent built from them.

use crate::config::model_timeouts::timeouts_of;
use crate::config::{LoadedAgent, ModelConfig};
use reins::completion::BoxedModel;
use reins::providers::anthropic::Anthropic;
use reins::providers::gemini::Gemini;
use reins::providers::openai::OpenAI;
use reins::providers::openai_compatible::OpenAICompatible;
use reins::providers::{Provider, ProviderBuilder};

/// `provider/name` (or the GGUF file for the local model).
pub fn model_label(model: &ModelConfig) -> String {
    let name = model
        .name
        .as_ref()
        .or(model.path.as_ref())
        .map_or("default", |name| name.get_ref().as_str());
    format!("{}/{name}", model.provider.get_ref())
}

/// Builds the model `config` names (loading the local model's weights, so async).
#[cfg_attr(not(feature = "local"), allow(unused_variables))]
pub async fn build_model(agent: &LoadedAgent, config: &ModelConfig) -> Result<BoxedModel, String> {
    let name = config
        .name
        .as_ref()
        .map(|n| n.get_ref().clone())
        .unwrap_or_default();
    let provider_error = |error: reins::providers::ProviderError| error.to_string();
    match config.provider.get_ref().as_str() {
        "openai" => {
            let client = OpenAI::builder().api_key(api_key(config)?);
            let client = located(client, config).build().map_err(provider_error)?;
            let responses = config
                .api
                .as_ref()
                .is_some_and(|api| api.get_ref() == "responses");
            Ok(if responses {
                BoxedModel::new(client.responses(name))
            } else {
                BoxedModel::new(client.completion(name))
            })
        }
        "anthropic" => {
            let client = Anthropic::builder().api_key(api_key(config)?);
            let client = located(client, config).build().map_err(provider_error)?;
            Ok(BoxedModel::new(client.completion(name)))
        }
        "gemini" => {
            let client = Gemini::builder().api_key(api_key(config)?);
            let client = located(client, config).build().map_err(provider_error)?;
            Ok(BoxedModel::new(client.completion(name)))
        }
        "openai-compatible" => {
            let url = config
                .base_url
                .as_ref()
                .map(|u| u.get_ref().clone())
                .unwrap_or_default();
            let mut client = OpenAICompatible::builder(url);
            if config.api_key_env.is_some() {
                client = client.api_key(api_key(config)?);
            }
            let client = client
                .timeouts(timeouts_of(config))
                .build()
                .map_err(provider_error)?;
            Ok(BoxedModel::new(client.completion(name)))
        }
        #[cfg(feature = "local")]
        "local" => {
            let path = config.path.as_ref().map(|p| agent.resolve(p.get_ref()));
            let sizes = crate::config::local_model::LocalSizes::of(config);
            Ok(BoxedModel::new(
                crate::local::load_blocking(path, sizes).await?,
            ))
        }
        other => Err(format!("the model provider `{other}` is not available")),
    }
}

/// `builder` at the agent file's `base_url`, else at the provider's base-URL variable when
/// set (as its SDKs read it: a proxy set for every tool is not bypassed, with the key sent to
/// the provider's own host), with the file's timeouts.
fn located<P: Provider>(builder: ProviderBuilder<P>, config: &ModelConfig) -> ProviderBuilder<P> {
    let builder = builder.timeouts(timeouts_of(config));
    match &config.base_url {
        Some(url) => builder.base_url(url.get_ref()),
        None => builder.base_url_from_env(),
    }
}

/// The API key of a hosted model, from its environment variable (`api_key_env`, else the
/// provider's usual one).
pub fn api_key(model: &ModelConfig) -> Result<String, String> {
    super::env::secret_from_env(crate::config::model_keys::key_env(model).unwrap_or_default())
}
