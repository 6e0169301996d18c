//! The server's answer to `initialize`, read as a stranger's: the revision it offers must be
//! one reins speaks (else the connection is ended, as the specification asks of a client),
//! and an answer rmcp cannot read is described by the field that is wrong, not quoted.

use crate::McpError;
use crate::handler::ClientEvents;
use crate::server::shown_message;
use rmcp::RoleClient;
use rmcp::model::{Implementation, ServerCapabilities, ServerResult};
use rmcp::service::{ClientInitializeError, RunningService};
use serde::Deserialize;
use serde_json::Value;

/// The revisions of MCP a client speaks, oldest first: those with the `initialize` handshake
/// it connects with (the client asks for the last one). A server must answer one of them.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// How much of a revision a server offered an error quotes: a revision is a date.
const SHOWN_REVISION_BYTES: usize = 64;

/// `service`, when the revision the server answered is one reins speaks; else the
/// connection ended (a stdio server's process with it) and an error naming that revision
/// and the supported ones.
pub(crate) fn negotiated(
    server: &str,
    service: RunningService<RoleClient, ClientEvents>,
    secrets: &[(String, String)],
) -> Result<RunningService<RoleClient, ClientEvents>, McpError> {
    let offered = service
        .peer_info()
        .map(|info| info.protocol_version.as_str().to_owned());
    if let Some(offered) = &offered
        && SUPPORTED_PROTOCOL_VERSIONS.contains(&offered.as_str())
    {
        return Ok(service);
    }
    service.cancellation_token().cancel();
    let offered = match offered {
        Some(offered) => format!(
            "`{}`",
            shown_message(&offered, secrets, SHOWN_REVISION_BYTES)
        ),
        None => "no revision".to_owned(),
    };
    Err(McpError::Handshake {
        server: server.to_owned(),
        message: format!(
            "it answered the handshake with MCP revision {offered}, which reins does not \
             speak (it speaks {})",
            SUPPORTED_PROTOCOL_VERSIONS.join(", ")
        ),
        stderr: String::new(),
    })
}

/// What a failed handshake ended with, as an error says it: an answer to `initialize` that
/// is not an `InitializeResult` by the field that is wrong (rmcp would quote the whole
/// answer, in Rust's notation), anything else in rmcp's words.
pub(crate) fn failure_message(
    error: &ClientInitializeError,
    secrets: &[(String, String)],
    max_bytes: usize,
) -> String {
    match error {
        ClientInitializeError::ExpectedInitResult(Some(ServerResult::CustomResult(answer))) => {
            unreadable_answer(&answer.0)
        }
        ClientInitializeError::ExpectedInitResult(_) => {
            "it answered `initialize` with the result of another request".to_owned()
        }
        other => shown_message(&other.to_string(), secrets, max_bytes),
    }
}

/// Whether a field's value has the shape MCP gives it.
type FieldFits = fn(&Value) -> bool;

/// Why `answer` is not an `InitializeResult`: the first field MCP requires that it lacks or
/// that has the wrong shape.
fn unreadable_answer(answer: &Value) -> String {
    let Some(fields) = answer.as_object() else {
        return format!(
            "its answer to `initialize` is {}, not an object",
            reins::text::json_kind(answer)
        );
    };
    let required: [(&str, FieldFits); 3] = [
        ("protocolVersion", Value::is_string),
        ("capabilities", |value| {
            ServerCapabilities::deserialize(value).is_ok()
        }),
        ("serverInfo", |value| {
            Implementation::deserialize(value).is_ok()
        }),
    ];
    for (field, fits) in required {
        match fields.get(field) {
            None => {
                return format!("its answer to `initialize` has no `{field}`, which MCP requires");
            }
            Some(value) if !fits(value) => {
                return format!(
                    "the `{field}` of its answer to `initialize` is not what MCP allows (a \
                     field missing or of the wrong shape)"
                );
            }
            Some(_) => {}
        }
    }
    "its answer to `initialize` is not what MCP allows (a field of the wrong shape)".to_owned()
}

#[cfg(test)]
mod tests {
    use super::SUPPORTED_PROTOCOL_VERSIONS;
    use rmcp::model::ProtocolVersion;

    #[test]
    fn the_supported_revisions_are_those_rmcp_knows_with_the_handshake_the_client_uses() {
        let known: Vec<&str> =
            ProtocolVersion::known_up_to(&ProtocolVersion::LATEST_WITH_INITIALIZE)
                .iter()
                .map(ProtocolVersion::as_str)
                .collect();
        assert_eq!(SUPPORTED_PROTOCOL_VERSIONS, known.as_slice());
        // The revision the client asks for (`handler.rs`) is the newest it speaks.
        assert_eq!(
            SUPPORTED_PROTOCOL_VERSIONS.last().copied(),
            Some(ProtocolVersion::LATEST_WITH_INITIALIZE.as_str())
        );
    }
}
