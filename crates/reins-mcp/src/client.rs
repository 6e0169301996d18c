//! A live connection to an MCP server ([`McpClient`]): listing and calling its tools, mapping
//! rmcp's errors to ones naming the server, and starting a crashed stdio server again (or
//! connecting again to an HTTP server that ended the session).

mod errors;

use crate::McpError;
use crate::content::McpToolResult;
use crate::handler::ClientEvents;
use crate::hidden::{Credentials, scrub};
use crate::http_client::SessionEnd;
use crate::server::{EFFECT_ID_META_KEY, McpServer};
use crate::stderr::StderrTail;
use reins::hooks::redaction::Redaction;
use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, PaginatedRequestParams, RequestMetaObject};
use rmcp::service::{RunningService, ServiceError};
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How many pages of `tools/list` are read before the list is taken for endless.
const MAX_TOOL_PAGES: usize = 100;

/// How much of the name and of the version a server gives itself is shown
/// ([`McpClient::server_version`]).
const SHOWN_SERVER_INFO_BYTES: usize = 256;

/// One opened connection: the rmcp service and what is known about the peer.
pub(crate) struct Connection {
    service: RunningService<RoleClient, ClientEvents>,
    process_id: Option<u32>,
    stderr_tail: Option<StderrTail>,
    /// Values that must not appear in errors (HTTP header values).
    secrets: Vec<(String, String)>,
    /// The same values, replaced wherever a tool's result echoes them (`echoes.rs`).
    echoes: Option<Redaction>,
    /// Over HTTP: whether the server ended the session.
    session_end: Option<SessionEnd>,
    /// Over stdio: cancelled once the server read nothing of a message for the write
    /// timeout (`stdio.rs`).
    stdin_stall: Option<CancellationToken>,
}

impl Connection {
    pub(crate) fn new(
        service: RunningService<RoleClient, ClientEvents>,
        process_id: Option<u32>,
        stderr_tail: Option<StderrTail>,
        secrets: Vec<(String, String)>,
    ) -> Self {
        Connection {
            service,
            process_id,
            stderr_tail,
            echoes: crate::echoes::redaction(&secrets),
            secrets,
            session_end: None,
            stdin_stall: None,
        }
    }

    /// The connection, over when `stall` is cancelled (the server stopped reading its input).
    pub(crate) fn stalled_with(mut self, stall: CancellationToken) -> Self {
        self.stdin_stall = Some(stall);
        self
    }

    /// Whether the stdio server stopped reading its input.
    fn stdin_stalled(&self) -> bool {
        self.stdin_stall
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// The connection, over when `session_end` says the server ended the session.
    pub(crate) fn ended_with(mut self, session_end: SessionEnd) -> Self {
        self.session_end = Some(session_end);
        self
    }

    /// Whether the connection is over: closed by the client, its service loop ended (the
    /// process exited, the transport failed), the server ended the session, or it stopped
    /// reading its input.
    fn is_dead(&self) -> bool {
        self.service.is_closed()
            || self.service.peer().is_transport_closed()
            || self.session_ended()
            || self.stdin_stalled()
    }

    /// Whether the server declared the `tools` capability in its answer to `initialize` (one
    /// without `capabilities` is read as declaring `tools`: `handshake.rs`).
    fn declares_tools(&self) -> bool {
        self.service
            .peer_info()
            .is_some_and(|info| info.capabilities.tools.is_some())
    }

    /// Whether the HTTP server ended the session (answered a request in it with 404).
    fn session_ended(&self) -> bool {
        self.session_end.as_ref().is_some_and(SessionEnd::has_ended)
    }
}

/// A connection to a running MCP server.
///
/// Cloning it is cheap and shares the connection; a stdio server's process is killed when
/// the last clone and the last of its [`McpTool`](crate::McpTool)s are dropped, or at once by
/// [`close`](McpClient::close).
///
/// Here the server is a reins [`ToolSet`](reins::tool::ToolSet) served over streamable HTTP
/// in the same process; any MCP server is reached the same way.
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::{ToolSet, ToolTraits, tool_fn};
/// use reins_mcp::{McpError, McpServer, McpService};
/// use serde_json::{Value, json};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut served = ToolSet::new();
/// served.add(
///     tool_fn("shout", "Says it louder.", |args: Value| async move {
///         Ok::<_, std::convert::Infallible>(args["text"].as_str().unwrap_or("").to_uppercase())
///     })
///     .traits(ToolTraits::read_only()),
/// );
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let server = McpService::new(served).name("echo").serve_http(listener)?;
///
/// let client = McpServer::http(server.url()).name("echo").connect().await?;
/// // Called directly…
/// let result = client.call_tool("shout", json!({"text": "hi"}), None).await?;
/// assert_eq!(result.text(), "HI");
///
/// // …or by an agent, as tools that keep what the server says about them.
/// let tools = client.tools().await?;
/// assert!(tools.iter().all(|tool| tool.traits().read_only));
/// let model = ScriptedModel::new([
///     Turn::tool_call("shout", json!({"text": "hello"})),
///     Turn::text("It said HELLO."),
/// ]);
/// let agent = AgentBuilder::new(model.clone()).tools(tools).build();
/// agent.prompt("Shout hello.").await?;
/// assert_eq!(model.requests()[1].history.last().unwrap().text(), "HELLO");
///
/// client.close();
/// assert!(matches!(
///     client.call_tool("shout", json!({"text": "again"}), None).await,
///     Err(McpError::Disconnected { .. })
/// ));
/// server.shutdown();
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct McpClient {
    pub(crate) inner: Arc<ClientInner>,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("name", &self.inner.name)
            .field("process_id", &self.process_id())
            .finish_non_exhaustive()
    }
}

