//! [Model Context Protocol](https://modelcontextprotocol.io) servers' tools as reins tools.
//!
//! [`McpServer::stdio`] says how to start a server (a command speaking MCP over its standard
//! input and output, with its environment, working directory and timeouts), and
//! [`McpServer::http`] how to reach one over streamable HTTP (a URL, with a bearer token or
//! other headers that never show in `Debug` output or errors);
//! [`connect`](McpServer::connect) starts or reaches it and performs the handshake, giving an
//! [`McpClient`]. [`McpClient::tools`] lists every tool of the server (all pages) as
//! [`McpTool`]s — reins [`Tool`](reins::tool::Tool)s whose parameters are the server's
//! `inputSchema` — which an agent takes like any other tool, so hooks, approvals and
//! durable runs apply to them unchanged. The protocol is [`rmcp`]'s, the official Rust SDK.
//!
//! A server's tools on an agent, behind an approval policy (the README's example, compiled
//! here):
//!
//! ```no_run
//! use reins::agent::AgentBuilder;
//! use reins::hooks::approval::{ApprovalPolicy, Rule};
//! use reins::testing::{ScriptedModel, Turn};
//! use reins_mcp::McpServer;
//! use serde_json::json;
//! use std::time::Duration;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // `python3 -m pip install mcp-server-time` provides this server.
//! let time = McpServer::stdio("python3", ["-m", "mcp_server_time"])
//!     .name("time") // errors name the server
//!     .call_timeout(Duration::from_secs(10))
//!     .connect()
//!     .await?;
//! let search = McpServer::http("https://mcp.example.com/mcp")
//!     .bearer_token(std::env::var("SEARCH_TOKEN")?) // or .header(name, value)
//!     .connect()
//!     .await?;
//! let tools = time.tools().await?.prefix("time_"); // every page; .filter/.only/.except
//!
//! // Each tool declares its annotations (readOnlyHint & co.) as its ToolTraits, which hooks
//! // see at dispatch and a policy's trait rules use: allow what is read-only.
//! let policy = ApprovalPolicy::new().rule(Rule::allow("*").when_traits(|t| t.read_only));
//!
//! let model = ScriptedModel::new([
//!     Turn::tool_call("time_get_current_time", json!({"timezone": "Europe/Paris"})),
//!     Turn::text("Done."),
//! ]);
//! let agent = AgentBuilder::new(model)
//!     .tools(tools)
//!     // As a source, a server's tools follow `notifications/tools/list_changed`.
//!     .tool_source(search.tools().await?.prefix("search_").into_source())
//!     .add_hook(policy)
//!     .build();
//! println!("{}", agent.prompt("What time is it in Paris?").await?);
//! # Ok(())
//! # }
//! ```
//!
//! What MCP says about each tool is kept: its server's name, and its annotations
//! ([`McpToolAnnotations`]: `readOnlyHint`, `destructiveHint`, `idempotentHint`,
//! `openWorldHint`), which each tool declares as its
//! [`ToolTraits`](reins::tool::ToolTraits): hooks read them at dispatch
//! ([`DispatchEvent::tool_traits`](reins::agent::DispatchEvent::tool_traits)) and an
//! [`ApprovalPolicy`](reins::hooks::approval::ApprovalPolicy)'s rules use them, so that one
//! rule can say "ask before any destructive tool" ([`McpTools::register_traits`] tells a
//! policy them by name as well, for a policy that outlives the tools). Each call carries its effect id in the request's `_meta`
//! (under [`EFFECT_ID_META_KEY`]), so a server that deduplicates can make a resumed run's
//! calls exactly-once.
//!
//! Faults name the server ([`McpError`]): a command that cannot start or exits at once (with
//! the end of its standard error), a server that dies mid-run, a call past its timeout (the
//! server is sent `notifications/cancelled`), a stdio server that stops reading its input
//! while it runs on ([`McpError::Stalled`], once a write waits past
//! [`McpServer::write_timeout`]; the server is ended). A stdio server that died (or stalled) is started again on
//! the next request, a bounded number of times ([`McpServer::max_restarts`]); its process is
//! killed (with every process it started) when the client and its tools are dropped.
//! Progress notifications and the server's log messages go to `tracing` (targets `reins_mcp::progress`, `reins_mcp::server_log`),
//! each text cut to 2 KiB, its control sequences shown as text and the server's credentials
//! replaced.
//! Given to an agent as a source ([`McpTools::into_source`], see [`McpToolSource`]), a
//! server's tools follow `notifications/tools/list_changed`: the agent lists them again
//! before its next model turn. A tool's `structuredContent` is checked against its
//! `outputSchema` (compiled once, when the tool is listed; a mismatch is an
//! [`McpError::InvalidStructuredContent`] listing the first three, each with its JSON
//! pointer). A tool the server declares read-only or idempotent is re-executed when a
//! crash left its call in doubt; any other waits for a decision
//! ([`McpToolAnnotations::retry_safety`]).
//!
//! A server you did not write is held to bounds. Its answer to `initialize` must name a
//! revision reins speaks ([`SUPPORTED_PROTOCOL_VERSIONS`]; over HTTP every later request
//! names it in `MCP-Protocol-Version`), else [`McpServer::connect`] ends the connection, before
//! `notifications/initialized` would confirm it, with an [`McpError::Handshake`] naming the
//! revision offered and those supported; an answer without what MCP requires names the field
//! (one without `capabilities` is read as declaring `tools` alone, and a server whose
//! `capabilities` leave out `tools` is not asked for them: [`McpClient::tools`] is empty, with a warning), and what the
//! server calls itself
//! ([`McpClient::server_version`]) is shown cut and as text. Every request has a timeout (the handshake
//! [`McpServer::connect_timeout`], the rest [`McpServer::call_timeout`]; a tool call past it,
//! or dropped, sends the server `notifications/cancelled`; over stdio, writing a request that
//! the server reads nothing of for [`McpServer::write_timeout`] fails it with
//! [`McpError::Stalled`]), and a tool list still going after
//! 100 pages, or naming as its next page a cursor it named before, is an error. Each message a server sends is weighed before it is parsed, over
//! stdio (each line) and over HTTP alike (each JSON body, and each event of a stream): one
//! over 16 MiB (an HTTP body is not read past that), or whose JSON would take more than
//! [`MAX_PARSED_OVERHEAD`](reins::json_weight::MAX_PARSED_OVERHEAD) once parsed (millions
//! of small objects), is dropped unread, and the request it answers fails at once with an
//! [`McpError::Protocol`] saying why (when its `id` can be found in the first 64 KiB of a
//! message over 16 MiB, or it is the answer to an HTTP POST, or to the handshake's `initialize`
//! over stdio; else at its timeout); so does an answer that names its request but is no
//! JSON-RPC message the client can read (nested too deep, another JSON-RPC version). A stdio
//! server's whole process group is ended with it (`SIGTERM`, then `SIGKILL`), so a server
//! started through a wrapper (`sh -c`, `npx`) does not outlive its client. HTTP redirects
//! are followed only to the same
//! origin, so headers never reach another host, and a tool result, or a listed tool's title,
//! description or schema, that quotes the server's credentials (its bearer token, a header's
//! value) has them replaced before the model sees it (as has any message quoting them, before
//! rmcp, which logs each message under its own `rmcp` target, is given it); errors and warnings that name a tool
//! quote at most 128 bytes of its name, without those credentials. The model is shown at most
//! [`McpServer::max_result_bytes`] of a result and [`McpServer::max_description_bytes`] of
//! a tool's description, a tool whose `inputSchema` or `outputSchema` is over
//! [`McpServer::max_schema_bytes`] is left out, at most [`McpServer::max_tools`] tools
//! within [`McpServer::max_tool_list_bytes`] are kept (the first listed), and errors keep 2 KiB of each of a server's last 20 standard-error lines.
//! Tool names are made acceptable to every provider and
//! schemas made object schemas ([`McpTool::name`], [`McpTool::input_schema`]); one name is
//! one tool, the first listed ([`McpTools`]: prefix a server's tools so that none of them
//! can stand in for another tool of the agent). A newer server is read as far as reins can:
//! a content block of a type it does not know (MCP adds types), or not shaped as MCP says,
//! is shown to the model as `[content of type "video" not shown]` between the blocks it
//! reads ([`McpContent::Other`]), and a listed tool that cannot be read (an icon of a theme
//! rmcp does not know, say) is read again with only the fields reins uses, or else left out
//! with a warning; the rest of the answer is kept. Answers to requests never sent are ignored;
//! a server's own requests are answered (`ping`; `roots/list` with no roots;
//! `sampling/createMessage` as not supported) without disturbing the calls in flight, at
//! most 64 of them waiting for their answer to be written at once (more are dropped
//! unanswered: a server that sends requests without reading the answers holds no more of
//! the client's memory).
//!
//! The other way round, [`McpService`] serves a reins [`ToolSet`](reins::tool::ToolSet) —
//! including whole agents as [`AgentTool`]s — to MCP clients over stdio or streamable HTTP,
//! each tool's [`ToolTraits`](reins::tool::ToolTraits) as its annotations. Served over HTTP,
//! a client must send a request's headers within a timeout, and connections past a cap are
//! closed ([`McpService::http_header_timeout`], [`McpService::max_http_connections`]), as
//! are sessions past a cap ([`McpService::max_http_sessions`]). At
//! most [`McpService::max_concurrent_calls`] calls run at once, over every client (a
//! client that hangs up leaves its call running: only `notifications/cancelled` ends it).
//! A client that breaks the protocol's rules in a session (`initialize` again, a request
//! under the id of one still running) is answered with an error by that request's id and
//! the session goes on; over HTTP, a request naming a session the server does not know is
//! answered `404`.
#![deny(missing_docs)]

