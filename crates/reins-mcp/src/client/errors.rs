//! What a request that failed is reported as: rmcp's errors mapped to [`McpError`]s naming
//! the server and the operation, with the server's words cut, shown as text and without its
//! credentials.

use super::{ClientInner, Connection};
use crate::McpError;
use crate::hidden::scrub;
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
