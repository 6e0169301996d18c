//! An MCP server's tools with the agent's model keys masked in their failures, as a shell
//! tool masks its own (`ShellTool::call`). The key-masking hook (`ModelKeys`'
//! `tool_result_redaction`) masks what the model is shown; reins keeps a failed call's own
//! text raw in its outcome, which is stored with the run, streamed as the `--json`
//! `tool_result`'s `outcome` and read by every later hook. Masked where the tool fails, the
//! text holds no key anywhere.

use crate::keys::ModelKeys;
use futures::future::BoxFuture;
use reins::tool::{RetrySafety, Tool, ToolSet, ToolSource, ToolTraits};
use reins_mcp::{McpTool, McpToolSource, McpTools};
use serde_json::Value;
use std::time::Duration;

/// An MCP tool whose failures have the keys' values masked.
#[derive(Debug, Clone)]
pub struct MaskedTool {
    tool: McpTool,
    keys: ModelKeys,
}

impl MaskedTool {
    /// `tool`, failing with `keys` masked.
    pub fn new(tool: McpTool, keys: &ModelKeys) -> Self {
        MaskedTool {
            tool,
            keys: keys.clone(),
        }
    }
}

impl Tool for MaskedTool {
    type Args = Value;
    type Output = Value;
    type Error = String;

    fn name(&self) -> &str {
        Tool::name(&self.tool)
    }

    fn description(&self) -> &str {
        Tool::description(&self.tool)
    }

    fn parameters(&self) -> Value {
        Tool::parameters(&self.tool)
    }

    fn timeout(&self) -> Option<Duration> {
        Tool::timeout(&self.tool)
    }

    fn retry_safety(&self) -> RetrySafety {
        Tool::retry_safety(&self.tool)
    }

    fn traits(&self) -> Option<ToolTraits> {
        Tool::traits(&self.tool)
    }

    fn origin(&self) -> Option<&str> {
        Tool::origin(&self.tool)
    }

    async fn call(&self, args: Value) -> Result<Value, String> {
        Tool::call(&self.tool, args)
            .await
            .map_err(|error| self.keys.scrub(&error.to_string()).into_owned())
    }
}

/// An MCP server's tools, following its list as [`McpToolSource`] does, each a
/// [`MaskedTool`].
pub struct MaskedSource {
    source: McpToolSource,
    keys: ModelKeys,
}

impl MaskedSource {
    /// `tools`, following the server's later lists, failing with `keys` masked.
    pub fn new(tools: McpTools, keys: &ModelKeys) -> Self {
        MaskedSource {
            source: tools.into_source(),
            keys: keys.clone(),
        }
    }
}

/// `tools`, each failing with `keys` masked.
pub fn masked(tools: &McpTools, keys: &ModelKeys) -> impl Iterator<Item = MaskedTool> {
    tools.iter().map(|tool| MaskedTool::new(tool.clone(), keys))
}

impl ToolSource for MaskedSource {
    fn current(&self) -> ToolSet {
        let mut set = ToolSet::new();
        for tool in masked(&self.source.tools(), &self.keys) {
            set.add(tool);
        }
        set
    }

    fn changed(&self) -> bool {
        self.source.changed()
    }

    fn refresh(&self) -> BoxFuture<'_, Result<ToolSet, String>> {
        Box::pin(async move {
            self.source.refresh().await?;
            Ok(self.current())
        })
    }
}
