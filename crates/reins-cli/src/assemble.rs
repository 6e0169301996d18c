//! A checked agent file made into a running [`Agent`]: its model (and fallback models), its
//! tools (MCP servers started, shell tools), its hooks in a fixed order, and how long a run
//! may go.

use crate::approve::CliDecider;
use crate::config::{ApprovalConfig, LoadedAgent, McpConfig, ModelConfig, tool_choice};
use crate::shell_tool::ShellTool;
use reins::agent::{Agent, AgentBuilder};
use reins::hooks::approval::{ApprovalPolicy, Rule, RuleOutcome};
use reins::hooks::audit::AuditLog;
use reins::hooks::budget::Budget;
use reins::hooks::fallback::ModelFallback;
use reins::hooks::guardrail::{DenyList, Guardrails, MaxLength};
use reins::hooks::redaction::Redaction;
use reins::providers::anthropic::Anthropic;
use reins::providers::openai::OpenAI;
use reins::providers::openai_compatible::OpenAICompatible;
use reins::tool::ToolTraits;
use reins_mcp::{McpClient, McpServer};
use std::collections::BTreeSet;
use std::time::Duration;

/// The default most model calls of one run.
pub const DEFAULT_MAX_TURNS: usize = 8;

/// An agent ready to run, and what keeps its tools alive.
pub struct Assembled {
    /// The agent.
    pub agent: Agent,
    /// The most model calls of one run.
    pub max_turns: usize,
    /// `provider/model`, for people.
    pub model_label: String,
    /// The MCP servers the tools call (stopped when dropped).
    _servers: Vec<McpClient>,
}

/// Builds the agent of a checked file. `decider` answers the approval rules' `ask`.
pub async fn assemble(agent: &LoadedAgent, decider: CliDecider) -> Result<Assembled, String> {
    let file = &agent.file;
    let model = file.model.get_ref();
    let mut builder = new_builder(agent, model).await?;
    builder = builder.name(agent.name());
    if !file.preamble.is_empty() {
        builder = builder.preamble(file.preamble.clone());
    }
    if let Some(max_tokens) = model.max_tokens {
        builder = builder.max_tokens(max_tokens);
    }
    if let Some(temperature) = model.temperature {
        builder = builder.temperature(temperature);
    }
    let mut labels = vec!["default".to_owned()];
    if let Some(fallback) = &file.hooks.fallback {
        for (index, config) in fallback.models.iter().enumerate() {
            let label = format!("fallback-{}", index + 1);
            builder = add_named_model(builder, agent, &label, config.get_ref()).await?;
            labels.push(label);
        }
    }

    // Tools.
    let mut policy = ApprovalPolicy::new();
    for config in &file.tools.shell {
        let tool = ShellTool::new(config.get_ref(), |p| agent.resolve(p));
        if config.get_ref().read_only {
            policy = policy.tool_traits(config.get_ref().name.get_ref(), ToolTraits::read_only());
        }
        builder = builder.tool(tool);
    }
    let mut tool_names: BTreeSet<String> = file
        .tools
        .shell
        .iter()
        .map(|config| config.get_ref().name.get_ref().clone())
        .collect();
    let mut servers = Vec::new();
    for config in &file.tools.mcp {
        let config = config.get_ref();
        let mut server = match (&config.command, &config.url) {
            (Some(command), _) => McpServer::stdio(command.get_ref(), &config.args),
            (None, Some(url)) => http_server(config, url.get_ref())?,
            (None, None) => return Err(format!("MCP server `{}` has no command", config.name)),
        }
        .name(config.name.clone())
        .envs(config.env.clone());
        if let Some(cwd) = &config.cwd {
            server = server.current_dir(agent.resolve(cwd));
        }
        if let Some(secs) = config.call_timeout_secs {
            server = server.call_timeout(Duration::from_secs(secs));
        }
        let client = server.connect().await.map_err(|error| error.to_string())?;
        let mut tools = client.tools().await.map_err(|error| error.to_string())?;
        if let Some(include) = &config.include {
            tools = tools.only(include);
        }
        tools = tools.except(&config.exclude);
        if let Some(prefix) = &config.prefix {
            tools = tools.prefix(prefix);
        }
        tool_names.extend(tools.names().map(str::to_owned));
        policy = tools.register_traits(policy);
        // The server's later lists (tools/list_changed) are taken between turns.
        builder = builder.tool_source(tools.into_source());
        servers.push(client);
    }
    if !file.tools.mcp.is_empty() {
        // `reins check` could not know these tools; a choice naming none of them is an error
        // before the first model call, not a model refusing a request.
        let unknown = tool_choice::unknown_tools(agent, &tool_names);
        if !unknown.is_empty() {
            let messages: Vec<String> = unknown.iter().map(ToString::to_string).collect();
            return Err(messages.join("\n"));
        }
    }

    // Hooks, in this order: the tool choice shapes the request; guardrails and redaction see
    // the text; the budget refuses calls before the approval policy asks a person about
    // them; the fallback retries failed model calls; the audit log, last, records what the
    // others decided.
    let hooks = &file.hooks;
    if let Some(choice) = &hooks.tool_choice {
        builder = builder.add_hook(choice.hook());
    }
    if let Some(config) = &hooks.guardrails {
        let mut guardrails = Guardrails::new();
        if !config.deny_input.is_empty() {
            guardrails = guardrails.input("deny_input", DenyList::new(config.deny_input.clone()));
        }
        if let Some(max) = config.max_input_chars {
            guardrails = guardrails.input("max_input_chars", MaxLength::chars(max));
        }
        if !config.deny_answer.is_empty() {
            guardrails =
                guardrails.answer("deny_answer", DenyList::new(config.deny_answer.clone()));
        }
        builder = builder.add_hook(guardrails);
    }
    if let Some(config) = &hooks.redaction {
        let mut redaction = Redaction::new().tool_results(config.tool_results.unwrap_or(true));
        for variable in &config.secrets_from_env {
            redaction = redaction.secret_from_env(variable.get_ref());
        }
        builder = builder.add_hook(redaction);
    }
    if let Some(budget) = budget(agent) {
        builder = builder.add_hook(budget);
    }
    if let Some(config) = &hooks.approval {
        builder = builder.add_hook(approval(policy, config, decider));
    }
    if labels.len() > 1 {
        builder = builder.add_hook(ModelFallback::new(labels));
    }
    if let Some(config) = &hooks.audit {
        let mut audit = if config.path == "stderr" {
            AuditLog::stderr()
        } else {
            let path = agent.resolve(&config.path);
            AuditLog::append_to(&path)
                .map_err(|error| format!("cannot open the audit log {}: {error}", path.display()))?
        };
        if config.with_args {
            audit = audit.with_args();
        }
        builder = builder.add_hook(audit);
    }
    Ok(Assembled {
        agent: builder.build(),
        max_turns: file.limits.max_turns.unwrap_or(DEFAULT_MAX_TURNS),
        model_label: model_label(model),
        _servers: servers,
    })
}

