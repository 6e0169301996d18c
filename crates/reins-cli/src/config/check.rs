//! Checks an agent file beyond its shape: known providers and actions, tool choices that name
//! defined tools, and environment variables that are set (a shell tool's schema and
//! template are checked in `shell_tool.rs`, an MCP server's entry in `mcp_server.rs`, the Restate
//! store's settings in `restate.rs`, the variables it names in `variables.rs`, the programs it
//! starts in `programs.rs`). Every problem is reported (not only the first), each at its line.

use super::budget::check_budget;
use super::diagnostic::Diagnostic;
use super::mcp_server::check_mcp;
use super::shell_tool::check_shell_tool;
use super::variables::{check_env, check_variable};
use super::{LoadedAgent, ModelConfig};
use std::collections::BTreeSet;
use toml::Spanned;

/// Which of the variables an agent file names the command at hand needs set: `check` reports
/// an unset one only when it is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// `reins check`: every variable the file names.
    Everything,
    /// A run executes in this process (`run`, `chat`, `ui`, `runs resume`): the model's keys,
    /// secrets to redact, the Restate ingress token.
    Running,
    /// The store's commands, and runs on Restate started and followed from here through the
    /// ingress: no variable only a run needs (API keys, secrets to redact).
    Store,
    /// `reins serve`: the worker runs the agent but never calls the ingress (Restate calls
    /// it); with `register`, the admin API's token.
    Worker {
        /// Whether `--register` calls the admin API.
        register: bool,
    },
}

impl Needs {
    /// Whether a run executes in this process (its model's keys and secrets are needed).
    fn runs_here(self) -> bool {
        !matches!(self, Needs::Store)
    }

    /// Whether this command calls the Restate ingress.
    fn calls_ingress(self) -> bool {
        !matches!(self, Needs::Worker { .. })
    }

    /// Whether this command calls the Restate admin API (`reins check` checks for it).
    fn calls_admin(self) -> bool {
        matches!(self, Needs::Everything | Needs::Worker { register: true })
    }
}

/// Every problem of `agent`, in file order, with the variables `needs` says are needed; when
/// the command runs the agent's tools, a warning for each program it would not find.
pub fn check(agent: &LoadedAgent, needs: Needs) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    let mut secrets = Vec::new();
    let file = &agent.file;
    for (_, model) in file.labeled_models() {
        check_model(agent, model, &mut problems, &mut secrets);
        if needs == Needs::Everything && model.get_ref().provider.get_ref() == "local" {
            super::local_model::check_model_variable(agent, model.get_ref(), &mut problems);
        }
    }
    check_budget(agent, &mut problems);
    super::hook_checks::check_hooks(agent, &mut problems);
    let for_gemini = file
        .labeled_models()
        .iter()
        .any(|(_, model)| model.get_ref().provider.get_ref() == "gemini");
    let mut names = BTreeSet::new();
    for tool in &file.tools.shell {
        if !names.insert(tool.get_ref().name.get_ref().clone()) {
            problems.push(agent.error_at(
                tool.get_ref().name.span(),
                format!(
                    "a tool named `{}` is already defined",
                    tool.get_ref().name.get_ref()
                ),
            ));
        }
        check_shell_tool(agent, tool.get_ref(), for_gemini, &mut problems);
    }
    for server in &file.tools.mcp {
        check_mcp(agent, server, &mut problems, &mut secrets);
    }
    super::passthrough::check_passthrough(agent, &mut problems);
    // With MCP servers, the tools are only known after connecting: `reins run` checks then.
    if file.tools.mcp.is_empty() {
        problems.extend(super::tool_choice::unknown_tools(agent, &names));
        problems.extend(super::approval::unmatched_rules(agent, &names));
    }
    problems.extend(super::approval::shadowed_rules(agent));
    if let Some(approval) = &file.hooks.approval {
        if let Some(default) = &approval.default {
            check_one_of(agent, default, &["allow", "ask", "deny"], &mut problems);
        }
        for rule in &approval.rules {
            let rule = rule.get_ref();
            check_one_of(
                agent,
                &rule.action,
                &["allow", "ask", "deny"],
                &mut problems,
            );
            if let Some(when) = &rule.when {
                check_one_of(agent, when, &["read_only", "writes"], &mut problems);
            }
        }
        check_webhook(agent, approval, &mut problems, &mut secrets);
    }
    if let Some(redaction) = &file.hooks.redaction {
        for variable in &redaction.secrets_from_env {
            check_env(agent, variable, "a secret to redact", &mut secrets);
        }
    }
    if needs.runs_here() {
        // Warnings: a program not installed where the file is checked may be where it runs.
        problems.extend(super::programs::missing_programs(agent));
        problems.append(&mut secrets);
        // The store's commands read runs without running anything: no path is needed.
        problems.extend(super::paths::check_paths(agent));
    }
    if let Some(store) = &file.store {
        check_store(agent, store, needs, &mut problems);
    }
    if let Some(link) = &file.ui.trace_link {
        let url = link.get_ref();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            problems.push(agent.error_at(
                link.span(),
                "`trace_link` must be an http:// or https:// URL",
            ));
        } else if !url.contains("{run}") {
            problems.push(agent.error_at(link.span(), "`trace_link` must contain `{run}`"));
        }
    }
    problems.sort_by_key(Diagnostic::line);
    problems
}

