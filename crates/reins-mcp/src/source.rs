//! An MCP server's tools as a [`ToolSource`]: the agent lists them again between turns after
//! the server announces `notifications/tools/list_changed`.

use crate::McpTools;
use futures::future::BoxFuture;
use reins::tool::{ToolSet, ToolSource};
use std::sync::{Mutex, PoisonError};

/// An MCP server's tools that follow the server's list: give it to
/// [`AgentBuilder::tool_source`](reins::agent::AgentBuilder::tool_source). After the server
/// sends `notifications/tools/list_changed` (or is started again after a crash), the agent
/// lists the tools again before its next model turn — narrowed and named as the
/// [`McpTools`] this came from — and advertises the new list from that turn on.
///
/// Each tool carries what its annotations say ([`Tool::traits`](reins::tool::Tool::traits)),
/// so hooks and an [`ApprovalPolicy`](reins::hooks::approval::ApprovalPolicy)'s trait rules
/// judge a tool that appears later by its own annotations, like the first ones.
///
/// ```no_run
/// use reins::agent::AgentBuilder;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins_mcp::McpServer;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let server = McpServer::stdio("npx", ["@modelcontextprotocol/server-everything"])
///     .connect()
///     .await?;
/// let tools = server.tools().await?.prefix("everything_");
/// let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("hi")]))
///     .tool_source(tools.into_source())
///     .build();
/// # Ok(()) }
/// ```
pub struct McpToolSource {
    tools: Mutex<McpTools>,
}

impl std::fmt::Debug for McpToolSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("McpToolSource").field(&self.tools).finish()
    }
}

impl McpTools {
    /// These tools as a [`ToolSource`] that follows the server's list (see
    /// [`McpToolSource`]).
    pub fn into_source(self) -> McpToolSource {
        McpToolSource {
            tools: Mutex::new(self),
        }
    }
}

impl McpToolSource {
    /// The tools as last listed.
    pub fn tools(&self) -> McpTools {
        self.tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl ToolSource for McpToolSource {
    fn current(&self) -> ToolSet {
        self.tools().to_tool_set()
    }

    fn changed(&self) -> bool {
        self.tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_stale()
    }

    fn refresh(&self) -> BoxFuture<'_, Result<ToolSet, String>> {
        Box::pin(async move {
            let listed = self
                .tools()
                .refresh()
                .await
                .map_err(|error| error.to_string())?;
            let set = listed.to_tool_set();
            *self.tools.lock().unwrap_or_else(PoisonError::into_inner) = listed;
            Ok(set)
        })
    }
}
