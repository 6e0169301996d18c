//! A server's message weighed before it is parsed.
//!
//! rmcp parses each message into `serde_json` structures (an untagged enum buffers it
//! whole first), so a message within the 16 MiB limit made of two million `{"a":0}` takes
//! gigabytes once parsed. Every message a server sends is weighed first
//! ([`reins::json_weight::parses_within`]); one too heavy, or too long, is never parsed: the
//! request it answers fails at once with an error saying why ([`refusal_answering`]), and anything
//! else (a request, a notification) is dropped with a warning. A served tool set weighs
//! its client's requests with the same [`is_light`] (`serve/stdio.rs`, `serve/http.rs`).
//!
//! The `id` a warning quotes is the server's to write: it is shown as errors quote the
//! server ([`logged_id`]), without the server's credentials.

use crate::hidden::Credentials;
use crate::server::shown_message;
use rmcp::RoleClient;
use rmcp::model::{ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::RxJsonRpcMessage;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};

/// The longest message read from a server (rmcp's own line limit, 16 MiB).
pub(crate) const MAX_MESSAGE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// How much of a request id a warning quotes: an answer's `id` may be any string.
const LOGGED_ID_BYTES: usize = 128;

/// How much of a message over [`MAX_MESSAGE_BYTES`] is kept: enough to find which request
/// it answers when its `id` comes first, as it usually does.
pub(crate) const TOO_LONG_HEAD_BYTES: usize = 64 * 1024;

/// Why a message is not parsed, as its refusal says.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Unread {
    /// Its structure would take more than [`reins::json_weight::MAX_PARSED_OVERHEAD`].
    TooHeavy { bytes: usize },
    /// It is longer than [`MAX_MESSAGE_BYTES`].
    TooLong { bytes: usize },
    /// It is longer than [`MAX_MESSAGE_BYTES`], and was not read to its end: an HTTP body
    /// is left unread past that (the connection closed), so its length is not known.
    Cut { read: usize },
}

impl Unread {
    /// Why the message was not read, after "was not read: ".
    fn reason(&self) -> String {
        match self {
            Unread::TooHeavy { bytes } => format!(
                "its {bytes} bytes of JSON would take more than {} MiB of memory once parsed \
                 (too many small objects or values)",
                reins::json_weight::MAX_PARSED_OVERHEAD / (1024 * 1024)
            ),
            Unread::TooLong { bytes } => format!(
                "it is {bytes} bytes long, over the {} MiB a message may take",
                MAX_MESSAGE_BYTES / (1024 * 1024)
            ),
            Unread::Cut { read } => format!(
                "it is over the {} MiB a message may take (no more of it was read after \
                 {read} bytes)",
                MAX_MESSAGE_BYTES / (1024 * 1024)
            ),
        }
    }

    /// What a served tool set answers a client's request it did not read.
    pub(crate) fn of_request(&self) -> String {
        format!("the request was not read: {}", self.reason())
    }
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the server's answer was not read: {}", self.reason())
    }
}

/// Whether `text`, a whole message, may be parsed: its structure takes at most
/// [`reins::json_weight::MAX_PARSED_OVERHEAD`].
pub(crate) fn is_light(text: &[u8]) -> bool {
    reins::json_weight::parses_within(text, reins::json_weight::MAX_PARSED_OVERHEAD)
}

/// The request id `id`, written by the server, as a warning quotes it: without the
/// server's `credentials` (a server can name its token as the request it answers), control
/// sequences shown as text, cut to [`LOGGED_ID_BYTES`].
pub(crate) fn logged_id(id: &RequestId, credentials: &Credentials) -> String {
    shown_message(&id.to_string(), &credentials.secrets, LOGGED_ID_BYTES)
}

/// [`refusal_answering`] of a message that came back for no request in particular.
#[cfg(test)]
pub(crate) fn refusal(
    text: &[u8],
    why: Unread,
    server: &str,
) -> Option<RxJsonRpcMessage<RoleClient>> {
    refusal_answering(text, why, server, &Credentials::default(), None)
}

