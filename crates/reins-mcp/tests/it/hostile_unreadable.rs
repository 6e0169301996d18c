//! Answers a client cannot read as JSON-RPC messages, though they say which request they
//! answer (`hostile_server.py unreadable-answer`): nested deeper than a JSON parser goes, or
//! of another JSON-RPC version. Each fails its own call at once, saying why, over every
//! transport; not at the call's timeout (or never, without one), nor as a lost connection.

use crate::hostile::hostile_server;
use crate::hostile_bounds::HANG_GUARD;
use crate::hostile_http::HostileHttp;
use crate::servers::connect;
use reins_mcp::{McpClient, McpError};
use serde_json::json;

/// The calls of the `unreadable-answer` server: `deep` and `v1` fail at once as a protocol
/// error naming the call and saying the answer could not be read; the next call is answered.
async fn unreadable_answers_fail_their_call_at_once(client: &McpClient) {
    for text in ["deep", "v1"] {
        let error = client
            .call_tool("echo", json!({"text": text}), None)
            .await
            .expect_err("an answer the client cannot read");
        assert!(
            matches!(error, McpError::Protocol { .. }),
            "{text}: {error:?}"
        );
        let shown = error.to_string();
        assert!(
            shown.contains("MCP server `hostile`: `tools/call echo` failed"),
            "{shown}"
        );
        assert!(
            shown.contains("is not a JSON-RPC message this client can read"),
            "{shown}"
        );
    }
    let fine = client
        .call_tool("echo", json!({"text": "fine"}), None)
        .await
        .expect("the connection is as it was");
    assert_eq!(fine.text(), "fine");
}

#[tokio::test]
async fn an_unreadable_answer_fails_its_call_at_once_over_stdio() {
    let client = connect(hostile_server("unreadable-answer").call_timeout(HANG_GUARD)).await;
    unreadable_answers_fail_their_call_at_once(&client).await;
}

#[tokio::test]
async fn an_unreadable_answer_fails_its_call_at_once_over_http() {
    for flags in [&[][..], &["--sse"], &["--get"]] {
        let server = HostileHttp::start_with("unreadable-answer", flags);
        let client = connect(server.server().call_timeout(HANG_GUARD)).await;
        unreadable_answers_fail_their_call_at_once(&client).await;
    }
}
