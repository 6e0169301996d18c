use crate::McpError;
use crate::content::McpToolResult;
use crate::tool::{McpTool, McpTools};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, MetaObject,
    RequestMetaObject,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::future::Future;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStderr;

/// The `_meta` key under which a call's effect id is sent to the server.
pub const EFFECT_ID_META_KEY: &str = "reins/effectId";

/// How long [`McpServer::connect`] waits for the handshake unless told otherwise.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one request may take unless told otherwise.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// How many of the server's last standard-error lines are kept for error messages.
const STDERR_LINES: usize = 20;

/// How an MCP server is started: a command run as a child process that speaks MCP over its
/// standard input and output. [`connect`](McpServer::connect) starts it.
///
/// ```no_run
/// use reins_mcp::McpServer;
/// use std::time::Duration;
///
/// # async fn run() -> Result<(), reins_mcp::McpError> {
/// let time = McpServer::stdio("python3", ["-m", "mcp_server_time"])
///     .name("time")
///     .env("TZ", "UTC")
///     .call_timeout(Duration::from_secs(10))
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct McpServer {
    name: String,
    command: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    env_removed: Vec<OsString>,
    current_dir: Option<PathBuf>,
    connect_timeout: Duration,
    call_timeout: Option<Duration>,
}

impl McpServer {
    /// A server started as `command args...`, speaking MCP over stdio. Its name (used in
    /// errors and available to hooks) defaults to the command line; set it with
    /// [`name`](McpServer::name).
    pub fn stdio<I, S>(command: impl Into<OsString>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let command = command.into();
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        let name = std::iter::once(&command)
            .chain(&args)
            .map(|part| part.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ");
        McpServer {
            name,
            command,
            args,
            env: Vec::new(),
            env_removed: Vec::new(),
            current_dir: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            call_timeout: Some(DEFAULT_CALL_TIMEOUT),
        }
    }

    /// Names the server: errors say which server failed by this name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Sets an environment variable of the server's process (it inherits the rest).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Sets several environment variables of the server's process.
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        self.env
            .extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Removes an inherited environment variable from the server's process (a secret it
    /// should not see, say).
    pub fn env_remove(mut self, key: impl Into<OsString>) -> Self {
        self.env_removed.push(key.into());
        self
    }

    /// The working directory of the server's process (by default, this process's).
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.current_dir = Some(dir.into());
        self
    }

    /// How long the start and the MCP handshake may take ([`DEFAULT_CONNECT_TIMEOUT`]).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long one request (a tool call, a page of the tool list) may take
    /// ([`DEFAULT_CALL_TIMEOUT`]). A tool call past it fails with
    /// [`ToolFailure::Timeout`](reins::tool::ToolFailure::Timeout) and the server is sent
    /// `notifications/cancelled`.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = Some(timeout);
        self
    }

    /// Lets requests take as long as the server needs.
    pub fn no_call_timeout(mut self) -> Self {
        self.call_timeout = None;
        self
    }

    /// Starts the server's process and performs the MCP handshake.
    ///
    /// Fails with [`McpError::Spawn`] when the command cannot be started,
    /// [`McpError::Handshake`] when the process exits or does not speak MCP (with the end of
    /// its standard error), and [`McpError::Timeout`] past the connect timeout; the process is
    /// killed in the last two cases.
    pub async fn connect(self) -> Result<McpClient, McpError> {
        let mut command = tokio::process::Command::new(&self.command);
        command.args(&self.args).kill_on_drop(true);
        for key in &self.env_removed {
            command.env_remove(key);
        }
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.current_dir {
            command.current_dir(dir);
        }
        let (transport, stderr) = TokioChildProcess::builder(command)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| McpError::Spawn {
                server: self.name.clone(),
                command: self.command.to_string_lossy().into_owned(),
                source,
            })?;
        let process_id = transport.id();
        let stderr_tail = StderrTail::default();
        match stderr {
            Some(stderr) => stderr_tail.follow(self.name.clone(), stderr),
            None => stderr_tail.lock().closed = true,
        }
        let config = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("reins", env!("CARGO_PKG_VERSION")),
        );
        let service =
            match tokio::time::timeout(self.connect_timeout, config.serve(transport)).await {
                Ok(Ok(service)) => service,
                Ok(Err(error)) => {
                    return Err(McpError::Handshake {
                        server: self.name,
                        message: error.to_string(),
                        stderr: stderr_tail.settled().await,
                    });
                }
                Err(_) => {
                    return Err(McpError::Timeout {
                        server: self.name,
                        operation: "initialize".to_owned(),
                        after: self.connect_timeout,
                    });
                }
            };
        Ok(McpClient {
            inner: Arc::new(ClientInner {
                name: self.name,
                service,
                call_timeout: self.call_timeout,
                process_id,
                stderr_tail,
            }),
        })
    }
}

/// A connection to a running MCP server.
///
/// Cloning it is cheap and shares the connection; the server's process is killed when the
/// last clone and the last of its [`McpTool`]s are dropped, or at once by
/// [`close`](McpClient::close).
#[derive(Clone)]
pub struct McpClient {
    pub(crate) inner: Arc<ClientInner>,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("name", &self.inner.name)
            .field("process_id", &self.inner.process_id)
            .finish_non_exhaustive()
    }
}

