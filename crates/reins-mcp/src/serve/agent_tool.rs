//! A whole agent as one tool: a prompt in, the agent's answer out.

use reins::agent::{Agent, PromptError};
use reins::tool::{Tool, ToolCallContext};
use schemars::JsonSchema;
use serde::Deserialize;

/// An [`Agent`] as a reins [`Tool`] taking `{"prompt": "..."}` and answering with the
/// agent's final text. Each call is one run of the agent, with its hooks and approvals
/// running inside; a run that fails is a tool failure carrying the error. Serve it over MCP
/// with [`McpService`](crate::McpService) (or give it to another agent, whose run then
/// counts this run's tokens as its own: [`ToolCallContext::add_usage`]).
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
        let run = self.agent.prompt(args.prompt).extended_details().await?;
        // Called by another agent's run: the tokens this one spent are that run's too.
        if let Some(call) = ToolCallContext::current() {
            call.add_usage(run.usage());
        }
        Ok(run.output)
    }
}

#[cfg(test)]
mod tests {
    use super::AgentTool;
    use reins::agent::AgentBuilder;
    use reins::completion::Usage;
    use reins::testing::{ScriptedModel, Turn};
    use serde_json::json;

    #[tokio::test]
    async fn an_agent_calling_it_counts_the_inner_run_s_tokens() {
        let geographer = AgentBuilder::new(ScriptedModel::new([
            Turn::text("Paris.").usage(Usage::new(100, 10))
        ]))
        .build();
        let model = ScriptedModel::new([
            Turn::tool_call("ask", json!({"prompt": "Capital of France?"}))
                .usage(Usage::new(20, 5)),
            Turn::text("It is Paris.").usage(Usage::new(30, 5)),
        ]);
        let agent = AgentBuilder::new(model)
            .tool(AgentTool::new("ask", "Asks the geographer.", geographer))
            .build();
        let run = agent
            .prompt("What is the capital of France?")
            .extended_details()
            .await
            .unwrap();
        assert_eq!(run.output, "It is Paris.");
        let usage = run.usage();
        assert_eq!((usage.input_tokens, usage.output_tokens), (150, 20));
    }
}
