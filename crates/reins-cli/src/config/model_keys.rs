//! The environment variables the agent file's models read their API keys from, and those it
//! names for its other secrets: what the programs its tools start must not inherit (see
//! `keys`).

use super::{AgentFile, ModelConfig};
use std::collections::BTreeSet;

/// Each hosted provider and the variable its key is read from when the model names none
/// (`api_key_env`), as the providers' own SDKs read it.
pub const PROVIDER_KEY_VARIABLES: [(&str, &str); 3] = [
    ("openai", "OPENAI_API_KEY"),
    ("anthropic", "ANTHROPIC_API_KEY"),
    ("gemini", "GEMINI_API_KEY"),
];

/// The variable `provider`'s key is read from by default; `None` for a provider that needs
/// no key unless the model names one (`local`, `openai-compatible`).
pub fn default_key_env(provider: &str) -> Option<&'static str> {
    PROVIDER_KEY_VARIABLES
        .iter()
        .find(|(name, _)| *name == provider)
        .map(|(_, variable)| *variable)
}

/// The variable `model`'s key is read from: its `api_key_env`, else its provider's default.
pub fn key_env(model: &ModelConfig) -> Option<&str> {
    model
        .api_key_env
        .as_ref()
        .map(|variable| variable.get_ref().as_str())
        .or_else(|| default_key_env(model.provider.get_ref()))
}

/// Every variable that holds a model key of `file`: each model's (the agent's own, the
/// fallbacks, the over-budget model), and every provider's default one (a key set for
/// another provider is a key all the same); and every other secret the file names a
/// variable for: an MCP server's bearer token and headers, the approval webhook's token and
/// signing secret, the store's PostgreSQL URL (it carries a password), the Restate tokens,
/// and the redaction's own secrets.
pub fn key_variables(file: &AgentFile) -> BTreeSet<String> {
    let models = file
        .labeled_models()
        .into_iter()
        .filter_map(|(_, model)| key_env(model.get_ref()).map(str::to_owned));
    let defaults = PROVIDER_KEY_VARIABLES
        .iter()
        .map(|(_, variable)| (*variable).to_owned());
    let mcp = file.tools.mcp.iter().flat_map(|server| {
        let server = server.get_ref();
        server
            .bearer_token_env
            .iter()
            .chain(server.headers_from_env.values())
    });
    let approval = file.hooks.approval.iter().flat_map(|approval| {
        approval
            .webhook_token_env
            .iter()
            .chain(&approval.webhook_signing_secret_env)
    });
    let store = file.store.iter().flat_map(|store| {
        let store = store.get_ref();
        store
            .postgres_url_env
            .iter()
            .chain(&store.restate_token_env)
            .chain(&store.restate_admin_token_env)
    });
    let redaction = file
        .hooks
        .redaction
        .iter()
        .flat_map(|redaction| &redaction.secrets_from_env);
    let named = mcp
        .chain(approval)
        .chain(store)
        .chain(redaction)
        .map(|variable| variable.get_ref().clone());
    models.chain(defaults).chain(named).collect()
}
