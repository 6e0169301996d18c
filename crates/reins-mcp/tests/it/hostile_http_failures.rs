//! An HTTP server (or a proxy before it) failing one request while the session lives on: a
//! status that is not an answer (a proxy's 502, a 401 for a token refused, a redirect not
//! followed), or an answer of a type that is neither JSON nor an event stream. The call fails
//! saying what the server answered, not as a connection lost, and the next call is sent.

use crate::hostile_bounds::HANG_GUARD;
use crate::hostile_http::HostileHttp;
use crate::servers::connect;
use reins_mcp::McpError;
use serde_json::json;

/// Calls `echo` on the `polite` server started with `env`, and returns the error it fails
/// with, after checking it is a protocol error of the call and the client still connected.
async fn failed_call(env: &[(&str, &str)]) -> String {
    let server = HostileHttp::start_with_env("polite", &[], env);
    let client = connect(server.server().call_timeout(HANG_GUARD)).await;
    let error = client
        .call_tool("echo", json!({"text": "x"}), None)
        .await
        .expect_err("the server fails every call");
    assert!(matches!(error, McpError::Protocol { .. }), "{error:?}");
    assert!(!client.is_closed(), "{error}");
    let shown = error.to_string();
    assert!(
        shown.starts_with("MCP server `hostile`: `tools/call echo` failed: "),
        "{shown}"
    );
    shown
}

#[tokio::test]
async fn a_call_answered_with_a_failing_status_says_which() {
    for (status, said) in [
        ("502", "HTTP 502"),
        ("500", "HTTP 500"),
        ("401", "HTTP 401 Unauthorized: <h1>Bad Gateway</h1>"),
        ("400", "HTTP 400 Bad Request"),
        ("302", "HTTP 302 Found"),
    ] {
        let shown = failed_call(&[("HOSTILE_CALL_STATUS", status)]).await;
        assert!(shown.contains(said), "{status}: {shown}");
    }
}

#[tokio::test]
async fn a_call_answered_with_another_content_type_says_which() {
    let shown = failed_call(&[("HOSTILE_CONTENT_TYPE", "text/plain")]).await;
    assert!(
        shown.contains("Content-Type `text/plain`, neither JSON nor an event stream"),
        "{shown}"
    );
}

/// A JSON answer labelled an event stream: the call fails saying what came, and the session
/// lives on (the next call is sent, and fails the same way).
#[tokio::test]
async fn a_json_answer_labelled_an_event_stream_says_so() {
    let env = [("HOSTILE_CONTENT_TYPE", "text/event-stream; charset=utf-8")];
    let shown = failed_call(&env).await;
    assert!(
        shown.contains(
            "the server answered with Content-Type `text/event-stream; charset=utf-8`, but its \
             body is JSON, not an event stream"
        ),
        "{shown}"
    );
}
