//! The server side: a reins [`ToolSet`] (tools, or whole agents as [`AgentTool`]s) served to
//! MCP clients over stdio or streamable HTTP, with rmcp's server API.

mod accept;
mod agent_tool;
mod http;
mod requests;
mod sessions;
mod stdio;

pub use accept::accept_connection;

pub use agent_tool::{AgentTool, AgentToolArgs};
pub use http::{
    DEFAULT_HTTP_BODY_TIMEOUT, DEFAULT_HTTP_HEADER_TIMEOUT, DEFAULT_MAX_HTTP_CONNECTIONS,
    DEFAULT_MAX_HTTP_SESSIONS, McpHttpServer,
};

use crate::server::EFFECT_ID_META_KEY;
use reins::tool::{RetrySafety, ToolCallContext, ToolDefinition, ToolOutcome, ToolOutput, ToolSet};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, ErrorData, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool as RmcpTool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// A reins [`ToolSet`] as an MCP server: `tools/list` lists the set's tools with their
/// schemas (the same `schemars` types the agent's model sees) and what each declares about
/// itself as its annotations (its [`ToolTraits`](reins::tool::ToolTraits) as `readOnlyHint`,
/// `destructiveHint`, `idempotentHint` and `openWorldHint`; [`RetrySafety::Idempotent`] as
/// `idempotentHint`); `tools/call` runs one.
///
/// A tool's output is a text block (JSON output as its text, and, when it is an object, as
/// `structuredContent` too); a failed call is a result with `isError: true` carrying the
/// failure's text, so the client's model reads it; an unknown tool, or `arguments` that are
/// not an object, is a protocol error (invalid params; `arguments` left out are none). A
/// call's `_meta` effect id (under [`EFFECT_ID_META_KEY`]) becomes the id of the call its
/// tool sees in [`ToolCallContext`], so a reins client's resumed run reaches the served tool
/// with the same id (without one, the id is `mcp-<request id>`). A client's
/// `notifications/cancelled` drops the running call.
///
/// A client is held to the protocol's rules in each session (a stdio connection, an HTTP
/// session): `initialize` sent again once its handshake is made, or a request sent under the
/// id of one of its requests still running, is answered with an invalid-request error
/// (`-32600`) by its id, saying why, and never run (the request already running under that
/// id is answered as usual); the session goes on. Over HTTP, a request naming a session the
/// server does not know (never opened, or ended) is answered `404`, a `DELETE` too, so the
/// client knows to initialize a new one.
///
/// ```no_run
/// use reins::agent::AgentBuilder;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::{ToolSet, tool_fn};
/// use reins_mcp::{AgentTool, McpService};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("Paris.")])).build();
/// let mut tools = ToolSet::new();
/// tools.add(tool_fn("shout", "Upper-cases a text.", |text: String| async move {
///     Ok::<_, std::convert::Infallible>(text.to_uppercase())
/// }));
/// tools.add(AgentTool::new("ask_researcher", "Researches a question.", agent));
/// // For an MCP client that starts this program (Claude Desktop, an IDE):
/// McpService::new(tools.clone()).name("research").serve_stdio().await?;
/// // Or over streamable HTTP, at `served.url()` (`http://127.0.0.1:8931/mcp`):
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8931").await?;
/// let served = McpService::new(tools).serve_http_with_bearer_token(listener, "s3cret")?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct McpService {
    tools: Arc<ToolSet>,
    name: String,
    version: String,
    instructions: Option<String>,
    page_size: Option<usize>,
    http_header_timeout: Duration,
    http_body_timeout: Duration,
    max_http_connections: usize,
    /// Host names (or `host:port`) accepted beyond loopback when serving HTTP without a token.
    allowed_hosts: Vec<String>,
    /// Browser origins accepted beyond loopback when serving HTTP without a token.
    allowed_origins: Vec<String>,
    max_http_sessions: usize,
    max_concurrent_calls: usize,
    /// A permit for each call running, shared by every session's clone of the service.
    running_calls: Arc<tokio::sync::Semaphore>,
}

