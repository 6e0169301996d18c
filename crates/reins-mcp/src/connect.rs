//! Opening a connection to an MCP server: its process started (stdio) or its URL reached
//! (HTTP), and the MCP handshake, within the connect timeout.

use crate::McpError;
use crate::client::{Connection, McpClient};
use crate::handler::ClientEvents;
use crate::handshake::{failure_message, refused_revision};
use crate::hidden::{Credentials, scrub};
use crate::http_client::WeighedHttpClient;
use crate::lenient::Lenient;
use crate::server::{HttpEndpoint, McpServer, StdioCommand, Transport};
use crate::stderr::StderrTail;
use crate::stdio::StdioTransport;
use crate::unechoed::Unechoed;
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};
use rmcp::{ClientCacheConfig, RoleClient, ServiceExt};
use std::collections::HashMap;

impl McpServer {
    /// Starts the server's process (stdio) or reaches its URL (HTTP), and performs the MCP
    /// handshake.
    ///
    /// Fails with [`McpError::Spawn`] when the command cannot be started,
    /// [`McpError::Handshake`] when the process exits, the URL does not answer, the peer
    /// does not speak MCP (with the end of a process's standard error), or it answers with a
    /// revision of MCP reins does not speak (one not in
    /// [`SUPPORTED_PROTOCOL_VERSIONS`](crate::SUPPORTED_PROTOCOL_VERSIONS): the connection is
    /// ended without `notifications/initialized`, as MCP asks), [`McpError::Config`]
    /// for a header that HTTP cannot carry, and [`McpError::Timeout`] past the connect
    /// timeout; a started process is killed in the failing cases.
    pub async fn connect(self) -> Result<McpClient, McpError> {
        let events = ClientEvents::new(&self.name, self.secrets());
        let connection = self.open(events.clone()).await?;
        Ok(McpClient::new(self, events, connection))
    }

    /// What errors must not show, each with what they show instead (`hidden.rs`).
    pub(crate) fn secrets(&self) -> Vec<(String, String)> {
        match &self.transport {
            Transport::Stdio(command) => command.secrets(),
            Transport::Http(endpoint) => endpoint.secrets(),
        }
    }

    /// Opens one connection, whose notifications go to `events`.
    pub(crate) async fn open(&self, events: ClientEvents) -> Result<Connection, McpError> {
        match &self.transport {
            Transport::Stdio(command) => self.open_stdio(command, events).await,
            Transport::Http(endpoint) => self.open_http(endpoint, events).await,
        }
    }

    async fn open_stdio(
        &self,
        stdio: &StdioCommand,
        events: ClientEvents,
    ) -> Result<Connection, McpError> {
        let mut command = tokio::process::Command::new(&stdio.command);
        command.args(&stdio.args).kill_on_drop(true);
        // A group of its own: a Ctrl-C at the terminal reaches the application, which decides
        // what a call cut short becomes, and not the server, whose death could otherwise be
        // read as the call's failure first.
        #[cfg(unix)]
        command.process_group(0);
        for key in &stdio.env_removed {
            command.env_remove(key);
        }
        command.envs(stdio.env.iter().map(|(k, v)| (k, &v.0)));
        if let Some(dir) = &stdio.current_dir {
            command.current_dir(dir);
        }
        let credentials = Credentials::new(self.secrets());
        let spawned =
            StdioTransport::spawn(command, &self.name, credentials.clone(), self.write_timeout);
        let (transport, stderr) = spawned.map_err(|source| McpError::Spawn {
            server: self.name.clone(),
            command: stdio.command.to_string_lossy().into_owned(),
            source,
        })?;
        let process_id = transport.id();
        let stall = transport.stall();
        let transport = Unechoed::new(transport, &self.name, &credentials);
        let transport = Lenient::new(transport, &self.name, credentials);
        let refused = transport.refused_revision();
        let stderr_tail = StderrTail::default();
        let secrets = stdio.secrets();
        match stderr {
            Some(stderr) => stderr_tail.follow(self.name.clone(), stderr, secrets.clone()),
            None => stderr_tail.lock().closed = true,
        }
        match tokio::time::timeout(self.connect_timeout, events.serve(transport)).await {
            Ok(Ok(service)) => Ok(Connection::new(
                without_cache(service).await,
                process_id,
                Some(stderr_tail),
                secrets,
            )
            .stalled_with(stall)),
            Ok(Err(error)) => Err(match refused.offered() {
                // Its stderr says nothing of it: the server did as it meant to.
                Some(offered) => refused_revision(&self.name, &offered, &secrets),
                None => McpError::Handshake {
                    server: self.name.clone(),
                    message: failure_message(&error, &secrets, self.max_result_bytes),
                    stderr: scrub(&stderr_tail.settled().await, &secrets),
                },
            }),
            Err(_) => Err(self.connect_timed_out()),
        }
    }