pub(crate) struct ClientInner {
    pub(crate) name: String,
    pub(crate) call_timeout: Option<Duration>,
    pub(crate) max_result_bytes: usize,
    pub(crate) max_description_bytes: usize,
    pub(crate) max_schema_bytes: usize,
    pub(crate) max_tools: usize,
    pub(crate) max_tool_list_bytes: usize,
    /// What errors and warnings must not show: for the tool names and errors they quote
    /// (`errors.rs`).
    credentials: Credentials,
    server: McpServer,
    pub(crate) events: ClientEvents,
    /// The current connection; replaced when a crashed stdio server is started again.
    connection: tokio::sync::Mutex<Arc<Connection>>,
    restarts: AtomicU32,
    closed: AtomicBool,
}

impl McpClient {
    pub(crate) fn new(server: McpServer, events: ClientEvents, connection: Connection) -> Self {
        McpClient {
            inner: Arc::new(ClientInner {
                name: server.name.clone(),
                call_timeout: server.call_timeout,
                max_result_bytes: server.max_result_bytes,
                max_description_bytes: server.max_description_bytes,
                max_schema_bytes: server.max_schema_bytes,
                max_tools: server.max_tools,
                max_tool_list_bytes: server.max_tool_list_bytes,
                credentials: Credentials::new(server.secrets()),
                server,
                events,
                connection: tokio::sync::Mutex::new(Arc::new(connection)),
                restarts: AtomicU32::new(0),
                closed: AtomicBool::new(false),
            }),
        }
    }

    /// The server's name, as errors and hooks see it.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The id of a stdio server's current process (while the operating system reports one).
    pub fn process_id(&self) -> Option<u32> {
        self.inner.current().and_then(|c| c.process_id)
    }

    /// The name and version the server gave in the handshake, as the server wrote them
    /// unless it made them unfit to print: its credentials replaced, control sequences shown
    /// as text, each cut to 256 bytes.
    pub fn server_version(&self) -> Option<(String, String)> {
        let connection = self.inner.current()?;
        let info = connection.service.peer_info()?;
        let implementation = info.server_info.as_ref()?;
        let shown = |what: &str, text: &str| {
            let text = reins::text::printable(&scrub(text, &connection.secrets)).into_owned();
            crate::content::cut_to(what, text, SHOWN_SERVER_INFO_BYTES)
        };
        Some((
            shown("server's name", &implementation.name),
            shown("server's version", &implementation.version),
        ))
    }

