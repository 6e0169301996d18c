//! What a request that failed is reported as: rmcp's errors mapped to [`McpError`]s naming
//! the server and the operation, with the server's words cut, shown as text and without its
//! credentials.

use super::{ClientInner, Connection};
use crate::McpError;
use crate::hidden::scrub;
use crate::server::shown_message;
use rmcp::service::ServiceError;

/// How much of a tool's name an error quotes: the server chooses the name, and MCP
/// suggests at most 128 characters.
const SHOWN_TOOL_NAME_BYTES: usize = 128;

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

    /// The tool `name` as errors quote it: the server's credentials replaced as in its tool
    /// list (`echoes.rs`) and as in errors, control sequences shown as text, cut to
    /// [`SHOWN_TOOL_NAME_BYTES`]. The server chooses its tools' names, and calls go by them
    /// unchanged.
    pub(crate) fn shown_tool_name(&self, name: &str) -> String {
        let name = match &self.echoes {
            Some(echoes) => echoes.redact(name),
            None => name.into(),
        };
        let mut shown = reins::text::printable(&scrub(&name, &self.secrets)).into_owned();
        if shown.len() > SHOWN_TOOL_NAME_BYTES {
            let total = shown.len();
            let mut end = SHOWN_TOOL_NAME_BYTES;
            while !shown.is_char_boundary(end) {
                end -= 1;
            }
            shown.truncate(end);
            shown.push_str(&format!("… ({total} bytes)"));
        }
        shown
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
