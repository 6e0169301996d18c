//! A checked agent file made into running [`Agent`]s, in two parts:
//!
//! - [`connect`] (async, once per process): the models are built (the local one loaded), the
//!   MCP servers started and listed, the shell tools made, the hooks' settings resolved (the
//!   audit log opened, secrets read).
//! - [`Connected::build`] (synchronous, as often as needed): an [`Agent`] from those parts,
//!   cheap (everything is shared or cloned), its model(s) and every tool optionally wrapped
//!   through a [`reins_restate::Steps`] so that on Restate each call is one journaled step.
//!
//! [`assemble`] does both for the commands that run one agent on a store.

mod env;
mod error;
mod hooks;
pub mod mcp;
mod models;
#[cfg(test)]
mod price_tests;

pub use env::secret_from_env;
pub use error::AssembleError;
pub use hooks::{Approvals, RESTATE_SUSPEND_REASON, price_table};
pub use models::model_label;

use crate::config::{DEFAULT_LABEL, LoadedAgent, OVER_BUDGET_LABEL, approval, tool_choice};
use crate::keys::ModelKeys;
use crate::run_decisions::RunDecisions;
use crate::shell_tool::ShellTool;
use hooks::FileHooks;
use mcp::{connect_mcp, input_schemas};
use reins::agent::{Agent, AgentBuilder};
use reins::completion::BoxedModel;
use reins::hooks::approval::ApprovalPolicy;
use reins::tool::ToolTraits;
use reins_mcp::{McpClient, McpTools};
use reins_restate::Steps;
use std::collections::BTreeSet;

/// The default most model calls of one run.
pub const DEFAULT_MAX_TURNS: usize = 8;

/// How many times a run asks the model again after a call to a tool it may not call, unless
/// the file says: a small local model told which tools there are often calls one right.
pub const DEFAULT_INVALID_TOOL_CALL_RETRIES: usize = 2;

/// An agent ready to run, and what keeps its tools alive.
pub struct Assembled {
    /// The agent.
    pub agent: Agent,
    /// The most model calls of one run.
    pub max_turns: usize,
    /// `provider/model`, for people.
    pub model_label: String,
    /// Where the decisions made while a run goes on (at the terminal, by the webhook) are
    /// logged: give it each run's store ([`RunDecisions::keep_in`]).
    pub decisions: RunDecisions,
    /// The parts the agent was built from (its MCP servers stop when this drops).
    _connected: Connected,
}

/// Connects and builds the agent of a checked file for runs on its embedded store. `decider`
/// answers the approval rules' `ask`.
pub async fn assemble(
    agent: &LoadedAgent,
    decider: crate::approve::CliDecider,
) -> Result<Assembled, AssembleError> {
    let decisions = decider.decisions();
    let connected = connect(agent, Approvals::Decider(decider)).await?;
    Ok(Assembled {
        agent: connected.build(None),
        max_turns: connected.max_turns,
        model_label: connected.model_label.clone(),
        decisions,
        _connected: connected,
    })
}

/// What every agent of one file is built from: models, tools, hooks and settings.
pub struct Connected {
    /// The agent's own model.
    model: BoxedModel,
    /// The models registered by label: the fallbacks (`fallback-1`, ...) and the budget's
    /// over-budget model ([`OVER_BUDGET_LABEL`]).
    named_models: Vec<(String, BoxedModel)>,
    shell_tools: Vec<ShellTool>,
    /// Each MCP server's tools, filtered and prefixed as the file says.
    mcp_tools: Vec<McpTools>,
    hooks: FileHooks,
    name: String,
    preamble: String,
    max_tokens: Option<u64>,
    temperature: Option<f64>,
    /// The most model calls of one run.
    pub max_turns: usize,
    /// How many times a run asks the model again after an invalid tool call.
    invalid_tool_call_retries: usize,
    /// `provider/model`, for people.
    pub model_label: String,
    /// The MCP servers the tools call (stopped when dropped).
    _servers: Vec<McpClient>,
}

