//! What a request that failed is reported as: rmcp's errors mapped to [`McpError`]s naming
//! the server and the operation, with the server's words cut, shown as text and without its
//! credentials.

use super::{ClientInner, Connection};
use crate::McpError;
use crate::hidden::{LOGGED_ERROR_BYTES, LoggedToolName, scrub};
use crate::server::shown_message;
use rmcp::service::ServiceError;

impl ClientInner {
    pub(super) async fn service_error(
        &self,
        connection: &Connection,
        operation: &str,
        error: ServiceError,
    ) -> McpError {
        match error {
            // Over HTTP one request fails on its own (a status, a Content-Type, a redirect not
            // followed) while the session lives on: what the server answered is said.
            ServiceError::TransportSend(error)
                if !self.server.is_stdio() && !connection.is_dead() =>
            {
                McpError::Protocol {
                    server: self.name.clone(),
                    operation: operation.to_owned(),
                    message: shown_message(
                        &format!("the HTTP request failed: {}", error.error),
                        &connection.secrets,
                        self.max_result_bytes,
                    ),
                }
            }
            // A stdio server that stopped reading its input: the write was given up.
            ServiceError::TransportClosed
            | ServiceError::TransportSend(_)
            | ServiceError::Cancelled { .. }
                if connection.stdin_stalled() =>
            {
                McpError::Stalled {
                    server: self.name.clone(),
                    operation: operation.to_owned(),
                    after: self.server.write_timeout,
                }
            }
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                self.disconnected(connection, operation).await
            }
            ServiceError::Cancelled { .. } if connection.is_dead() => {
                self.disconnected(connection, operation).await
            }
            ServiceError::Timeout { timeout } => McpError::Timeout {
                server: self.name.clone(),
                operation: operation.to_owned(),
                after: timeout,
            },
            // rmcp found no result of the request's kind in the answer, even once read
            // leniently (`lenient.rs` keeps what it can of a tool result or a tool list): a
            // field of the wrong shape, say.
            ServiceError::UnexpectedResponse => McpError::Protocol {
                server: self.name.clone(),
                operation: operation.to_owned(),
                message: "the answer is not a valid result of this request (a field missing or \
                          of the wrong shape)"
                    .to_owned(),
            },
            // The server's words: cut like a result, and shown, not acted on.
            ServiceError::McpError(data) => McpError::Protocol {
                server: self.name.clone(),
                operation: operation.to_owned(),
                message: shown_message(&data.message, &connection.secrets, self.max_result_bytes),
            },
            other => McpError::Protocol {
                server: self.name.clone(),
                operation: operation.to_owned(),
                message: shown_message(
                    &other.to_string(),
                    &connection.secrets,
                    self.max_result_bytes,
                ),
            },
        }
    }

    /// The tool `name` as errors quote it, cut and without credentials
    /// ([`Credentials::tool_name`](crate::hidden::Credentials::tool_name)).
    pub(crate) fn shown_tool_name(&self, name: &str) -> String {
        self.credentials.tool_name(name)
    }

    /// The tool `name` as warnings quote it, as errors do; made only if logged.
    pub(crate) fn logged_tool_name<'a>(&'a self, name: &'a str) -> LoggedToolName<'a> {
        self.credentials.logged_tool_name(name)
    }

    /// A server's error as a warning quotes it: without credentials, shown as text, cut to
    /// [`LOGGED_ERROR_BYTES`].
    pub(crate) fn logged_error(&self, error: &str) -> String {
        shown_message(error, &self.credentials.secrets, LOGGED_ERROR_BYTES)
    }

    pub(super) async fn disconnected(&self, connection: &Connection, operation: &str) -> McpError {
        let stderr = match &connection.stderr_tail {
            Some(tail) => scrub(&tail.settled().await, &connection.secrets),
            None => String::new(),
        };
        McpError::Disconnected {
            server: self.name.clone(),
            operation: operation.to_owned(),
            stderr,
        }
    }
}