/// An MCP server over streamable HTTP, its credentials read from the variables the file
/// names. `reins check` reports unset ones; here they are only named, never shown.
fn http_server(config: &McpConfig, url: &str) -> Result<McpServer, String> {
    let read = |variable: &str| {
        std::env::var(variable)
            .ok()
            .filter(|value| !value.is_empty())
            .ok_or_else(|| format!("{variable} is not set (MCP server `{}`)", config.name))
    };
    let mut server = McpServer::http(url);
    if let Some(variable) = &config.bearer_token_env {
        server = server.bearer_token(read(variable.get_ref())?);
    }
    for (header, variable) in &config.headers_from_env {
        server = server.header(header.clone(), read(variable.get_ref())?);
    }
    Ok(server)
}

/// `provider/name` (or the GGUF file for the local model).
pub fn model_label(model: &ModelConfig) -> String {
    let name = model
        .name
        .as_ref()
        .or(model.path.as_ref())
        .map_or("default", |name| name.get_ref().as_str());
    format!("{}/{name}", model.provider.get_ref())
}

fn budget(agent: &LoadedAgent) -> Option<Budget> {
    let limits = &agent.file.limits;
    let mut budget = Budget::new();
    let mut any = false;
    let mut set = |present: bool| any |= present;
    if let Some(max) = limits.max_input_tokens {
        budget = budget.max_input_tokens(max);
        set(true);
    }
    if let Some(max) = limits.max_output_tokens {
        budget = budget.max_output_tokens(max);
        set(true);
    }
    if let Some(max) = limits.max_total_tokens {
        budget = budget.max_total_tokens(max);
        set(true);
    }
    if let Some(max) = limits.max_model_calls {
        budget = budget.max_model_calls(max);
        set(true);
    }
    if let Some(max) = limits.max_tool_calls {
        budget = budget.max_tool_calls(max);
        set(true);
    }
    if let Some(secs) = limits.max_wall_time_secs {
        budget = budget.max_wall_time(Duration::from_secs(secs));
        set(true);
    }
    if let Some(max) = &limits.max_cost {
        budget = budget.max_cost(*max.get_ref());
        set(true);
    }
    if let Some([input, output]) = limits.price_per_million {
        budget = budget.default_price(input, output);
    }
    any.then_some(budget)
}

