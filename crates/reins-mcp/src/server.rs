//! How to reach an MCP server ([`McpServer`]): a child process over stdio, or a URL over
//! streamable HTTP. Opening a connection to it is in `connect.rs`.

use crate::echoes::MIN_ECHOED_SECRET_LEN;
use crate::hidden::{Redacted, scrub};
pub(crate) use crate::http_endpoint::HttpEndpoint;
use reins::hooks::redaction::names_a_credential;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// The `_meta` key under which a call's effect id is sent to the server.
pub const EFFECT_ID_META_KEY: &str = "reins/effectId";

/// How long [`McpServer::connect`] waits for the handshake unless told otherwise.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one request may take unless told otherwise.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a stdio server may read nothing of a message written to it unless told
/// otherwise.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// How much of a tool's result the model is shown unless told otherwise (256 KiB).
pub const DEFAULT_MAX_RESULT_BYTES: usize = 256 * 1024;

/// How much of a tool's description the model is shown unless told otherwise (4 KiB).
pub const DEFAULT_MAX_DESCRIPTION_BYTES: usize = 4 * 1024;

/// How large a tool's `inputSchema` may be, as JSON text, unless told otherwise (64 KiB).
pub const DEFAULT_MAX_SCHEMA_BYTES: usize = 64 * 1024;

/// How many of a server's tools are listed unless told otherwise.
pub const DEFAULT_MAX_TOOLS: usize = 256;

/// How many bytes the tools of one listing may take (names, descriptions as shown, schemas
/// as JSON) unless told otherwise (8 MiB).
pub const DEFAULT_MAX_TOOL_LIST_BYTES: usize = 8 * 1024 * 1024;

/// How many times a crashed stdio server is restarted (or an HTTP server that ended the
/// session connected to again) unless told otherwise.
pub const DEFAULT_MAX_RESTARTS: u32 = 3;

/// How an MCP server is reached: a command run as a child process speaking MCP over its
/// standard input and output ([`stdio`](McpServer::stdio)), or a URL speaking streamable
/// HTTP ([`http`](McpServer::http)). [`connect`](McpServer::connect) opens the connection.
///
/// Its `Debug` output shows no environment value and no header value: they often hold
/// secrets.
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
/// let remote = McpServer::http("http://127.0.0.1:3001/mcp")
///     .bearer_token(std::env::var("MCP_TOKEN").unwrap_or_default())
///     .header("x-tenant", "acme")
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct McpServer {
    pub(crate) name: String,
    pub(crate) transport: Transport,
    pub(crate) connect_timeout: Duration,
    pub(crate) call_timeout: Option<Duration>,
    pub(crate) write_timeout: Duration,
    pub(crate) max_restarts: u32,
    pub(crate) max_result_bytes: usize,
    pub(crate) max_description_bytes: usize,
    pub(crate) max_schema_bytes: usize,
    pub(crate) max_tools: usize,
    pub(crate) max_tool_list_bytes: usize,
}

#[derive(Debug, Clone)]
pub(crate) enum Transport {
    Stdio(StdioCommand),
    Http(HttpEndpoint),
}

#[derive(Debug, Clone)]
pub(crate) struct StdioCommand {
    pub(crate) command: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, Redacted<OsString>)>,
    pub(crate) env_removed: Vec<OsString>,
    pub(crate) current_dir: Option<PathBuf>,
}

impl StdioCommand {
    /// The values of the server's environment variables named as credentials (`GITHUB_TOKEN`,
    /// `API_KEY`), with what replaces them in errors, its stderr and tool results. Other
    /// variables (a root directory, a flag) are left shown: masking them would hide what the
    /// server says about ordinary things. Values under 8 bytes are not looked for either.
    pub(crate) fn secrets(&self) -> Vec<(String, String)> {
        self.env
            .iter()
            .filter(|(name, _)| names_a_credential(&name.to_string_lossy()))
            .filter_map(|(_, value)| value.0.to_str())
            .filter(|value| value.len() >= MIN_ECHOED_SECRET_LEN)
            .map(|value| (value.to_owned(), "[redacted]".to_owned()))
            .collect()
    }
}

