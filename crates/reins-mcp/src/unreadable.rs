//! A server's answer that is JSON, light enough to parse, and names the request it answers,
//! yet is no JSON-RPC message rmcp can read: nested deeper than `serde_json` goes (128
//! levels), of another JSON-RPC version, an `error` without its `code`.
//!
//! rmcp drops such a line over stdio and such an event on a GET stream, so its request
//! waited for its timeout (or for ever, without one) and then said it timed out; an HTTP
//! POST's answer of the kind failed its request as a lost connection. Here it becomes the
//! error answering its request, saying why, as an answer too long or too heavy to read does
//! (`weighed.rs`). What answers no request (stdout chatter, a malformed notification) is
//! passed over as before.
//!
//! The parse error and the request's `id` come from what the server sent: what quotes them
//! (the answer's error, the warning) shows them as the server's error messages are shown,
//! without the server's credentials.

use crate::hidden::{Credentials, LOGGED_ERROR_BYTES};
use crate::server::shown_message;
use crate::weighed::{MessageShape, logged_id};
use rmcp::RoleClient;
use rmcp::model::{ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::RxJsonRpcMessage;

/// The most bytes of the parse error an answer's error quotes.
const MAX_ERROR_BYTES: usize = 1024;

/// The error answering the request `text` (a whole message rmcp could not read, `error`
/// saying why) answers: the one its `id` names, else `asked` (the one request it can
/// answer, if any); `None`, with a debug line, when it is not an answer (it has no `result`
/// nor `error`, or has a `method`). Neither quotes `credentials`, the server's.
pub(crate) fn unreadable_answering(
    text: &[u8],
    error: &serde_json::Error,
    server: &str,
    credentials: &Credentials,
    asked: Option<&RequestId>,
) -> Option<RxJsonRpcMessage<RoleClient>> {
    let shape = MessageShape::of(text);
    let answered = match shape {
        MessageShape { method: true, .. } | MessageShape { answer: false, .. } => None,
        MessageShape {
            answered: Some(id), ..
        } => Some(id),
        MessageShape { answered: None, .. } => asked.cloned(),
    };
    let Some(id) = answered else {
        tracing::debug!(
            target: "reins_mcp",
            server,
            error = %shown_message(&error.to_string(), &credentials.secrets, LOGGED_ERROR_BYTES),
            "a message of the server's is not a JSON-RPC message this client can read, and \
             answers no request; it is ignored"
        );
        return None;
    };
    Some(error_answering(id, error, server, credentials))
}

/// The error answering `id`, whose answer rmcp could not read (`error` says why); neither it
/// nor its warning quotes `credentials`, the server's.
pub(crate) fn error_answering(
    id: RequestId,
    error: &serde_json::Error,
    server: &str,
    credentials: &Credentials,
) -> RxJsonRpcMessage<RoleClient> {
    // A parse error may quote what the server sent, whole (a credential it echoes among it):
    // it is scrubbed, cut, and shown as text.
    let error = shown_message(&error.to_string(), &credentials.secrets, MAX_ERROR_BYTES);
    let why =
        format!("the server's answer is not a JSON-RPC message this client can read: {error}");
    let shown_id = logged_id(&id, credentials);
    tracing::warn!(target: "reins_mcp", server, id = %shown_id, "{why}");
    JsonRpcMessage::error(ErrorData::internal_error(why, None), Some(id))
}

/// Why `text` is no message rmcp reads, when it is none (a batch is read elsewhere, and is
/// left to its reader).
pub(crate) fn unreadable(text: &[u8]) -> Option<serde_json::Error> {
    if text.iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b'[') {
        return None;
    }
    serde_json::from_slice::<rmcp::model::ServerJsonRpcMessage>(text).err()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(text: &str, asked: Option<&RequestId>) -> Option<RequestId> {
        let error = unreadable(text.as_bytes())?;
        match unreadable_answering(text.as_bytes(), &error, "s", &Credentials::default(), asked)? {
            JsonRpcMessage::Error(error) => error.id,
            _ => None,
        }
    }

    #[test]
    fn an_unreadable_answer_is_answered_by_its_id_and_anything_else_ignored() {
        let asked = RequestId::Number(4);
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":"r-1","result":{}{}}}"#,
            "[".repeat(300),
            "]".repeat(300)
        );
        assert_eq!(answered(&deep, None), Some(RequestId::String("r-1".into())));
        let old = r#"{"jsonrpc":"1.0","id":7,"result":{}}"#;
        assert_eq!(answered(old, Some(&asked)), Some(RequestId::Number(7)));
        // An answer whose id is not one answers the one request it can.
        let no_id = r#"{"jsonrpc":"2.0","error":{"code":1,"message":"x"},"id":{}}"#;
        assert_eq!(answered(no_id, Some(&asked)), Some(asked.clone()));
        // No answer: a malformed notification, a request, stdout chatter.
        let noted = r#"{"jsonrpc":"1.0","method":"notifications/message"}"#;
        assert_eq!(answered(noted, Some(&asked)), None);
        assert_eq!(answered(r#"{"status":"up"}"#, Some(&asked)), None);
        assert_eq!(answered("Listening on stdio", Some(&asked)), None);
        // What rmcp reads, and a batch, are not unreadable here.
        assert!(unreadable(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).is_none());
        assert!(unreadable(br#"[{"jsonrpc":"1.0","id":1,"result":{}}]"#).is_none());
    }

    #[test]
    fn an_answer_s_error_and_its_id_do_not_quote_the_server_s_credentials() {
        // A typed parse error quotes the value it could not read: here the token.
        #[derive(serde::Deserialize, Debug)]
        enum Level {
            Info,
        }
        let token = "tok-0123456789abcdef";
        let error = serde_json::from_str::<Level>(&format!(r#""{token}""#)).unwrap_err();
        assert!(error.to_string().contains(token), "{error}");
        let credentials = Credentials::new(vec![(token.to_owned(), "[redacted]".to_owned())]);
        let id = RequestId::String(format!("Bearer {token}").into());
        let JsonRpcMessage::Error(answer) = error_answering(id, &error, "s", &credentials) else {
            panic!("not an error");
        };
        let shown = answer.error.message.to_string();
        assert!(!shown.contains(token), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
    }
}