    /// Whether the connection is closed (the process exited, an HTTP server ended the session,
    /// or [`close`](McpClient::close) was called). A stdio connection whose process exited,
    /// or an HTTP one whose session the server ended, is opened again on the next request,
    /// within [`McpServer::max_restarts`], unless it was closed by [`close`](McpClient::close).
    pub fn is_closed(&self) -> bool {
        self.inner
            .current()
            .is_none_or(|connection| connection.is_dead())
    }

    /// How many times the server was started again after it died (or, over HTTP, connected to
    /// again after it ended the session).
    pub fn restarts(&self) -> u32 {
        self.inner.restarts.load(Ordering::Acquire)
    }

    /// Whether the server sent `notifications/tools/list_changed` since the last
    /// [`tools`](McpClient::tools) (or was started again): its tools should be listed again,
    /// with [`McpTools::refresh`](crate::McpTools::refresh).
    pub fn tools_changed(&self) -> bool {
        self.inner.events.tools_changed.load(Ordering::Acquire)
    }

    /// Whether the tool list changed since a listing that saw `generation`.
    pub(crate) fn tools_changed_since(&self, generation: u64) -> bool {
        self.inner.events.tools_generation() != generation
    }

    /// Calls the tool `name` with `arguments` (a JSON object, or `null` for none), within the
    /// call timeout. `effect_id`, when given, is sent in the request's `_meta` under
    /// [`EFFECT_ID_META_KEY`]. A result with `isError: true` is returned as is (see
    /// [`McpToolResult::is_error`]); [`McpTool`](crate::McpTool) turns it into a tool failure.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        effect_id: Option<&str>,
    ) -> Result<McpToolResult, McpError> {
        self.inner
            .call_tool(name, arguments, effect_id, self.inner.call_timeout)
            .await
    }

    /// Shuts the connection down and kills a stdio server's process now; every clone and tool
    /// of this client fails with [`McpError::Disconnected`] afterwards.
    pub fn close(&self) {
        self.inner.closed.store(true, Ordering::Release);
        if let Some(connection) = self.inner.current() {
            connection.service.cancellation_token().cancel();
        }
    }
}

impl ClientInner {
    /// The current connection, unless another task is replacing it right now.
    fn current(&self) -> Option<Arc<Connection>> {
        self.connection.try_lock().ok().map(|guard| guard.clone())
    }

    /// The connection to send a request on: the current one, or, when a stdio server died or
    /// an HTTP server ended the session, and restarts are left, a new one.
    async fn live(&self, operation: &str) -> Result<Arc<Connection>, McpError> {
        let mut current = self.connection.lock().await;
        if !current.is_dead() {
            return Ok(current.clone());
        }
        let session_ended = current.session_ended();
        let restartable = (self.server.is_stdio() || session_ended)
            && !self.closed.load(Ordering::Acquire)
            && self.restarts.load(Ordering::Acquire) < self.server.max_restarts;
        if !restartable {
            return Err(self.disconnected(&current, operation).await);
        }
        self.restarts.fetch_add(1, Ordering::AcqRel);
        let restart = self.restarts.load(Ordering::Acquire);
        if session_ended {
            tracing::warn!(target: "reins_mcp", server = %self.name, restart, "MCP server ended the session; connecting again");
        } else {
            tracing::warn!(target: "reins_mcp", server = %self.name, restart, "MCP server exited; starting it again");
        }
        let connection = Arc::new(self.server.open(self.events.clone()).await?);
        // The new process (or session) may have other tools; the caller should list them again.
        self.events.mark_tools_changed();
        *current = connection.clone();
        Ok(connection)
    }