    async fn open_http(
        &self,
        endpoint: &HttpEndpoint,
        events: ClientEvents,
    ) -> Result<Connection, McpError> {
        let mut headers = HashMap::new();
        for (name, value) in &endpoint.headers {
            let header_name =
                http::HeaderName::try_from(name.as_str()).map_err(|_| McpError::Config {
                    server: self.name.clone(),
                    message: format!("`{name}` is not a valid HTTP header name"),
                })?;
            let mut header_value =
                http::HeaderValue::try_from(value.0.as_str()).map_err(|_| McpError::Config {
                    server: self.name.clone(),
                    message: format!("the value of header `{name}` is not valid in HTTP"),
                })?;
            header_value.set_sensitive(true);
            headers.insert(header_name, header_value);
        }
        // A session the server ended ends the connection (`http_client.rs`), never rmcp's
        // unchecked `initialize` again.
        let mut config = StreamableHttpClientTransportConfig::with_uri(endpoint.url.as_str())
            .custom_headers(headers)
            .reinit_on_expired_session(false);
        if let Some(token) = &endpoint.bearer_token {
            config = config.auth_header(token.0.clone());
        }
        let credentials = Credentials::new(self.secrets());
        let client = WeighedHttpClient::new(&self.name, credentials.clone());
        let client = client.map_err(|error| McpError::Handshake {
            server: self.name.clone(),
            message: format!("the HTTP client could not be made: {error}"),
            stderr: String::new(),
        })?;
        let session_end = client.session_end();
        let transport = StreamableHttpClientTransport::with_client(client, config);
        let transport = Unechoed::new(transport, &self.name, &credentials);
        let transport = Lenient::new(transport, &self.name, credentials);
        let refused = transport.refused_revision();
        let secrets = endpoint.secrets();
        match tokio::time::timeout(self.connect_timeout, events.serve(transport)).await {
            Ok(Ok(service)) => {
                Ok(
                    Connection::new(without_cache(service).await, None, None, secrets)
                        .ended_with(session_end),
                )
            }
            Ok(Err(error)) => Err(match refused.offered() {
                Some(offered) => refused_revision(&self.name, &offered, &secrets),
                None => McpError::Handshake {
                    server: self.name.clone(),
                    message: failure_message(&error, &secrets, self.max_result_bytes),
                    stderr: String::new(),
                },
            }),
            Err(_) => Err(self.connect_timed_out()),
        }
    }

    fn connect_timed_out(&self) -> McpError {
        McpError::Timeout {
            server: self.name.clone(),
            operation: "initialize".to_owned(),
            after: self.connect_timeout,
        }
    }
}

/// `service` with rmcp's response cache off: a server's `ttlMs` would otherwise keep a
/// listing (up to 512 of them, for up to a day, served again when the server fails) where
/// reins lists again to see what the server has now.
async fn without_cache(
    service: RunningService<RoleClient, ClientEvents>,
) -> RunningService<RoleClient, ClientEvents> {
    service
        .peer()
        .set_response_cache_config(ClientCacheConfig::disabled())
        .await;
    service
}