impl McpServer {
    fn new(name: String, transport: Transport) -> Self {
        McpServer {
            name,
            transport,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            call_timeout: Some(DEFAULT_CALL_TIMEOUT),
            write_timeout: DEFAULT_WRITE_TIMEOUT,
            max_restarts: DEFAULT_MAX_RESTARTS,
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            max_description_bytes: DEFAULT_MAX_DESCRIPTION_BYTES,
            max_schema_bytes: DEFAULT_MAX_SCHEMA_BYTES,
            max_tools: DEFAULT_MAX_TOOLS,
            max_tool_list_bytes: DEFAULT_MAX_TOOL_LIST_BYTES,
        }
    }

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
        McpServer::new(
            name,
            Transport::Stdio(StdioCommand {
                command,
                args,
                env: Vec::new(),
                env_removed: Vec::new(),
                current_dir: None,
            }),
        )
    }

    /// A server at `url` speaking MCP over streamable HTTP (`http://` or `https://`). Its
    /// name defaults to the URL without its query and user information; set it with [`name`](McpServer::name).
    /// Authenticate with [`bearer_token`](McpServer::bearer_token) or
    /// [`header`](McpServer::header).
    pub fn http(url: impl Into<String>) -> Self {
        let endpoint = HttpEndpoint::new(url.into());
        McpServer::new(endpoint.shown_url.clone(), Transport::Http(endpoint))
    }

    /// Names the server: errors say which server failed by this name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Sets an environment variable of the server's process (it inherits the rest). No
    /// effect on an HTTP server.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        if let Transport::Stdio(command) = &mut self.transport {
            command.env.push((key.into(), Redacted(value.into())));
        }
        self
    }

    /// Sets several environment variables of the server's process. No effect on an HTTP
    /// server.
    pub fn envs<I, K, V>(self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        vars.into_iter()
            .fold(self, |server, (key, value)| server.env(key, value))
    }

    /// Removes an inherited environment variable from the server's process (a secret it
    /// should not see, say). No effect on an HTTP server.
    pub fn env_remove(mut self, key: impl Into<OsString>) -> Self {
        if let Transport::Stdio(command) = &mut self.transport {
            command.env_removed.push(key.into());
        }
        self
    }

    /// The working directory of the server's process (by default, this process's). No
    /// effect on an HTTP server.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Transport::Stdio(command) = &mut self.transport {
            command.current_dir = Some(dir.into());
        }
        self
    }

    /// Sends `Authorization: Bearer <token>` with every request to an HTTP server. The token
    /// never appears in `Debug` output or errors. No effect on a stdio server.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        if let Transport::Http(endpoint) = &mut self.transport {
            endpoint.bearer_token = Some(Redacted(token.into()));
        }
        self
    }

    /// Sends the header `name: value` with every request to an HTTP server (an API key,
    /// say). Its value never appears in `Debug` output or errors. No effect on a stdio
    /// server.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Transport::Http(endpoint) = &mut self.transport {
            endpoint.headers.push((name.into(), Redacted(value.into())));
        }
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

    /// Lets requests take as long as the server needs. An answer over 16 MiB whose `id` is
    /// not within its first 64 KiB (a stdio server's line, or an event of an HTTP stream that
    /// answers no POST) is dropped unread with nothing to tell the request it answered, which
    /// then waits for ever.
    pub fn no_call_timeout(mut self) -> Self {
        self.call_timeout = None;
        self
    }

    /// How long a stdio server may read nothing of a message being written to its standard
    /// input ([`DEFAULT_WRITE_TIMEOUT`]). A message larger than what the pipe holds (64 KiB,
    /// say) waits for the server to read it; one that stopped reading, while it runs on,
    /// would hold that write, and every request after it, for ever. Past this the request
    /// fails with [`McpError::Stalled`](crate::McpError::Stalled) and the connection is
    /// over: the server is ended, and started again on the next request (within
    /// [`max_restarts`](McpServer::max_restarts)). No effect on an HTTP server.
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = timeout;
        self
    }

    /// How many times in the client's life a stdio server that exited is started again, or
    /// an HTTP server that ended the session (answered a request in it with 404) is connected
    /// to again, on the next request ([`DEFAULT_MAX_RESTARTS`]; 0 never does). The request
    /// that found it dead fails with [`McpError::Disconnected`](crate::McpError::Disconnected);
    /// the new connection makes the whole handshake, checked as the first one, and
    /// [`McpClient::tools_changed`](crate::McpClient::tools_changed) says to list the tools
    /// again.
    pub fn max_restarts(mut self, restarts: u32) -> Self {
        self.max_restarts = restarts;
        self
    }

    /// How many bytes of a tool's result (its text, or its structured content as JSON), of
    /// a tool's error message, and of the server's JSON-RPC error messages (which errors
    /// carry, control sequences shown as text) the model is shown
    /// ([`DEFAULT_MAX_RESULT_BYTES`]); a longer
    /// one is cut there and ends saying how long it was, so a server cannot fill the model's
    /// context (or the run's history) with one answer. [`McpClient::call_tool`](crate::McpClient::call_tool)
    /// returns results whole.
    pub fn max_result_bytes(mut self, bytes: usize) -> Self {
        self.max_result_bytes = bytes;
        self
    }

    /// How many bytes of a tool's description the model is shown
    /// ([`DEFAULT_MAX_DESCRIPTION_BYTES`]); a longer one is cut there and ends saying how
    /// long it was. Every tool's description goes to the model with every request, so a
    /// server could otherwise make each turn cost what it likes, and hide instructions
    /// deep in text nobody reads.
    pub fn max_description_bytes(mut self, bytes: usize) -> Self {
        self.max_description_bytes = bytes;
        self
    }

    /// How large a tool's `inputSchema`, and its `outputSchema`, may each be, as JSON text
    /// ([`DEFAULT_MAX_SCHEMA_BYTES`]). A tool with a larger one is left out of
    /// [`McpClient::tools`](crate::McpClient::tools) with a warning: an input schema would
    /// go to the model with every request (and an output schema is compiled and checked
    /// against every result), and a tool shown without its schema would be called with
    /// guessed arguments.
    pub fn max_schema_bytes(mut self, bytes: usize) -> Self {
        self.max_schema_bytes = bytes;
        self
    }

    /// How many of the server's tools [`McpClient::tools`](crate::McpClient::tools) keeps
    /// ([`DEFAULT_MAX_TOOLS`]): the first listed; past them no further page is asked for, and
    /// a warning says the list was cut. Every tool goes to the model with every request.
    pub fn max_tools(mut self, tools: usize) -> Self {
        self.max_tools = tools;
        self
    }

    /// How many bytes the tools [`McpClient::tools`](crate::McpClient::tools) keeps may take
    /// together ([`DEFAULT_MAX_TOOL_LIST_BYTES`]): their names, their descriptions as the
    /// model is shown them and their schemas as JSON. The first tools within it are kept;
    /// past it no further page is asked for, and a warning says the list was cut.
    pub fn max_tool_list_bytes(mut self, bytes: usize) -> Self {
        self.max_tool_list_bytes = bytes;
        self
    }

    pub(crate) fn is_stdio(&self) -> bool {
        matches!(self.transport, Transport::Stdio(_))
    }
}

