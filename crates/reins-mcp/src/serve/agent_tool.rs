//! A whole agent as one tool: a prompt in, the agent's answer out.

use reins::agent::{Agent, PromptError};
use reins::tool::Tool;
use schemars::JsonSchema;
use serde::Deserialize;

/// An [`Agent`] as a reins [`Tool`] taking `{"prompt": "..."}` and answering with the
/// agent's final text. Each call is one run of the agent, with its hooks and approvals
/// running inside; a run that fails is a tool failure carrying the error. Serve it over MCP
/// with [`McpService`](crate::McpService) (or give it to another agent).
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::ToolSet;
/// use reins_mcp::AgentTool;
///
/// let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("Paris.")])).build();
/// let mut tools = ToolSet::new();
/// tools.add(AgentTool::new("ask_geographer", "Answers geography questions.", agent));
/// assert!(tools.contains("ask_geographer"));
/// ```
#[derive(Debug, Clone)]
pub struct AgentTool {
    name: String,
    description: String,
    agent: Agent,
}

/// The arguments of an [`AgentTool`].
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AgentToolArgs {
    /// The prompt the agent runs on.
    pub prompt: String,
}

impl AgentTool {
    /// `agent` as a tool called `name`, described to callers by `description`.
    pub fn new(name: impl Into<String>, description: impl Into<String>, agent: Agent) -> Self {
        AgentTool {
            name: name.into(),
            description: description.into(),
            agent,
        }
    }
}

impl Tool for AgentTool {
    type Args = AgentToolArgs;
    type Output = String;
    type Error = PromptError;

    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    async fn call(&self, args: AgentToolArgs) -> Result<String, PromptError> {
        self.agent.prompt(args.prompt).await
    }
}
