//! What the client does with what a server sends unasked: progress and log messages go to
//! `tracing`, `notifications/tools/list_changed` marks the tool list stale.

// Logging notifications are deprecated by the protocol (SEP-2577) but servers still send
// them; they are read until rmcp removes them.
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProtocolVersion,
};
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The client side of one connection. Cloned into rmcp's service; the flag is shared with
/// the [`McpClient`](crate::McpClient).
#[derive(Clone)]
pub(crate) struct ClientEvents {
    pub(crate) server: Arc<str>,
    pub(crate) tools_changed: Arc<AtomicBool>,
    /// How many times the tool list changed (announced, or the server started again): a
    /// listing remembers the count it saw, so each holder of a listing learns of a change.
    pub(crate) tools_generation: Arc<AtomicU64>,
}

impl ClientEvents {
    pub(crate) fn new(server: &str) -> Self {
        ClientEvents {
            server: Arc::from(server),
            tools_changed: Arc::new(AtomicBool::new(false)),
            tools_generation: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Marks the tool list stale.
    pub(crate) fn mark_tools_changed(&self) {
        self.tools_generation.fetch_add(1, Ordering::AcqRel);
        self.tools_changed.store(true, Ordering::Release);
    }

    /// The number of changes so far.
    pub(crate) fn tools_generation(&self) -> u64 {
        self.tools_generation.load(Ordering::Acquire)
    }

    /// Whether the server said its tools changed since the last call; clears the mark.
    pub(crate) fn take_tools_changed(&self) -> bool {
        self.tools_changed.swap(false, Ordering::AcqRel)
    }
}

impl ClientHandler for ClientEvents {
    fn get_info(&self) -> ClientConfig {
        // The client connects with the `initialize` handshake, so it asks for the latest
        // revision that has one: the 2026-07-28 revision (rmcp's default) has none, and a
        // server must not be told the client speaks it.
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("reins", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        tracing::info!(
            target: "reins_mcp::progress",
            server = %self.server,
            token = %params.progress_token.0,
            progress = params.progress,
            total = params.total,
            message = params.message.as_deref().unwrap_or(""),
            "MCP progress"
        );
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let logger = params.logger.as_deref().unwrap_or("");
        let data = match &params.data {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        // Server levels map to the nearest tracing level; above `warning` is an error.
        match params.level {
            LoggingLevel::Debug => {
                tracing::debug!(target: "reins_mcp::server_log", server = %self.server, logger, "{data}")
            }
            LoggingLevel::Info | LoggingLevel::Notice => {
                tracing::info!(target: "reins_mcp::server_log", server = %self.server, logger, "{data}")
            }
            LoggingLevel::Warning => {
                tracing::warn!(target: "reins_mcp::server_log", server = %self.server, logger, "{data}")
            }
            _ => {
                tracing::error!(target: "reins_mcp::server_log", server = %self.server, logger, "{data}")
            }
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(target: "reins_mcp", server = %self.server, "tool list changed");
        self.mark_tools_changed();
    }
}