/// The approval webhook: a URL a decider can post to, and its secrets' variables (needed only
/// to run).
fn check_webhook(
    agent: &LoadedAgent,
    approval: &super::ApprovalConfig,
    problems: &mut Vec<Diagnostic>,
    secrets: &mut Vec<Diagnostic>,
) {
    let variables = [
        (
            "webhook_token_env",
            &approval.webhook_token_env,
            "the approval webhook's token",
        ),
        (
            "webhook_signing_secret_env",
            &approval.webhook_signing_secret_env,
            "the approval webhook's signing secret",
        ),
    ];
    let Some(url) = &approval.webhook else {
        for (key, variable, _) in variables {
            if let Some(variable) = variable {
                problems.push(agent.error_at(
                    variable.span(),
                    format!("`{key}` needs a `webhook` to send requests to"),
                ));
            }
        }
        return;
    };
    if reins::hooks::approval::WebhookDecider::new(url.get_ref()).is_err() {
        // The URL is not repeated: it may hold a secret.
        problems.push(
            agent
                .error_at(
                    url.span(),
                    "`webhook` must be an absolute http:// or https:// URL",
                )
                .concealed(),
        );
    }
    for (_, variable, what) in variables {
        if let Some(variable) = variable {
            check_env(agent, variable, what, secrets);
        }
    }
}

fn check_store(
    agent: &LoadedAgent,
    spanned: &Spanned<super::StoreConfig>,
    needs: Needs,
    problems: &mut Vec<Diagnostic>,
) {
    let store = spanned.get_ref();
    if let Some(keep) = store
        .keep_checkpoints
        .as_ref()
        .filter(|keep| *keep.get_ref() == 0)
    {
        problems.push(agent.error_at(
            keep.span(),
            "`keep_checkpoints` must be at least 1: a run's newest checkpoint is its state",
        ));
    }
    if let Some(lease) = store
        .lease_secs
        .as_ref()
        .filter(|secs| !(1..=super::MAX_LEASE_SECS).contains(secs.get_ref()))
    {
        problems.push(agent.error_at(
            lease.span(),
            format!(
                "`lease_secs` must be from 1 to {} (a day): a run left by a process that died \
                 stays busy that long",
                super::MAX_LEASE_SECS
            ),
        ));
    }
    if let Some(restate) = &store.restate {
        super::restate::check_restate(agent, store, restate, problems);
    }
    super::restate::check_identity_keys(agent, store, problems);
    let admin_own = store.restate_admin_token_env.is_some();
    for (key, variable) in [
        ("restate_token_env", &store.restate_token_env),
        ("restate_admin_token_env", &store.restate_admin_token_env),
    ] {
        let Some(variable) = variable else { continue };
        if store.restate.is_none() {
            problems.push(agent.error_at(
                variable.span(),
                format!("`{key}` needs `restate = \"<ingress URL>\"` to send the token to"),
            ));
            continue;
        }
        // Every command on a Restate agent but `reins serve` calls the ingress; the admin API
        // (`serve --register`) takes the ingress's token unless it has one of its own.
        let (needed, what) = if key == "restate_admin_token_env" {
            (needs.calls_admin(), "the Restate admin API token")
        } else if needs.calls_ingress() {
            (true, "the Restate ingress token")
        } else {
            (
                needs.calls_admin() && !admin_own,
                "the Restate ingress token, which `--register` sends to the admin API without \
                 `restate_admin_token_env`",
            )
        };
        // Not needed, it must still be a variable's name: a pasted token is refused anyway.
        check_variable(agent, variable, what, needed, problems);
    }
    if let Some(file) = &store.sqlite {
        // SQLite says only "unable to open database file", and only once a command runs.
        let path = agent.resolve(file.get_ref());
        if path.is_dir() {
            problems.push(agent.error_at(
                file.span(),
                format!(
                    "`sqlite` names the directory {}: name the database file (e.g. \
                     `sqlite = \"{}\"`; relative paths start at the agent file's directory)",
                    path.display(),
                    std::path::Path::new(file.get_ref())
                        .join("runs.sqlite")
                        .display()
                ),
            ));
        }
    }
    if let Some(variable) = &store.postgres_url_env {
        if store.sqlite.is_some() {
            problems.push(agent.error_at(
                spanned.span(),
                "give either `sqlite` or `postgres_url_env`, not both",
            ));
        }
        if cfg!(feature = "postgres") {
            check_env(
                agent,
                variable,
                "the PostgreSQL connection string",
                problems,
            );
        } else {
            problems.push(agent.error_at(
                variable.span(),
                "this `reins` was built without PostgreSQL (feature `postgres`)",
            ));
        }
    }
}