/// Builds the models, starts the MCP servers and resolves the hooks of a checked file.
/// `approvals` says who answers the approval rules' `ask`.
pub async fn connect(
    agent: &LoadedAgent,
    approvals: Approvals,
) -> Result<Connected, AssembleError> {
    let file = &agent.file;
    let model = file.model.get_ref();
    let own_model = models::build_model(agent, model).await?;
    let mut named_models = Vec::new();
    for (label, config) in file.labeled_models().into_iter().skip(1) {
        named_models.push((label, models::build_model(agent, config.get_ref()).await?));
    }

    let keys = ModelKeys::of(agent);
    let mut policy = ApprovalPolicy::new();
    let mut shell_tools = Vec::new();
    for config in &file.tools.shell {
        if config.get_ref().read_only {
            policy = policy.tool_traits(config.get_ref().name.get_ref(), ToolTraits::read_only());
        }
        shell_tools.push(ShellTool::new(
            config.get_ref(),
            |p| agent.resolve(p),
            &keys,
        ));
    }
    let mut tool_names: BTreeSet<String> = file
        .tools
        .shell
        .iter()
        .map(|config| config.get_ref().name.get_ref().clone())
        .collect();
    let mut servers = Vec::new();
    let mut mcp_tools = Vec::new();
    for config in &file.tools.mcp {
        let (client, tools) = connect_mcp(agent, config.get_ref()).await?;
        // A server's tool named like one the agent already has would stand in for it (or
        // be left out), and its annotations would speak for the other tool to the approval
        // rules: the file must tell them apart.
        let taken: Vec<&str> = tools
            .names()
            .filter(|name| tool_names.contains(*name))
            .collect();
        if !taken.is_empty() {
            return Err(AssembleError::Invalid(format!(
                "MCP server `{}` lists {} that the agent already has (a shell tool or another \
                 server's): set `prefix` on the server so that its names are its own",
                config.get_ref().name,
                taken
                    .iter()
                    .map(|name| format!("`{name}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        tool_names.extend(tools.names().map(str::to_owned));
        policy = tools.register_traits(policy);
        mcp_tools.push(tools);
        servers.push(client);
    }
    if !file.tools.mcp.is_empty() {
        // `reins check` could not know these tools; a choice naming none of them is an error
        // before the first model call, not a model refusing a request, and so is an approval
        // rule matching none (a misspelt `ask` or `deny` rule would let the tool through).
        let mut problems = tool_choice::unknown_tools(agent, &tool_names);
        problems.extend(approval::unmatched_rules(agent, &tool_names));
        if !problems.is_empty() {
            let messages: Vec<String> = problems.iter().map(ToString::to_string).collect();
            return Err(AssembleError::Invalid(messages.join("\n")));
        }
    }

    // The fallback chain: the agent's model, then each fallback (not the over-budget model).
    let labels = std::iter::once(DEFAULT_LABEL.to_owned())
        .chain(
            named_models
                .iter()
                .map(|(label, _)| label.clone())
                .filter(|label| label != OVER_BUDGET_LABEL),
        )
        .collect();
    // Arguments edited at the terminal's prompt are checked against the MCP tools' schemas
    // too, now that their servers have said what they are.
    let approvals = match approvals {
        Approvals::Decider(decider) => {
            Approvals::Decider(decider.checking(mcp_tools.iter().flat_map(input_schemas)))
        }
        other => other,
    };
    Ok(Connected {
        hooks: FileHooks::new(agent, policy, labels, approvals)?
            .masking(&keys)
            .checking(&shell_tools),
        model: own_model,
        named_models,
        shell_tools,
        mcp_tools,
        name: agent.name(),
        preamble: file.preamble.clone(),
        max_tokens: model.max_tokens,
        temperature: model.temperature,
        max_turns: file
            .limits
            .max_turns
            .as_ref()
            .map_or(DEFAULT_MAX_TURNS, |turns| *turns.get_ref()),
        invalid_tool_call_retries: invalid_tool_call_retries(agent),
        model_label: model_label(model),
        _servers: servers,
    })
}

/// The file's `max_invalid_tool_call_retries`, or [`DEFAULT_INVALID_TOOL_CALL_RETRIES`].
pub(crate) fn invalid_tool_call_retries(agent: &LoadedAgent) -> usize {
    agent
        .file
        .limits
        .max_invalid_tool_call_retries
        .as_ref()
        .map_or(DEFAULT_INVALID_TOOL_CALL_RETRIES, |retries| {
            *retries.get_ref()
        })
}

impl Connected {
    /// An agent from the connected parts. With `steps`, its models and every tool are
    /// wrapped so that each call is one step of `steps` (journaled on Restate), and each MCP
    /// server's tools are the list taken at [`connect`] (a replay must see the tools the
    /// first execution saw); without, the MCP tools follow the servers' later lists.
    pub fn build(&self, steps: Option<&Steps>) -> Agent {
        let mut builder = match steps {
            Some(steps) => AgentBuilder::new(steps.model(self.model.clone())),
            None => AgentBuilder::new(self.model.clone()),
        };
        for (label, model) in &self.named_models {
            builder = match steps {
                Some(steps) => builder.named_model(label, steps.model(model.clone())),
                None => builder.named_model(label, model.clone()),
            };
        }
        builder = builder.name(self.name.clone());
        if !self.preamble.is_empty() {
            builder = builder.preamble(self.preamble.clone());
        }
        if let Some(max_tokens) = self.max_tokens {
            builder = builder.max_tokens(max_tokens);
        }
        if let Some(temperature) = self.temperature {
            builder = builder.temperature(temperature);
        }
        builder = builder
            .default_max_turns(self.max_turns)
            .default_max_invalid_tool_call_retries(self.invalid_tool_call_retries);
        for tool in &self.shell_tools {
            builder = match steps {
                Some(steps) => builder.tool(steps.tool(tool.clone())),
                None => builder.tool(tool.clone()),
            };
        }
        // What a tool fails with is masked by the hooks' redactions (the model keys, the
        // file's `[hooks.redaction]`), whatever the tool's kind.
        for tools in &self.mcp_tools {
            builder = match steps {
                Some(steps) => builder.tools(tools.iter().map(|tool| steps.tool(tool.clone()))),
                // The server's later lists (tools/list_changed) are taken between turns.
                None => builder.tool_source(tools.clone().into_source()),
            };
        }
        self.hooks.add_to(builder, steps).build()
    }
}
