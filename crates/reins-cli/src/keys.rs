//! The agent's model keys kept from its tools: the programs a shell tool or a stdio MCP
//! server starts do not inherit the variables holding them (unless the tool's
//! `env_passthrough` names one), and the keys' values are masked as `<redacted>` in what tools
//! answer, as reins masks a key a provider echoes in an answer. A tool that prints its
//! environment would otherwise put the key on the terminal, into the store (`runs show`, the
//! inbox) and before the model.

use crate::config::LoadedAgent;
use crate::config::model_keys::key_variables;
use reins::hooks::redaction::Redaction;
use toml::Spanned;

/// The variable `reins ui` reads its token from (`--token`): never a tool's, since the
/// token lets whoever holds it approve calls in the inbox — a tool's own among them.
pub const UI_TOKEN_ENV: &str = "REINS_UI_TOKEN";

/// What a key's value becomes in a tool's answer (the mask reins puts on a key a provider
/// echoes).
const REDACTED: &str = "<redacted>";

/// Values shorter than this are not masked: a placeholder key (`EMPTY` for a local server,
/// `k` in a test) would mask ordinary words everywhere. reins leaves such keys unmasked in
/// answers too; real keys are far longer.
const MIN_MASKED_LEN: usize = 8;

/// The variables holding the agent's model keys, and their values as a redaction.
#[derive(Clone, Default)]
pub struct ModelKeys {
    variables: Vec<String>,
    /// `None` when no key variable holds a value long enough to mask.
    redaction: Option<Redaction>,
}

impl std::fmt::Debug for ModelKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The names only: the values are secrets.
        f.debug_struct("ModelKeys")
            .field("variables", &self.variables)
            .finish_non_exhaustive()
    }
}

impl ModelKeys {
    /// The key variables of `agent`'s models and every provider's default one, the file's
    /// other secrets' and the inbox token's ([`UI_TOKEN_ENV`]), their values read now.
    pub fn of(agent: &LoadedAgent) -> Self {
        let mut variables: Vec<String> = key_variables(&agent.file).into_iter().collect();
        // Not the file's, so `env_passthrough` cannot name it: withheld whatever it says.
        variables.push(UI_TOKEN_ENV.to_owned());
        let values: Vec<String> = variables
            .iter()
            .filter_map(|variable| std::env::var(variable).ok())
            .filter(|value| value.len() >= MIN_MASKED_LEN)
            .collect();
        let redaction = (!values.is_empty()).then(|| {
            Redaction::empty()
                .secrets(&values)
                .replacement(REDACTED)
                .requests(false)
        });
        ModelKeys {
            variables,
            redaction,
        }
    }

    /// The variables a tool's program must not inherit: every key variable but those its
    /// `env_passthrough` names.
    pub fn withheld<'a>(
        &'a self,
        passthrough: &'a [Spanned<String>],
    ) -> impl Iterator<Item = &'a str> {
        self.variables
            .iter()
            .filter(|variable| !passthrough.iter().any(|name| name.get_ref() == *variable))
            .map(String::as_str)
    }

    /// A hook masking the keys' values in every tool's result, and in its outcome's text (what
    /// a failing tool says), before the model, the run's history, the store, the `--json`
    /// events and the hooks after it see them, whatever the tool's kind; `None` when there is
    /// nothing to mask.
    pub fn tool_result_redaction(&self) -> Option<Redaction> {
        self.redaction.clone()
    }
}