/// How many tool calls a served tool set runs at once unless told otherwise
/// ([`McpService::max_concurrent_calls`]).
pub const DEFAULT_MAX_CONCURRENT_CALLS: usize = 64;

impl McpService {
    /// Serves `tools`. The server calls itself `reins` (see [`name`](McpService::name)).
    pub fn new(tools: ToolSet) -> Self {
        McpService {
            tools: Arc::new(tools),
            name: "reins".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            instructions: None,
            page_size: None,
            http_header_timeout: DEFAULT_HTTP_HEADER_TIMEOUT,
            http_body_timeout: DEFAULT_HTTP_BODY_TIMEOUT,
            max_http_connections: DEFAULT_MAX_HTTP_CONNECTIONS,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_http_sessions: DEFAULT_MAX_HTTP_SESSIONS,
            max_concurrent_calls: DEFAULT_MAX_CONCURRENT_CALLS,
            running_calls: Arc::new(tokio::sync::Semaphore::new(DEFAULT_MAX_CONCURRENT_CALLS)),
        }
    }

    /// The name the server gives clients in the handshake.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The version the server gives clients in the handshake (reins-mcp's by default).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Instructions for the client's model on using the server.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Lists at most `size` tools per `tools/list` page (the cursor of the next page is the
    /// index of its first tool); by default every tool is on one page.
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = Some(size.max(1));
        self
    }

    /// Served over HTTP, how long a client may take to send a request's headers
    /// ([`DEFAULT_HTTP_HEADER_TIMEOUT`]): a connection still sending them then, or idle that
    /// long between requests, is closed, so clients that trickle bytes (or send none) cannot
    /// hold connections open. No effect over stdio.
    pub fn http_header_timeout(mut self, timeout: Duration) -> Self {
        self.http_header_timeout = timeout;
        self
    }

    /// Served over HTTP, how long a client may take to send a request's body once its
    /// headers arrived ([`DEFAULT_HTTP_BODY_TIMEOUT`]): a body still arriving then is answered
    /// `408` and its connection closed, so a client that trickles a body cannot hold a
    /// connection. No effect over stdio.
    pub fn http_body_timeout(mut self, timeout: Duration) -> Self {
        self.http_body_timeout = timeout;
        self
    }

    /// Served over HTTP, how many connections are open at once
    /// ([`DEFAULT_MAX_HTTP_CONNECTIONS`], at least 1); a connection accepted past it is
    /// closed at once, unanswered. A streamable HTTP client usually keeps a few open. No
    /// effect over stdio.
    pub fn max_http_connections(mut self, connections: usize) -> Self {
        self.max_http_connections = connections.clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
        self
    }

    /// How many tool calls run at once, over every client and session
    /// ([`DEFAULT_MAX_CONCURRENT_CALLS`], at least 1); a call arriving while that many run is
    /// answered at once with a tool error saying so (the client's model reads it). A client
    /// that hangs up does not end its call (MCP does not take a disconnection for a
    /// cancellation; `notifications/cancelled` does), so without a cap one client could
    /// start any number of calls, one connection after another.
    pub fn max_concurrent_calls(mut self, calls: usize) -> Self {
        let calls = calls.clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
        self.max_concurrent_calls = calls;
        self.running_calls = Arc::new(tokio::sync::Semaphore::new(calls));
        self
    }

    /// Served over HTTP, how many sessions are open at once ([`DEFAULT_MAX_HTTP_SESSIONS`],
    /// at least 1); a client's `initialize` past it is answered `503`. A session lasts until
    /// its client ends it (`DELETE`) or for minutes idle, so a client opening one after
    /// another would otherwise hold any number of them. No effect over stdio.
    pub fn max_http_sessions(mut self, sessions: usize) -> Self {
        self.max_http_sessions = sessions.max(1);
        self
    }

    /// Served over HTTP without a bearer token, a `Host` a request may name besides the
    /// loopback ones (`localhost`, `127.0.0.1`, `::1`): a host name (any port) or
    /// `host:port`, such as the name a reverse proxy forwards. Loopback alone is accepted by
    /// default, so a web page whose name an attacker re-points at this machine (DNS
    /// rebinding) cannot call the tools. With a bearer token any `Host` is accepted: the
    /// token is what the caller must know. No effect over stdio.
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into());
        self
    }

    /// Served over HTTP without a bearer token, a web page's origin (`Origin` header) a
    /// request may come from besides loopback pages (`http://localhost:*` and the like), as
    /// `scheme://host:port` (`:*` for any port), such as a browser-based client's. A request
    /// with another `Origin` is refused `403` (the MCP specification asks servers to), so a
    /// page of another site cannot call the tools through a visitor's browser; a request with
    /// none (any client that is not a browser) is served. With a bearer token any origin is
    /// accepted: the token is what the caller must know. No effect over stdio.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// The served tools.
    pub fn tools(&self) -> &ToolSet {
        &self.tools
    }

    /// Serves one client on this process's standard input and output until it disconnects.
    /// While 64 answers wait for the client to read them, no more of its input is read (its
    /// writes then block), so a client that does not read cannot grow the server's memory;
    /// a request over 16 MiB, or whose JSON would take over 32 MiB once parsed, is answered
    /// with an invalid-request error saying why, unparsed.
    pub async fn serve_stdio(self) -> std::io::Result<()> {
        let (input, output) = rmcp::transport::stdio();
        self.serve_io(input, output).await
    }

    /// Serves one client on `input` and `output` (the halves of a socket or of a pipe) as
    /// [`serve_stdio`](McpService::serve_stdio) serves it on standard input and output: one
    /// message a line each way, until the client's input ends.
    pub async fn serve_io<R, W>(self, input: R, output: W) -> std::io::Result<()>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let running = self
            .serve(stdio::StdioServerTransport::new(input, output))
            .await
            .map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    }

    /// Serves clients over streamable HTTP on `listener`, at the path `/mcp`, until the
    /// returned server is shut down or dropped. Only loopback `Host` headers are accepted
    /// (against DNS rebinding) unless [`allow_host`](McpService::allow_host) names more, and
    /// only loopback pages' `Origin`s unless [`allow_origin`](McpService::allow_origin) does;
    /// see [`McpHttpServer`] for a bearer token, and
    /// [`http_header_timeout`](McpService::http_header_timeout),
    /// [`http_body_timeout`](McpService::http_body_timeout) and
    /// [`max_http_connections`](McpService::max_http_connections) for what bounds clients.
    pub fn serve_http(self, listener: tokio::net::TcpListener) -> std::io::Result<McpHttpServer> {
        McpHttpServer::start(self, listener, None)
    }

    /// Like [`serve_http`](McpService::serve_http), answering `401` to any request without
    /// `Authorization: Bearer <token>`, and to clients anywhere: a request may name any
    /// `Host` (the server's public name, say), since the token, not the address, is what
    /// keeps others out.
    pub fn serve_http_with_bearer_token(
        self,
        listener: tokio::net::TcpListener,
        token: impl Into<String>,
    ) -> std::io::Result<McpHttpServer> {
        McpHttpServer::start(self, listener, Some(token.into()))
    }

    async fn run_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let name = request.name.to_string();
        if !self.tools.contains(&name) {
            return Err(ErrorData::invalid_params(
                format!("no tool named `{name}`"),
                None,
            ));
        }
        // Held until the call ends, or is dropped.
        let Ok(_running) = self.running_calls.try_acquire() else {
            return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "the server is already running {} calls, as many as it runs at once; try \
                 again once one has ended",
                self.max_concurrent_calls
            ))]));
        };
        // rmcp hands the request's `_meta` over in the context.
        let effect_id = std::iter::once(&context.meta)
            .chain(request.meta.as_ref())
            .find_map(|meta| meta.0.get(EFFECT_ID_META_KEY))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let call_id = effect_id.unwrap_or_else(|| format!("mcp-{}", context.id));
        let call_context = ToolCallContext::new("mcp", call_id.clone(), call_id);
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        // A client's `notifications/cancelled` cancels the token: the call is dropped.
        let execution = tokio::select! {
            execution = self.tools.call(&name, &arguments, call_context) => execution,
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("the call was cancelled", None));
            }
        };
        let text = execution.output.render();
        Ok(match execution.outcome {
            ToolOutcome::Success => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
                if let ToolOutput::Json(value @ Value::Object(_)) = execution.output {
                    result.structured_content = Some(value);
                }
                result
            }
            _ => CallToolResult::error(vec![ContentBlock::text(text)]),
        })
    }
}

