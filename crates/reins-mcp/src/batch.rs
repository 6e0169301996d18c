//! A JSON-RPC batch a server sends (an array of messages), read as its messages one after
//! another.
//!
//! MCP 2025-03-26, a revision reins speaks, allowed batches; 2025-06-18 removed them, but
//! servers written for the older revision still send one, their answer to `initialize`
//! among others. rmcp reads one message at a time, and a batch is none: over stdio it was
//! passed over (the handshake waited for its timeout), over HTTP it failed as "not a
//! JSON-RPC message". Each transport now hands rmcp a batch's messages in their order;
//! what of a batch is not a message (an empty or nested batch, a number) is passed over as
//! a line that is not a message is. The batch is weighed whole before it is read
//! (`weighed.rs`), as any message is.

use rmcp::model::ServerJsonRpcMessage;
use serde_json::Value;

/// The messages of `text` when it is a batch (a JSON array), in order, without what of it is
/// not a message; `None` when it is not an array. `text` must be weighed first.
pub(crate) fn batch_messages(text: &[u8], server: &str) -> Option<Vec<ServerJsonRpcMessage>> {
    // Only an array is read again: anything else was no message already.
    if text.iter().find(|byte| !byte.is_ascii_whitespace()) != Some(&b'[') {
        return None;
    }
    let elements: Vec<Value> = serde_json::from_slice(text).ok()?;
    let count = elements.len();
    let messages: Vec<ServerJsonRpcMessage> = elements
        .into_iter()
        .filter_map(|element| serde_json::from_value(element).ok())
        .collect();
    tracing::debug!(
        target: "reins_mcp",
        server,
        elements = count,
        messages = messages.len(),
        "the server sent a JSON-RPC batch (MCP 2025-03-26); its messages are read one by one"
    );
    Some(messages)
}

#[cfg(test)]
mod tests {
    use super::batch_messages;
    use rmcp::model::JsonRpcMessage;

    #[test]
    fn a_batch_is_its_messages_in_order_and_anything_else_is_none() {
        let text = br#" [{"jsonrpc":"2.0","method":"notifications/tools/list_changed"},
            [], [{"jsonrpc":"2.0","id":1,"result":{}}], 7, {"id":2},
            {"jsonrpc":"2.0","id":1,"result":{}}] "#;
        let messages = batch_messages(text, "s").unwrap();
        assert_eq!(messages.len(), 2);
        assert!(matches!(messages[0], JsonRpcMessage::Notification(_)));
        assert!(matches!(messages[1], JsonRpcMessage::Response(_)));
        assert_eq!(batch_messages(b"[]", "s").map(|m| m.len()), Some(0));
        for not_a_batch in [&b"{}"[..], b"[1,", b"7", b""] {
            assert!(batch_messages(not_a_batch, "s").is_none());
        }
    }
}