fn approval(
    mut policy: ApprovalPolicy,
    config: &ApprovalConfig,
    decider: CliDecider,
) -> ApprovalPolicy {
    for rule in &config.rules {
        let rule = rule.get_ref();
        let message = rule.message.clone();
        let mut built = match rule.action.get_ref().as_str() {
            "allow" => Rule::allow(rule.tool.clone()),
            "deny" => Rule::deny(
                rule.tool.clone(),
                message
                    .clone()
                    .unwrap_or_else(|| "this tool is not allowed".to_owned()),
            ),
            _ => Rule::ask(rule.tool.clone()),
        };
        match rule.when.as_ref().map(|when| when.get_ref().as_str()) {
            Some("read_only") => built = built.when_traits(|traits| traits.read_only),
            Some("writes") => built = built.when_traits(|traits| !traits.read_only),
            _ => {}
        }
        if let Some(message) = message {
            built = built.describe(message);
        }
        policy = policy.rule(built);
    }
    let default = match config.default.as_ref().map(|d| d.get_ref().as_str()) {
        Some("allow") => RuleOutcome::Allow,
        Some("deny") => RuleOutcome::Deny("no approval rule allows this tool".to_owned()),
        _ => RuleOutcome::Ask,
    };
    policy
        .default_outcome(default)
        .decider(decider)
        .timeout(Duration::from_secs(config.timeout_secs.unwrap_or(300)))
}

/// Builds the model `$model` names and hands it to `$make` (models have distinct types).
macro_rules! with_model {
    ($agent:expr, $model:expr, |$m:ident| $make:expr) => {{
        let model: &ModelConfig = $model;
        let name = model
            .name
            .as_ref()
            .map(|n| n.get_ref().clone())
            .unwrap_or_default();
        let provider_error = |error: reins::providers::ProviderError| error.to_string();
        match model.provider.get_ref().as_str() {
            "openai" => {
                let mut client = OpenAI::builder().api_key(api_key(model, "OPENAI_API_KEY")?);
                if let Some(url) = &model.base_url {
                    client = client.base_url(url.get_ref());
                }
                let $m = client.build().map_err(provider_error)?.completion(name);
                Ok($make)
            }
            "anthropic" => {
                let mut client = Anthropic::builder().api_key(api_key(model, "ANTHROPIC_API_KEY")?);
                if let Some(url) = &model.base_url {
                    client = client.base_url(url.get_ref());
                }
                let $m = client.build().map_err(provider_error)?.completion(name);
                Ok($make)
            }
            "openai-compatible" => {
                let url = model
                    .base_url
                    .as_ref()
                    .map(|u| u.get_ref().clone())
                    .unwrap_or_default();
                let mut client = OpenAICompatible::builder(url);
                if model.api_key_env.is_some() {
                    client = client.api_key(api_key(model, "")?);
                }
                let $m = client.build().map_err(provider_error)?.completion(name);
                Ok($make)
            }
            #[cfg(feature = "local")]
            "local" => {
                let path = model.path.as_ref().map(|p| $agent.resolve(p.get_ref()));
                let $m = crate::local::load_blocking(path).await?;
                Ok($make)
            }
            other => Err(format!("the model provider `{other}` is not available")),
        }
    }};
}

/// A builder for the agent's own model.
#[cfg_attr(not(feature = "local"), allow(unused_variables))]
async fn new_builder(agent: &LoadedAgent, model: &ModelConfig) -> Result<AgentBuilder, String> {
    with_model!(agent, model, |m| AgentBuilder::new(m))
}

#[cfg_attr(not(feature = "local"), allow(unused_variables))]
async fn add_named_model(
    builder: AgentBuilder,
    agent: &LoadedAgent,
    label: &str,
    model: &ModelConfig,
) -> Result<AgentBuilder, String> {
    with_model!(agent, model, |m| builder.named_model(label, m))
}

/// The API key of a hosted model, from its environment variable.
pub fn api_key(model: &ModelConfig, default_env: &str) -> Result<String, String> {
    let variable = model
        .api_key_env
        .as_ref()
        .map_or(default_env, |v| v.get_ref().as_str());
    std::env::var(variable)
        .ok()
        .filter(|key| !key.is_empty())
        .ok_or_else(|| format!("{variable} is not set"))
}
