//! [`McpClient::tools`]: the server's tool list read page by page, each tool checked as its
//! page arrives, so that what is kept is bounded (in count and in bytes) and no more than a
//! page of what the server sent waits to be looked at.

use crate::McpError;
use crate::advertised::schema_within;
use crate::client::{ClientInner, McpClient};
use crate::tool::McpTool;
use crate::tools::McpTools;
use std::sync::Arc;

impl McpClient {
    /// Every tool of the server (following `nextCursor` through the pages), as reins tools.
    /// Narrow them with [`McpTools::filter`] and name them with [`McpTools::prefix`].
    ///
    /// The whole listing is one request for the call timeout; a list still going after 100
    /// pages is an [`McpError::Protocol`] (a server whose every page names a next one), as
    /// is one whose page names as the next a cursor an earlier page named (at once). A
    /// tool whose `inputSchema` or `outputSchema` is over
    /// [`McpServer::max_schema_bytes`](crate::McpServer::max_schema_bytes) is left out, with a
    /// warning, as is one whose `outputSchema` does not compile (its results could not be
    /// checked). The first [`McpServer::max_tools`](crate::McpServer::max_tools) tools within
    /// [`McpServer::max_tool_list_bytes`](crate::McpServer::max_tool_list_bytes) are kept;
    /// past either, the list is cut there with a warning and no further page is asked for.
    pub async fn tools(&self) -> Result<McpTools, McpError> {
        // Read before listing: a change announced while the list is in flight makes this
        // listing stale, not lost.
        let generation = self.inner.events.tools_generation();
        let mut listing = Listing {
            client: self.inner.clone(),
            kept: Vec::new(),
            bytes: 0,
        };
        self.inner.list_tools(|page| listing.take(page)).await?;
        Ok(McpTools::new(self.clone(), listing.kept, generation))
    }
}

/// The tools kept so far, and the bytes they take.
struct Listing {
    client: Arc<ClientInner>,
    kept: Vec<McpTool>,
    bytes: usize,
}

impl Listing {
    /// Keeps what may be kept of one page; `false` once the list is full.
    fn take(&mut self, page: Vec<rmcp::model::Tool>) -> bool {
        let client = self.client.clone();
        for tool in page {
            if self.kept.len() >= client.max_tools {
                tracing::warn!(
                    target: "reins_mcp",
                    server = %client.name,
                    max_tools = client.max_tools,
                    "the server lists more tools than the limit; the first are kept"
                );
                return false;
            }
            let Some(bytes) = self.size_within_schema_limit(&tool) else {
                continue;
            };
            if self.bytes.saturating_add(bytes) > client.max_tool_list_bytes {
                tracing::warn!(
                    target: "reins_mcp",
                    server = %client.name,
                    max_tool_list_bytes = client.max_tool_list_bytes,
                    kept = self.kept.len(),
                    "the server's tools take more bytes than the limit; the first are kept"
                );
                return false;
            }
            if let Some(kept) = McpTool::new(client.clone(), tool) {
                self.bytes += bytes;
                self.kept.push(kept);
            }
        }
        true
    }

    /// What `tool` takes once kept (its name, its description as shown, its schemas as
    /// JSON), unless a schema is over the limit (the tool is then left out, with a warning).
    fn size_within_schema_limit(&self, tool: &rmcp::model::Tool) -> Option<usize> {
        let client = &self.client;
        let within = |which, schema| {
            schema_within(
                &client.name,
                client.logged_tool_name(&tool.name),
                which,
                schema,
                client.max_schema_bytes,
            )
        };
        let input = within("inputSchema", &tool.input_schema)?;
        let output = match &tool.output_schema {
            Some(schema) => within("outputSchema", schema)?,
            None => 0,
        };
        let description = tool.description.as_deref().map_or(0, |description| {
            description.len().min(client.max_description_bytes)
        });
        Some(tool.name.len() + description + input + output)
    }
}