pub(crate) struct ClientInner {
    pub(crate) name: String,
    service: RunningService<RoleClient, ClientConfig>,
    pub(crate) call_timeout: Option<Duration>,
    process_id: Option<u32>,
    stderr_tail: StderrTail,
}

impl McpClient {
    /// The server's name, as errors and hooks see it.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The id of the server's process (while the operating system reports one).
    pub fn process_id(&self) -> Option<u32> {
        self.inner.process_id
    }

    /// The name and version the server gave in the handshake.
    pub fn server_version(&self) -> Option<(String, String)> {
        let info = self.inner.service.peer_info()?;
        let implementation = info.server_info.as_ref()?;
        Some((implementation.name.clone(), implementation.version.clone()))
    }

    /// Whether the connection is closed (the process exited, or [`close`](McpClient::close)
    /// was called).
    pub fn is_closed(&self) -> bool {
        self.inner.service.is_closed()
    }

    /// Every tool of the server (following `nextCursor` through all pages), as reins tools.
    /// Narrow them with [`McpTools::filter`] and name them with [`McpTools::prefix`].
    pub async fn tools(&self) -> Result<McpTools, McpError> {
        let operation = "tools/list";
        let listed = self
            .inner
            .with_limit(
                operation,
                self.inner.call_timeout,
                self.inner.service.list_all_tools(),
            )
            .await?;
        let tools = listed
            .into_iter()
            .map(|tool| McpTool::new(self.inner.clone(), tool))
            .collect();
        Ok(McpTools::new(tools))
    }

    /// Calls the tool `name` with `arguments` (a JSON object, or `null` for none), within the
    /// call timeout. `effect_id`, when given, is sent in the request's `_meta` under
    /// [`EFFECT_ID_META_KEY`]. A result with `isError: true` is returned as is (see
    /// [`McpToolResult::is_error`]); [`McpTool`] turns it into a tool failure.
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

    /// Shuts the connection down and kills the server's process now; every clone and tool of
    /// this client fails with [`McpError::Disconnected`] afterwards.
    pub fn close(&self) {
        self.inner.service.cancellation_token().cancel();
    }
}

impl ClientInner {
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
                    tool: name.to_owned(),
                    found: json_kind(&other),
                });
            }
        };
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = arguments;
        if let Some(effect_id) = effect_id {
            let mut meta = MetaObject::new();
            meta.0
                .insert(EFFECT_ID_META_KEY.to_owned(), Value::from(effect_id));
            params.meta = Some(RequestMetaObject(meta));
        }
        let operation = format!("tools/call {name}");
        let result = self
            .with_limit(&operation, timeout, self.service.call_tool(params))
            .await?;
        Ok(McpToolResult::from_rmcp(result))
    }

    /// Runs one request within `limit`, mapping rmcp's errors to ones naming the server.
    /// Dropping the request (the timeout) makes rmcp send `notifications/cancelled`.
    async fn with_limit<T>(
        &self,
        operation: &str,
        limit: Option<Duration>,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, McpError> {
        if self.service.is_closed() {
            return Err(self.disconnected(operation).await);
        }
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
            Err(error) => Err(self.service_error(operation, error).await),
        }
    }

    async fn service_error(&self, operation: &str, error: ServiceError) -> McpError {
        match error {
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                self.disconnected(operation).await
            }
            ServiceError::Cancelled { .. } if self.service.is_closed() => {
                self.disconnected(operation).await
            }
            ServiceError::Timeout { timeout } => McpError::Timeout {
                server: self.name.clone(),
                operation: operation.to_owned(),
                after: timeout,
            },
            ServiceError::McpError(data) => McpError::Protocol {
                server: self.name.clone(),
                operation: operation.to_owned(),
                message: data.message.into_owned(),
            },
            other => McpError::Protocol {
                server: self.name.clone(),
                operation: operation.to_owned(),
                message: other.to_string(),
            },
        }
    }

    async fn disconnected(&self, operation: &str) -> McpError {
        McpError::Disconnected {
            server: self.name.clone(),
            operation: operation.to_owned(),
            stderr: self.stderr_tail.settled().await,
        }
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The last lines the server wrote to its standard error; each line also goes to `tracing`
/// (debug level, target `reins_mcp::stderr`).
#[derive(Clone, Default)]
struct StderrTail {
    state: Arc<Mutex<TailState>>,
}

#[derive(Default)]
struct TailState {
    lines: VecDeque<String>,
    closed: bool,
}

impl StderrTail {
    fn follow(&self, server: String, stderr: ChildStderr) {
        let state = self.state.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(target: "reins_mcp::stderr", server = %server, "{line}");
                let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
                if state.lines.len() == STDERR_LINES {
                    state.lines.pop_front();
                }
                state.lines.push_back(line);
            }
            state.lock().unwrap_or_else(PoisonError::into_inner).closed = true;
        });
    }

    /// The kept lines, once the stream has ended (or after a short wait: a server that is
    /// still running may never close it).
    async fn settled(&self) -> String {
        for _ in 0..50 {
            if self.lock().closed {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let state = self.lock();
        state.lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TailState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