mod advertised;
mod batch;
mod client;
mod connect;
mod content;
mod echoes;
mod error;
mod handler;
mod handshake;
mod hidden;
mod http_client;
mod http_endpoint;
mod http_events;
mod id_less;
mod lenient;
mod lines;
mod listing;
mod process;
mod serve;
mod server;
mod source;
mod stderr;
mod stdio;
mod tool;
mod tools;
mod unechoed;
mod unreadable;
mod weighed;

pub use client::McpClient;
pub use content::{McpContent, McpToolResult};
pub use error::McpError;
pub use handshake::SUPPORTED_PROTOCOL_VERSIONS;
pub use serve::{
    AgentTool, AgentToolArgs, DEFAULT_HTTP_BODY_TIMEOUT, DEFAULT_HTTP_HEADER_TIMEOUT,
    DEFAULT_MAX_CONCURRENT_CALLS, DEFAULT_MAX_HTTP_CONNECTIONS, DEFAULT_MAX_HTTP_SESSIONS,
    McpHttpServer, McpService, accept_connection,
};
pub use server::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_DESCRIPTION_BYTES,
    DEFAULT_MAX_RESTARTS, DEFAULT_MAX_RESULT_BYTES, DEFAULT_MAX_SCHEMA_BYTES,
    DEFAULT_MAX_TOOL_LIST_BYTES, DEFAULT_MAX_TOOLS, DEFAULT_WRITE_TIMEOUT, EFFECT_ID_META_KEY,
    McpServer,
};
pub use source::McpToolSource;
pub use tool::{McpTool, McpToolAnnotations};
pub use tools::McpTools;