/// What the client is told of a message that is not parsed: when `text` (the message, or
/// its start) is the answer to a request, an error answering that request, so that its
/// caller learns why now rather than at its timeout; otherwise `None`, and a warning.
///
/// `asked` is the one request the message can answer, if any (an HTTP POST's, or the
/// handshake's `initialize` over stdio): when `text` is not a request of the server's and
/// names no request it answers (its `id` comes after what was read, or is inside a batch),
/// it answers `asked`, whose caller would otherwise wait for an answer that was there and
/// refused. The warning quotes the id without `credentials`, the server's.
pub(crate) fn refusal_answering(
    text: &[u8],
    why: Unread,
    server: &str,
    credentials: &Credentials,
    asked: Option<&RequestId>,
) -> Option<RxJsonRpcMessage<RoleClient>> {
    let shape = MessageShape::of(text);
    let answered = match (shape.method, shape.answer, shape.answered, asked) {
        (true, ..) => None,
        (false, true, Some(id), _) => Some(id),
        (false, _, _, asked) => asked.cloned(),
    };
    match answered {
        Some(id) => {
            let shown_id = logged_id(&id, credentials);
            tracing::warn!(target: "reins_mcp", server, id = %shown_id, "{why}");
            Some(JsonRpcMessage::error(
                ErrorData::internal_error(why.to_string(), None),
                Some(id),
            ))
        }
        None => {
            tracing::warn!(
                target: "reins_mcp",
                server,
                "{why}; it answered no request (or its id could not be found), so it is dropped"
            );
            None
        }
    }
}

/// The id of the request `text` (a message, or its start) is, read from its top-level keys
/// without keeping their values: for a served tool set to answer a request it refuses
/// unread. `None` for a notification, an answer, or a request whose `id` was not read.
pub(crate) fn request_id(text: &[u8]) -> Option<RequestId> {
    let shape = MessageShape::of(text);
    shape.method.then_some(shape.answered).flatten()
}

/// What the top-level keys of a message say it is, read without keeping its values.
#[derive(Debug, Default)]
pub(crate) struct MessageShape {
    /// Its `id`, when that is a request id.
    pub(crate) answered: Option<RequestId>,
    /// It has a `method`: a request or a notification.
    pub(crate) method: bool,
    /// It has a `result` or an `error`.
    pub(crate) answer: bool,
}

impl MessageShape {
    /// Reads the keys of `text` as far as they go: the start of a message cut short, or one
    /// nested too deep to skip, still gives the keys before that point.
    pub(crate) fn of(text: &[u8]) -> MessageShape {
        let mut shape = MessageShape::default();
        let mut reader = serde_json::Deserializer::from_slice(text);
        // An error only means the text ended (or could not be skipped) before the keys did.
        let _ = reader.deserialize_map(ShapeReader(&mut shape));
        shape
    }
}

struct ShapeReader<'a>(&'a mut MessageShape);

impl<'de> Visitor<'de> for ShapeReader<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // Keys are read one by one, values skipped without being kept.
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "id" => self.0.answered = map.next_value::<Option<RequestId>>()?,
                "method" => {
                    self.0.method = true;
                    map.next_value::<IgnoredAny>()?;
                }
                "result" | "error" => {
                    self.0.answer = true;
                    map.next_value::<IgnoredAny>()?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused_id(text: &str) -> Option<RequestId> {
        match refusal(text.as_bytes(), Unread::TooHeavy { bytes: 1 }, "s")? {
            JsonRpcMessage::Error(error) => error.id,
            _ => None,
        }
    }

    #[test]
    fn an_answer_is_refused_by_its_id_wherever_it_stands() {
        let bomb = vec![r#"{"a":0}"#; 1000].join(",");
        let after = format!(r#"{{"jsonrpc":"2.0","result":{{"x":[{bomb}]}},"id":7}}"#);
        assert_eq!(refused_id(&after), Some(RequestId::Number(7)));
        // The start of a message cut short still names the request it answers.
        let cut = format!(r#"{{"jsonrpc":"2.0","id":"r-1","error":{{"message":"{bomb}"#);
        assert_eq!(refused_id(&cut), Some(RequestId::String("r-1".into())));
    }

    #[test]
    fn what_answers_no_request_is_dropped() {
        assert_eq!(
            refused_id(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#),
            None
        );
        assert_eq!(
            refused_id(r#"{"jsonrpc":"2.0","method":"notifications/x"}"#),
            None
        );
        // The id comes after what was cut off: nothing to answer.
        assert_eq!(refused_id(r#"{"jsonrpc":"2.0","result":{"x":[1,2"#), None);
        assert_eq!(refused_id("not json"), None);
    }

    #[test]
    fn an_answer_whose_id_was_not_read_answers_the_request_it_came_back_for() {
        let asked = RequestId::Number(4);
        let refused = |text: &str| match refusal_answering(
            text.as_bytes(),
            Unread::Cut { read: 1 },
            "s",
            &Credentials::default(),
            Some(&asked),
        )? {
            JsonRpcMessage::Error(error) => error.id,
            _ => None,
        };
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","result":{"x":[1,2"#),
            Some(asked.clone())
        );
        // Its own id, when it was read, is the one answered.
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","id":9,"result":{"x":[1,2"#),
            Some(RequestId::Number(9))
        );
        // A request of the server's answers nothing.
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","method":"ping","params":{"#),
            None
        );
    }
}
