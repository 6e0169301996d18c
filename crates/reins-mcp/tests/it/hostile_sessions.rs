//! An HTTP server that ends the session (answers 404 to a request carrying its
//! `Mcp-Session-Id`): the request fails, and the next one connects again with a whole,
//! checked handshake — never a silent `initialize` behind the caller's back, which would
//! bypass the revision check and could change the tools under the agent's feet.

use crate::hostile_bounds::HANG_GUARD;
use crate::hostile_handshake::refusal;
use crate::hostile_http::HostileHttp;
use crate::servers::connect;
use reins_mcp::{McpClient, McpError};
use serde_json::json;
use std::future::Future;

/// `hostile_server.py session --http`, forgetting each session after `requests` requests
/// that carry it; `env` adds to its environment.
fn forgetting(requests: &str, env: &[(&str, &str)]) -> HostileHttp {
    let mut env = env.to_vec();
    env.push(("HOSTILE_SESSION_REQUESTS", requests));
    HostileHttp::start_with_env("session", &[], &env)
}

/// `work`, which must finish (with an answer or an error) long before [`HANG_GUARD`].
async fn finishes<T>(work: impl Future<Output = T>) -> T {
    tokio::time::timeout(HANG_GUARD, work)
        .await
        .expect("finished, not waiting for ever")
}

/// What a call of `echo` answers: the session it came in and how many were given.
async fn call(client: &McpClient) -> Result<String, McpError> {
    finishes(client.call_tool("echo", json!({}), None))
        .await
        .map(|result| result.text())
}

#[tokio::test]
async fn a_call_in_a_session_the_server_ended_fails_and_the_next_connects_again() {
    // `notifications/initialized` and one call, then 404.
    let server = forgetting("2", &[]);
    let client = connect(server.server()).await;
    assert_eq!(call(&client).await.unwrap(), "session-1 of 1");
    let error = call(&client).await.unwrap_err();
    assert!(
        matches!(&error, McpError::Disconnected { operation, .. } if operation == "tools/call echo"),
        "{error:?}"
    );
    // An HTTP server runs on: the message must not say it stopped.
    assert!(
        error.to_string().contains("it ended the session"),
        "{error}"
    );
    assert!(client.is_closed());
    assert_eq!(client.restarts(), 0);
    // The next request opens a new connection, handshake and all, and says the tools may
    // have changed.
    assert_eq!(call(&client).await.unwrap(), "session-2 of 2");
    assert_eq!(client.restarts(), 1);
    assert!(client.tools_changed());
}

/// A server that ends the session and then answers the new handshake with a revision reins
/// does not speak is refused, as at the first connect: the revision is checked each time.
#[tokio::test]
async fn a_server_answering_a_new_handshake_with_an_unsupported_revision_is_refused() {
    let offered = "2099-01-01";
    let fields = json!({"protocolVersion": offered}).to_string();
    let server = forgetting("2", &[("HOSTILE_REINIT_RESULT", &fields)]);
    let client = connect(server.server()).await;
    assert_eq!(call(&client).await.unwrap(), "session-1 of 1");
    let error = call(&client).await.unwrap_err();
    assert!(matches!(error, McpError::Disconnected { .. }), "{error:?}");
    let error = call(&client).await.unwrap_err();
    assert!(matches!(error, McpError::Handshake { .. }), "{error:?}");
    assert_eq!(error.to_string(), refusal(offered));
}

/// The tool list too is asked for in the session only: one the server ended fails it.
#[tokio::test]
async fn a_tool_list_in_a_session_the_server_ended_fails() {
    let server = forgetting("2", &[]);
    let client = connect(server.server()).await;
    assert_eq!(call(&client).await.unwrap(), "session-1 of 1");
    let error = finishes(client.tools()).await.unwrap_err();
    assert!(
        matches!(&error, McpError::Disconnected { operation, .. } if operation == "tools/list"),
        "{error:?}"
    );
}

/// A server that ends every session at once is connected again only
/// [`max_restarts`](reins_mcp::McpServer::max_restarts) times; every request then fails at
/// once.
#[tokio::test]
async fn a_server_ending_every_session_is_connected_again_a_bounded_number_of_times() {
    let server = forgetting("1", &[]);
    let client = connect(server.server().max_restarts(2)).await;
    for _ in 0..5 {
        let error = call(&client).await.unwrap_err();
        assert!(matches!(error, McpError::Disconnected { .. }), "{error:?}");
    }
    assert_eq!(client.restarts(), 2);
}

/// A session ended before the handshake's `notifications/initialized` fails the connect.
#[tokio::test]
async fn a_session_ended_during_the_handshake_fails_the_connect() {
    let server = forgetting("0", &[]);
    let error = finishes(server.server().connect()).await.unwrap_err();
    assert!(matches!(error, McpError::Handshake { .. }), "{error:?}");
}

/// A 404 to the GET stream alone is no ended session: the server's answers to POSTs say
/// what the session is, and calls go on in it.
#[tokio::test]
async fn a_get_stream_answered_404_leaves_the_session_as_it_is() {
    let server = forgetting("100", &[("HOSTILE_GET_404", "1")]);
    let client = connect(server.server()).await;
    for _ in 0..3 {
        assert_eq!(call(&client).await.unwrap(), "session-1 of 1");
    }
    assert!(!client.is_closed());
}
