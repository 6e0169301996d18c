//! The server's answer to `initialize`, read as a stranger's: the revision it offers must be
//! one reins speaks (else the connection is ended before rmcp confirms it with
//! `notifications/initialized`, as the specification asks of a client), a missing
//! `capabilities` is read as declaring `tools` alone, and an answer rmcp cannot read is described by
//! the field that is wrong, not quoted.

use crate::McpError;
use crate::server::shown_message;
use futures::StreamExt;
use futures::stream::BoxStream;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, CustomResult, Implementation, InitializeResult,
    JsonRpcMessage, ServerCapabilities, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::SseError;
use serde::Deserialize;
use serde_json::Value;
use sse_stream::Sse;

/// The revisions of MCP a client speaks, oldest first: those with the `initialize` handshake
/// it connects with (the client asks for the last one). A server must answer one of them.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// How much of a revision a server offered an error quotes: a revision is a date.
const SHOWN_REVISION_BYTES: usize = 64;

/// The revision an answer to `initialize` offers, when it is one reins does not speak. Asked
/// by [`Lenient`](crate::lenient) as the answer arrives, before rmcp confirms it with
/// `notifications/initialized`: a client that does not speak the server's revision ends the
/// connection rather than confirm it. An answer rmcp cannot type is not judged here (its
/// failure says which field is wrong).
pub(crate) fn unsupported_revision(answer: &ServerResult) -> Option<String> {
    match answer {
        ServerResult::InitializeResult(answer)
            if !SUPPORTED_PROTOCOL_VERSIONS.contains(&answer.protocol_version.as_str()) =>
        {
            Some(answer.protocol_version.as_str().to_owned())
        }
        _ => None,
    }
}

/// The error of a handshake refused because the server answered the revision `offered`,
/// naming it (cut, printable, credentials replaced) and the revisions reins speaks.
pub(crate) fn refused_revision(
    server: &str,
    offered: &str,
    secrets: &[(String, String)],
) -> McpError {
    McpError::Handshake {
        server: server.to_owned(),
        message: format!(
            "it answered the handshake with MCP revision `{}`, which reins does not speak \
             (it speaks {})",
            shown_message(offered, secrets, SHOWN_REVISION_BYTES),
            SUPPORTED_PROTOCOL_VERSIONS.join(", ")
        ),
        stderr: String::new(),
    }
}

/// An answer to `initialize` without `capabilities`, read as one declaring `tools` and
/// nothing else: MCP requires the field, but servers in the wild leave it out (an SDK that
/// omits an empty object, a server written by hand). Such a server was configured for its
/// tools, so they are asked for ([`McpClient::tools`](crate::McpClient::tools)); a server
/// with none answers the listing with an error or an empty list, as any would. Any other
/// answer is kept as it is, and an answer still unreadable fails as before, naming the
/// next field that is wrong.
pub(crate) fn with_capabilities(answer: ServerResult) -> ServerResult {
    let ServerResult::CustomResult(CustomResult(mut answer)) = answer else {
        return answer;
    };
    if let Some(fields) = answer.as_object_mut()
        && !fields.contains_key("capabilities")
    {
        fields.insert(
            "capabilities".to_owned(),
            serde_json::json!({ "tools": {} }),
        );
        if let Ok(typed) = InitializeResult::deserialize(&answer) {
            return ServerResult::InitializeResult(typed);
        }
    }
    ServerResult::CustomResult(CustomResult(answer))
}

/// [`with_capabilities`] for a whole message answering an `initialize` (when `initialize`)
/// posted over HTTP, which rmcp's HTTP transport reads (for the revision to send with every
/// later request) before [`Lenient`](crate::lenient) sees it.
pub(crate) fn message_with_capabilities(
    initialize: bool,
    message: ServerJsonRpcMessage,
) -> ServerJsonRpcMessage {
    match message {
        JsonRpcMessage::Response(mut response) if initialize => {
            response.result = with_capabilities(response.result);
            JsonRpcMessage::Response(response)
        }
        other => other,
    }
}

/// [`message_with_capabilities`] for an event stream answering an `initialize` POST; other
/// streams (`initialize` false) are left as they are.
pub(crate) fn events_with_capabilities(
    initialize: bool,
    events: BoxStream<'static, Result<Sse, SseError>>,
) -> BoxStream<'static, Result<Sse, SseError>> {
    if !initialize {
        return events;
    }
    events
        .map(|event| {
            event.map(|mut event| {
                let read = event
                    .data
                    .as_deref()
                    .and_then(|data| serde_json::from_str::<ServerJsonRpcMessage>(data).ok());
                // Written again only when read differently: any other event is left as sent.
                if let Some(JsonRpcMessage::Response(mut response)) = read
                    && matches!(response.result, ServerResult::CustomResult(_))
                {
                    response.result = with_capabilities(response.result);
                    if matches!(response.result, ServerResult::InitializeResult(_))
                        && let Ok(data) = serde_json::to_string(&response)
                    {
                        event.data = Some(data);
                    }
                }
                event
            })
        })
        .boxed()
}

/// Whether `message` is an `initialize` request.
pub(crate) fn is_initialize(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, JsonRpcMessage::Request(request)
        if matches!(request.request, ClientRequest::InitializeRequest(_)))
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