/// Checks a model; missing keys go to `secrets`.
fn check_model(
    agent: &LoadedAgent,
    model: &Spanned<ModelConfig>,
    problems: &mut Vec<Diagnostic>,
    secrets: &mut Vec<Diagnostic>,
) {
    let config = model.get_ref();
    let provider = &config.provider;
    super::model_timeouts::check_timeouts(agent, config, problems);
    if let Some(api) = &config.api {
        check_one_of(agent, api, &["chat", "responses"], problems);
        if api.get_ref() == "responses" && provider.get_ref() != "openai" {
            problems.push(agent.error_at(
                api.span(),
                "`api = \"responses\"` is for `provider = \"openai\"` only: the Responses API \
                 is OpenAI's",
            ));
        }
    }
    let default_key = match provider.get_ref().as_str() {
        "local" => {
            if !cfg!(feature = "local") {
                problems.push(agent.error_at(
                    provider.span(),
                    "this `reins` was built without the local model (feature `local`)",
                ));
            }
            if let Some(path) = &config.path {
                let file = agent.resolve(path.get_ref());
                let problem = if file.is_dir() {
                    "is a directory: name the .gguf file inside it"
                } else {
                    "does not exist"
                };
                if !file.is_file() {
                    problems.push(agent.error_at(
                        path.span(),
                        format!("model file {} {problem}", file.display()),
                    ));
                }
            }
            super::local_model::check_local_sizes(agent, config, problems);
            return;
        }
        hosted @ ("openai" | "anthropic" | "gemini") => super::model_keys::default_key_env(hosted),
        "openai-compatible" => {
            if config.base_url.is_none() {
                problems.push(agent.error_at(
                    model.span(),
                    "provider `openai-compatible` needs `base_url`",
                ));
            }
            None
        }
        other => {
            const PROVIDERS: [&str; 5] = [
                "local",
                "openai",
                "anthropic",
                "gemini",
                "openai-compatible",
            ];
            let hint = super::suggest::closest(other, PROVIDERS)
                .map(super::suggest::did_you_mean)
                .unwrap_or_default();
            problems.push(agent.error_at(
                provider.span(),
                format!(
                    "unknown provider `{other}`: expected `local`, `openai`, `anthropic`, \
                     `gemini` or `openai-compatible`{hint}"
                ),
            ));
            return;
        }
    };
    if let Some(path) = &config.path {
        problems.push(agent.error_at(path.span(), "`path` is for `provider = \"local\"` only"));
    }
    for (key, value) in [
        ("threads", &config.threads),
        ("context_size", &config.context_size),
    ] {
        if let Some(value) = value {
            problems.push(agent.error_at(
                value.span(),
                format!("`{key}` is for `provider = \"local\"` only"),
            ));
        }
    }
    if let Some(url) = &config.base_url {
        // The check the run's client makes, so that a URL it refuses fails here, at its line.
        let client = reins::providers::openai_compatible::OpenAICompatible::builder(url.get_ref());
        if matches!(
            client.build(),
            Err(reins::providers::ProviderError::InvalidBaseUrl(_))
        ) {
            // The URL is not repeated: it may hold a credential.
            problems.push(
                agent
                    .error_at(
                        url.span(),
                        "`base_url` must be an absolute http:// or https:// URL (e.g. \
                         \"http://127.0.0.1:8000/v1\")",
                    )
                    .concealed(),
            );
        }
    }
    if config.name.is_none() {
        problems.push(agent.error_at(
            model.span(),
            format!("provider `{}` needs the model's `name`", provider.get_ref()),
        ));
    }
    match (&config.api_key_env, default_key) {
        (Some(variable), _) => check_env(agent, variable, "the API key", secrets),
        (None, Some(variable)) => {
            if let Some(missing) = super::variables::missing(variable) {
                secrets.push(agent.error_at(
                    provider.span(),
                    format!(
                        "{variable} {missing} (the API key for `{}`): export it with the key, \
                         or name the variable that holds the key with `api_key_env`",
                        provider.get_ref()
                    ),
                ));
            }
        }
        (None, None) => {}
    }
}

fn check_one_of(
    agent: &LoadedAgent,
    value: &Spanned<String>,
    allowed: &[&str],
    problems: &mut Vec<Diagnostic>,
) {
    if !allowed.contains(&value.get_ref().as_str()) {
        let list = allowed
            .iter()
            .map(|a| format!("`{a}`"))
            .collect::<Vec<_>>()
            .join(", ");
        problems.push(agent.error_at(
            value.span(),
            format!("`{}` is not one of {list}", value.get_ref()),
        ));
    }
}
