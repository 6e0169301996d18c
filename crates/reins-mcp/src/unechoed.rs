//! The server's credentials taken out of every message it sends, before rmcp is given it.
//!
//! rmcp logs what it is given under its own `tracing` target: every message at TRACE (`new
//! event`), the server's `initialize` answer at INFO, its requests at DEBUG. A server (or a
//! proxy before it) that quotes the bearer token, a header's value or a credential from its
//! environment back — as a message's `id`, in an error's text, in its name or a log message
//! — would have it written by any subscriber that lets rmcp's events through, whatever
//! reins-mcp scrubs in its own. [`Unechoed`] sits between rmcp and the stdio or HTTP
//! transport and replaces each credential (those of at least
//! [`MIN_ECHOED_SECRET_LEN`](crate::echoes::MIN_ECHOED_SECRET_LEN) bytes) with `[redacted]`
//! in every string of each message, keys included, as the tool results and lists are
//! (`echoes.rs`). A message is looked through only when the server has such credentials.
//!
//! An answer whose `id` quoted a credential answers no request of the client's (its ids are
//! numbers) and is ignored as before; a request of the server's whose `id` did is answered
//! under the replaced `id`. An error under a null `id` that reaches rmcp (over stdio, on a
//! GET stream) is warned of here: rmcp drops it at DEBUG (`id_less.rs`).

use crate::hidden::Credentials;
use reins::hooks::redaction::Redaction;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::borrow::Cow;
use std::sync::Arc;

/// A transport whose received messages quote none of the server's credentials.
pub(crate) struct Unechoed<T> {
    inner: T,
    server: Arc<str>,
    /// The redaction of the credentials; `None` when the server has none long enough.
    echoes: Option<Redaction>,
    /// The credentials, each with what a warning shows instead.
    secrets: Vec<(String, String)>,
}

impl<T> Unechoed<T> {
    /// `inner`, of the server named `server`, whose credentials are `credentials`.
    pub(crate) fn new(inner: T, server: &str, credentials: &Credentials) -> Self {
        Unechoed {
            inner,
            server: Arc::from(server),
            echoes: crate::echoes::redaction(&credentials.secrets),
            secrets: credentials.secrets.clone(),
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Unechoed<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = self.inner.receive().await?;
            let message = match &self.echoes {
                Some(echoes) => unechoed(message, echoes, &self.server),
                None => Some(message),
            };
            if let Some(message) = message {
                // rmcp drops it at DEBUG; the call it may answer waits (`id_less.rs`).
                crate::id_less::warn_unanswerable(&message, &self.server, &self.secrets);
                return Some(message);
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// `message` with every credential `echoes` knows replaced; `None` (with a warning) when the
/// message, once replaced, is no longer one rmcp reads: it is dropped rather than passed on
/// quoting a credential.
fn unechoed(
    message: RxJsonRpcMessage<RoleClient>,
    echoes: &Redaction,
    server: &str,
) -> Option<RxJsonRpcMessage<RoleClient>> {
    let Ok(value) = serde_json::to_value(&message) else {
        tracing::warn!(target: "reins_mcp", server, "a message of the MCP server could not be looked through for its credentials; it is dropped");
        return None;
    };
    let Some(replaced) = echoes.redact_json(&value) else {
        return Some(message);
    };
    match serde_json::from_value(replaced) {
        Ok(message) => Some(message),
        Err(_) => {
            tracing::warn!(target: "reins_mcp", server, "a message of the MCP server quotes its credentials and cannot be read without them; it is dropped");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn credentials() -> Credentials {
        Credentials::new(vec![("tok-0123456789".to_owned(), "[redacted]".to_owned())])
    }

    fn message(value: serde_json::Value) -> RxJsonRpcMessage<RoleClient> {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn every_string_of_a_message_is_looked_through_keys_and_ids_included() {
        let Some(echoes) = crate::echoes::redaction(&credentials().secrets) else {
            panic!("no redaction of a long credential");
        };
        let error = message(
            json!({"jsonrpc": "2.0", "id": "id tok-0123456789", "error": {
            "code": -1, "message": "refused tok-0123456789",
            "data": {"tok-0123456789": ["tok-0123456789"]}}}),
        );
        let Some(replaced) = unechoed(error, &echoes, "s") else {
            panic!("the error was dropped");
        };
        let text = serde_json::to_string(&replaced).unwrap();
        assert!(!text.contains("tok-0123456789"), "{text}");
        assert_eq!(text.matches("[redacted]").count(), 4, "{text}");
        // A message quoting none is passed on as it is.
        let ping = message(json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}));
        let Some(passed) = unechoed(ping, &echoes, "s") else {
            panic!("the ping was dropped");
        };
        let text = serde_json::to_string(&passed).unwrap();
        assert_eq!(text, r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#);
    }
}