/// A reins tool definition as an MCP tool: the parameters schema is the `inputSchema` (MCP
/// requires an object schema; anything else is wrapped as an object without properties), and
/// what the tool declares about itself its annotations (see [`annotations`]).
fn mcp_tool(definition: &ToolDefinition, tools: &ToolSet) -> RmcpTool {
    let schema = match &definition.parameters {
        Value::Object(schema) if schema.get("type") == Some(&Value::from("object")) => {
            schema.clone()
        }
        _ => {
            let mut schema = Map::new();
            schema.insert("type".to_owned(), Value::from("object"));
            schema
        }
    };
    let tool = RmcpTool::new(
        definition.name.clone(),
        definition.description.clone(),
        Arc::new(schema),
    );
    match annotations(tools, &definition.name) {
        Some(annotations) => tool.with_annotations(annotations),
        None => tool,
    }
}

/// The annotations of the tool `name`, so a client's approval rules see what it is: its
/// [`ToolTraits`](reins::tool::ToolTraits), with `idempotentHint` also set when it declares
/// calls safe to repeat ([`RetrySafety::Idempotent`], which a client then runs again after a
/// crash). A tool that declares neither has none: MCP's defaults are then the worst case, as
/// reins' are.
fn annotations(tools: &ToolSet, name: &str) -> Option<ToolAnnotations> {
    let repeatable = tools.retry_safety(name) == RetrySafety::Idempotent;
    match tools.traits(name) {
        Some(traits) => Some(
            ToolAnnotations::new()
                .read_only(traits.read_only)
                .destructive(traits.destructive)
                .idempotent(traits.idempotent || repeatable)
                .open_world(traits.open_world),
        ),
        None if repeatable => Some(ToolAnnotations::new().idempotent(true)),
        None => None,
    }
}

