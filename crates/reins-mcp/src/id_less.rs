//! A server's error under a null `id` (`{"id": null, "error": ...}`), which JSON-RPC allows
//! when the server could not read the id of what it answers (its parse error, an invalid
//! request). rmcp cannot tie it to a request: it logs it at DEBUG and drops it, and the
//! request it answers waits for its timeout (or for ever, without one).
//!
//! Over streamable HTTP a JSON body, or an event stream, answering a POST answers the request
//! that POST sent: such an error is given that request's `id` here, so that the call fails at
//! once with the server's error (its message scrubbed of the server's credentials, as
//! `unechoed.rs` does for every message, and cut as errors quote the server). On a GET
//! stream, or answering a notification's POST, there is no request to tie it to.
//!
//! Over stdio there is no such tie either: a null `id` may answer any line the server could
//! not read, a notification of the client's (`notifications/initialized`, `cancelled`) or
//! its answer to a request of the server's as well as one of its requests, and even with one
//! request outstanding the client cannot tell which. Failing that request with another
//! line's error would throw away its own answer, so the error fails nothing: it is warned of
//! ([`warn_unanswerable`]) and the request is left to its timeout.

use crate::hidden::LOGGED_ERROR_BYTES;
use crate::server::shown_message;
use rmcp::model::{JsonRpcMessage, RequestId, ServerJsonRpcMessage};

/// `message`, given `asked`'s id when it is an error under a null `id` and `asked` is the
/// request it answers (the one the POST carrying it sent).
pub(crate) fn tied_to(
    message: ServerJsonRpcMessage,
    asked: Option<&RequestId>,
) -> ServerJsonRpcMessage {
    match (message, asked) {
        (JsonRpcMessage::Error(mut error), Some(asked)) if error.id.is_none() => {
            error.id = Some(asked.clone());
            JsonRpcMessage::Error(error)
        }
        (message, _) => message,
    }
}

/// The data of an event (on the stream answering the POST that sent `asked`), given `asked`'s
/// id when it is an error under a null `id`; `None` when it is not one.
pub(crate) fn tied_data(data: &str, asked: Option<&RequestId>) -> Option<String> {
    // Most events are no error: they are not parsed a second time.
    if asked.is_none() || !data.contains("\"error\"") {
        return None;
    }
    match serde_json::from_str::<ServerJsonRpcMessage>(data).ok()? {
        JsonRpcMessage::Error(error) if error.id.is_none() => {
            serde_json::to_string(&tied_to(JsonRpcMessage::Error(error), asked)).ok()
        }
        _ => None,
    }
}

/// Warns that `message`, when it is an error under a null `id`, answers no request the
/// client can tell; its message is shown without `credentials`, cut.
pub(crate) fn warn_unanswerable(
    message: &ServerJsonRpcMessage,
    server: &str,
    credentials: &[(String, String)],
) {
    if let JsonRpcMessage::Error(error) = message
        && error.id.is_none()
    {
        tracing::warn!(
            target: "reins_mcp",
            server,
            code = error.error.code.0,
            error = %shown_message(&error.error.message, credentials, LOGGED_ERROR_BYTES),
            "the MCP server answered with an error naming no request (a null id): it fails \
             no call, and the call it may answer waits for its timeout"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ErrorData;

    #[test]
    fn only_an_error_under_a_null_id_is_given_the_asked_id() {
        let asked = RequestId::Number(4);
        let null = JsonRpcMessage::error(ErrorData::parse_error("bad", None), None);
        let JsonRpcMessage::Error(tied) = tied_to(null.clone(), Some(&asked)) else {
            panic!("no longer an error");
        };
        assert_eq!(tied.id, Some(asked.clone()));
        // Nothing asked (a GET stream, a notification's POST): it stays as it is.
        let JsonRpcMessage::Error(kept) = tied_to(null, None) else {
            panic!("no longer an error");
        };
        assert_eq!(kept.id, None);
        let other = RequestId::Number(9);
        let named = JsonRpcMessage::error(ErrorData::parse_error("bad", None), Some(other.clone()));
        let JsonRpcMessage::Error(named) = tied_to(named, Some(&asked)) else {
            panic!("no longer an error");
        };
        assert_eq!(named.id, Some(other));
        let data = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#;
        let tied = tied_data(data, Some(&asked)).expect("tied");
        assert!(tied.contains(r#""id":4"#), "{tied}");
        assert_eq!(tied_data(data, None), None);
        assert_eq!(
            tied_data(r#"{"jsonrpc":"2.0","method":"x"}"#, Some(&asked)),
            None
        );
    }
}
