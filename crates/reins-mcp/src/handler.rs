//! What the client does with what a server sends unasked: progress and log messages go to
//! `tracing` (each text cut and shown as text, as the server's stderr lines are),
//! `notifications/tools/list_changed` marks the tool list stale.

// Logging notifications are deprecated by the protocol (SEP-2577) but servers still send
// them; they are read until rmcp removes them.
use crate::server::shown_message;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProtocolVersion,
};
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The most bytes of a server's log or progress text logged: the server writes what it
/// likes (megabytes, terminal control sequences), and the user's logs and terminal show it.
const LOGGED_TEXT_BYTES: usize = 2048;

/// The client side of one connection. Cloned into rmcp's service; the flag is shared with
/// the [`McpClient`](crate::McpClient).
#[derive(Clone)]
pub(crate) struct ClientEvents {
    pub(crate) server: Arc<str>,
    pub(crate) tools_changed: Arc<AtomicBool>,
    /// How many times the tool list changed (announced, or the server started again): a
    /// listing remembers the count it saw, so each holder of a listing learns of a change.
    pub(crate) tools_generation: Arc<AtomicU64>,
    /// The server's credentials, replaced in what it logs (as in its stderr).
    secrets: Arc<[(String, String)]>,
}

impl ClientEvents {
    pub(crate) fn new(server: &str, secrets: Vec<(String, String)>) -> Self {
        ClientEvents {
            server: Arc::from(server),
            tools_changed: Arc::new(AtomicBool::new(false)),
            tools_generation: Arc::new(AtomicU64::new(0)),
            secrets: secrets.into(),
        }
    }

    /// A text of the server's as it is logged: its credentials replaced, control sequences
    /// shown as text, at most [`LOGGED_TEXT_BYTES`].
    fn logged(&self, text: &str) -> String {
        shown_message(text, &self.secrets, LOGGED_TEXT_BYTES)
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
            token = self.logged(&params.progress_token.0.to_string()),
            progress = params.progress,
            total = params.total,
            message = self.logged(params.message.as_deref().unwrap_or("")),
            "MCP progress"
        );
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let logger = self.logged(params.logger.as_deref().unwrap_or(""));
        let logger = logger.as_str();
        let data = match &params.data {
            serde_json::Value::String(text) => self.logged(text),
            other => self.logged(&other.to_string()),
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