/// A server's error message as errors carry it: its secrets replaced, control sequences shown
/// as text (a person's terminal may print it), and at most `max_bytes` of it (the model may
/// be shown it, like a result).
pub(crate) fn shown_message(
    message: &str,
    secrets: &[(String, String)],
    max_bytes: usize,
) -> String {
    let scrubbed = scrub(message, secrets);
    let shown = reins::text::printable(&scrubbed).into_owned();
    crate::content::cut_to("error message", shown, max_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_secret() {
        let server = McpServer::http("http://127.0.0.1:1/mcp?key=abc")
            .bearer_token("token-123")
            .header("x-api-key", "key-456");
        let debug = format!("{server:?}");
        assert!(!debug.contains("token-123"), "{debug}");
        assert!(!debug.contains("key-456"), "{debug}");
        assert!(debug.contains("x-api-key"), "{debug}");
        assert!(!debug.contains("key=abc"), "{debug}");
        assert_eq!(server.name, "http://127.0.0.1:1/mcp");

        let stdio = McpServer::stdio("server", ["--flag"]).env("API_KEY", "env-secret-789");
        let debug = format!("{stdio:?}");
        assert!(!debug.contains("env-secret-789"), "{debug}");
        assert!(debug.contains("API_KEY"), "{debug}");
    }
}
