use std::time::Duration;

/// What went wrong talking to an MCP server. Every error names the server (see
/// [`McpServer::name`](crate::McpServer::name)); [`server`](McpError::server) returns it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server's process could not be started (e.g. the command does not exist).
    #[error("MCP server `{server}`: could not start `{command}`: {source}")]
    Spawn {
        /// The server's name.
        server: String,
        /// The command that was run.
        command: String,
        /// Why it could not be started.
        #[source]
        source: std::io::Error,
    },
    /// The process started (or the URL was reached) but the MCP handshake failed: it exited
    /// at once, did not speak MCP, answered `initialize` without what MCP requires, or with
    /// a revision reins does not speak (see
    /// [`SUPPORTED_PROTOCOL_VERSIONS`](crate::SUPPORTED_PROTOCOL_VERSIONS)).
    #[error(
        "MCP server `{server}` failed to start: {message}{}",
        stderr_suffix(stderr)
    )]
    Handshake {
        /// The server's name.
        server: String,
        /// What the handshake ended with.
        message: String,
        /// The last lines the server wrote to its standard error, if any.
        stderr: String,
    },
    /// The connection to the server is gone: its process exited (or was killed), an HTTP
    /// server ended the session (answered a request in it with 404), or the client was closed.
    #[error(
        "MCP server `{server}` is no longer connected (its process ended, or it ended the session): `{operation}` could not be sent or was not answered{}",
        stderr_suffix(stderr)
    )]
    Disconnected {
        /// The server's name.
        server: String,
        /// What was being done (`tools/list`, `tools/call weather`, ...).
        operation: String,
        /// The last lines the server wrote to its standard error, if any.
        stderr: String,
    },
    /// A stdio server read nothing of a request being written to it for
    /// [`McpServer::write_timeout`](crate::McpServer::write_timeout): it stopped reading its
    /// standard input, though it may run on. The connection is over: the server is ended, and
    /// started again on the next request (within
    /// [`McpServer::max_restarts`](crate::McpServer::max_restarts)).
    #[error(
        "MCP server `{server}` stopped reading its input: `{operation}` could not be written to it (it read nothing for {} ms), so the connection was ended",
        after.as_millis()
    )]
    Stalled {
        /// The server's name.
        server: String,
        /// What was being done.
        operation: String,
        /// How long the server read nothing.
        after: Duration,
    },
    /// The server did not answer within the limit.
    #[error("MCP server `{server}`: `{operation}` timed out after {} ms", after.as_millis())]
    Timeout {
        /// The server's name.
        server: String,
        /// What was being done.
        operation: String,
        /// The limit that was exceeded.
        after: Duration,
    },
    /// The server answered a request with a protocol error (unknown tool, invalid parameters,
    /// an internal error) or with something that is not the expected answer (over HTTP: a
    /// failing status, such as a proxy's 502 or a 401, or an answer neither JSON nor an
    /// event stream).
    #[error("MCP server `{server}`: `{operation}` failed: {message}")]
    Protocol {
        /// The server's name.
        server: String,
        /// What was being done.
        operation: String,
        /// The server's error message.
        message: String,
    },
    /// The tool ran and reported an error (`isError: true`); `message` is what it said
    /// (empty when it said nothing: the error then says so).
    #[error(
        "MCP server `{server}`: tool `{tool}` reported an error{}",
        said(message)
    )]
    Tool {
        /// The server's name.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// The tool's error content, as text.
        message: String,
    },
    /// The tool's `structuredContent` does not match its `outputSchema`.
    #[error(
        "MCP server `{server}`: the structured result of tool `{tool}` does not match its outputSchema: {message}"
    )]
    InvalidStructuredContent {
        /// The server's name.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// How it does not match: the first few mismatches, each followed by
        /// ` (at <JSON pointer>)` unless it is the whole value's, joined by `; `.
        message: String,
    },
    /// The server's description cannot be used (a header HTTP cannot carry, say).
    #[error("MCP server `{server}`: {message}")]
    Config {
        /// The server's name.
        server: String,
        /// What is wrong.
        message: String,
    },
    /// The arguments are not a JSON object, as MCP requires.
    #[error("MCP server `{server}`: the arguments of `{tool}` must be a JSON object, not {found}")]
    InvalidArguments {
        /// The server's name.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// What kind of JSON value was given.
        found: &'static str,
    },
}

impl McpError {
    /// The name of the server the error is about.
    pub fn server(&self) -> &str {
        match self {
            McpError::Spawn { server, .. }
            | McpError::Handshake { server, .. }
            | McpError::Disconnected { server, .. }
            | McpError::Stalled { server, .. }
            | McpError::Timeout { server, .. }
            | McpError::Protocol { server, .. }
            | McpError::Tool { server, .. }
            | McpError::InvalidStructuredContent { server, .. }
            | McpError::Config { server, .. }
            | McpError::InvalidArguments { server, .. } => server,
        }
    }
}

/// What a tool's error said, after "reported an error": a tool may report one without a
/// word (`isError: true`, no content), which would leave the line ending in a colon.
fn said(message: &str) -> String {
    if message.trim().is_empty() {
        " without a message".to_owned()
    } else {
        format!(": {message}")
    }
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; its stderr ended with:\n{stderr}")
    }
}