    /// Lists the server's tools, giving each page to `take` as it arrives (so that no more
    /// than a page is held unread); a page `take` answers `false` to is the last asked for.
    pub(crate) async fn list_tools(
        &self,
        mut take: impl FnMut(Vec<rmcp::model::Tool>) -> bool,
    ) -> Result<(), McpError> {
        let operation = "tools/list";
        let connection = self.live(operation).await?;
        self.events.take_tools_changed();
        // A server that did not declare the `tools` capability is not asked: it may answer
        // with an error, or never.
        if !connection.declares_tools() {
            tracing::warn!(
                target: "reins_mcp",
                server = %self.name,
                "the MCP server declares no `tools` capability in its handshake; it offers no \
                 tools, and none are listed"
            );
            return Ok(());
        }
        let listing = async {
            let mut cursor = None;
            // The cursors followed: one named again would make the listing go round.
            let mut followed = std::collections::HashSet::new();
            for _ in 0..MAX_TOOL_PAGES {
                let params = PaginatedRequestParams::default().with_cursor(cursor);
                let page = connection.service.list_tools(Some(params)).await?;
                // A credential the server quotes in its tools goes no further (`echoes.rs`).
                let tools = match &connection.echoes {
                    Some(echoes) => page
                        .tools
                        .into_iter()
                        .map(|tool| crate::echoes::scrubbed_tool(tool, echoes))
                        .collect(),
                    None => page.tools,
                };
                if !take(tools) {
                    return Ok(Some(true));
                }
                match page.next_cursor {
                    Some(next) if !followed.insert(next.clone()) => return Ok(Some(false)),
                    Some(next) => cursor = Some(next),
                    None => return Ok(Some(true)),
                }
            }
            Ok(None)
        };
        match self
            .with_limit(&connection, operation, self.call_timeout, listing)
            .await?
        {
            Some(true) => Ok(()),
            // The cursor is not quoted: the server writes it, and it may be anything.
            Some(false) => Err(self.listing_error(
                "the tool list goes round: a page named as the next one a nextCursor an \
                 earlier page had named"
                    .to_owned(),
            )),
            // A server whose every page names a next one would be listed forever.
            None => Err(self.listing_error(format!(
                "the tool list did not end after {MAX_TOOL_PAGES} pages (every page gave a nextCursor)"
            ))),
        }
    }

    /// The error of a tool list that does not end, saying why.
    fn listing_error(&self, message: String) -> McpError {
        McpError::Protocol {
            server: self.name.clone(),
            operation: "tools/list".to_owned(),
            message,
        }
    }

    pub(crate) async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        effect_id: Option<&str>,
        timeout: Option<Duration>,
    ) -> Result<McpToolResult, McpError> {
        let arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Err(McpError::InvalidArguments {
                    server: self.name.clone(),
                    tool: self.shown_tool_name(name),
                    found: reins::text::json_kind(&other),
                });
            }
        };
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = arguments;
        // rmcp gives every request its own progress token, which invites the server to report
        // progress (to `tracing`, by the handler).
        if let Some(effect_id) = effect_id {
            let mut meta = RequestMetaObject::default();
            meta.0
                .insert(EFFECT_ID_META_KEY.to_owned(), Value::from(effect_id));
            params.meta = Some(meta);
        }
        let operation = format!("tools/call {}", self.shown_tool_name(name));
        let connection = self.live(&operation).await?;
        let result = self
            .with_limit(
                &connection,
                &operation,
                timeout,
                connection.service.call_tool(params),
            )
            .await?;
        // A credential the server echoed goes no further (`echoes.rs`).
        let result = McpToolResult::from_rmcp(result);
        Ok(match &connection.echoes {
            Some(echoes) => crate::echoes::scrubbed(result, echoes),
            None => result,
        })
    }

    /// Runs one request within `limit`, mapping rmcp's errors to ones naming the server.
    /// Dropping the request (the timeout, or the caller dropping this future) makes rmcp
    /// send `notifications/cancelled`.
    async fn with_limit<T>(
        &self,
        connection: &Connection,
        operation: &str,
        limit: Option<Duration>,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, McpError> {
        let result = match limit {
            Some(limit) => match tokio::time::timeout(limit, request).await {
                Ok(result) => result,
                Err(_) => {
                    return Err(McpError::Timeout {
                        server: self.name.clone(),
                        operation: operation.to_owned(),
                        after: limit,
                    });
                }
            },
            None => request.await,
        };
        match result {
            Ok(value) => Ok(value),
            Err(error) => Err(self.service_error(connection, operation, error).await),
        }
    }
}