impl ServerHandler for McpService {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(self.name.clone(), self.version.clone()));
        if let Some(instructions) = &self.instructions {
            info = info.with_instructions(instructions.clone());
        }
        info
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let definitions = self.tools.definitions();
        let start = match request.and_then(|request| request.cursor) {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|start| *start <= definitions.len())
                .ok_or_else(|| ErrorData::invalid_params("unknown cursor", None))?,
        };
        let end = match self.page_size {
            Some(size) => definitions.len().min(start.saturating_add(size)),
            None => definitions.len(),
        };
        let listed = definitions[start..end]
            .iter()
            .map(|definition| mcp_tool(definition, &self.tools));
        let mut result = ListToolsResult::with_all_items(listed.collect());
        if end < definitions.len() {
            result.next_cursor = Some(end.to_string());
        }
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<RmcpTool> {
        self.tools
            .definitions()
            .iter()
            .find(|definition| definition.name == name)
            .map(|definition| mcp_tool(definition, &self.tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.run_tool(request, context)
            .await
            .map(CallToolResponse::from)
    }

    /// rmcp hands over as a custom request any request it could not read, a method it
    /// serves among them when its `params` are not what MCP asks for (`arguments` a list or
    /// a string, `params` left out): such a request is answered invalid params (`-32602`)
    /// saying what is asked for, not "method not found", which told the client the server
    /// serves no tools.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let asked = match request.method.as_str() {
            "tools/call" => {
                "`tools/call` takes `params` with a string `name` and, if any, an object \
                 `arguments`"
            }
            "tools/list" => "`tools/list` takes no `params` but, if any, a string `cursor`",
            "initialize" | "ping" => "its `params` are not what MCP asks for",
            _ => {
                return Err(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    request.method,
                    None,
                ));
            }
        };
        Err(ErrorData::invalid_params(asked, None))
    }
}
