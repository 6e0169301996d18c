//! Answers naming the server's credentials as the request they answer
//! (`hostile_server.py secret-ids`): one no client can read as a JSON-RPC message, one too
//! heavy to parse. Each is warned of, over stdio and over HTTP (a JSON body, an event
//! stream), and neither the warnings nor the call's error quote the credential.

use crate::hostile::hostile_server;
use crate::hostile_bounds::HANG_GUARD;
use crate::hostile_http::HostileHttp;
use crate::notifications::Captured;
use crate::servers::connect;
use reins_mcp::{McpClient, McpError};
use serde_json::json;

/// What the warning of an answer no client can read says.
const UNREADABLE: &str = "is not a JSON-RPC message this client can read";

/// What the warning of an answer too heavy to parse says.
const TOO_HEAVY: &str = "was not read: its";

/// Whether a warning saying `why` names the request it answers with the credential replaced.
fn warned_with_id_replaced(captured: &Captured, why: &str) -> bool {
    captured
        .0
        .lock()
        .unwrap()
        .iter()
        .any(|line| line.contains(why) && line.contains("[redacted]"))
}

/// Every line logged, none holding `secret`.
fn logged_without(captured: &Captured, secret: &str) {
    let logged = captured.0.lock().unwrap().clone();
    for line in &logged {
        assert!(!line.contains(secret), "{line}");
    }
}

/// The `all` call: both answers naming the credential, then the call's own answer, which no
/// client can read, fails it at once; its error and every warning quote no credential.
async fn all_fail_the_call_without_the_secret(
    client: &McpClient,
    captured: &Captured,
    secret: &str,
) {
    let error = client
        .call_tool("echo", json!({"text": "all"}), None)
        .await
        .expect_err("an answer the client cannot read");
    assert!(matches!(error, McpError::Protocol { .. }), "{error:?}");
    assert!(!format!("{error} {error:?}").contains(secret), "{error:?}");
    for why in [UNREADABLE, TOO_HEAVY] {
        assert!(
            warned_with_id_replaced(captured, why),
            "no warning saying {why:?}: {:#?}",
            captured.0.lock().unwrap()
        );
    }
    logged_without(captured, secret);
}

/// The call `text` (`unreadable`, `heavy`): its only answer names no request of the client's,
/// so the call waits, or fails (rmcp may end a connection over such an answer); it is left
/// once the warning saying `why` is logged. Neither quotes the credential.
async fn warned_without_the_secret(
    client: &McpClient,
    captured: &Captured,
    text: &str,
    why: &str,
    secret: &str,
) {
    let call = client.call_tool("echo", json!({"text": text}), None);
    let warned = captured.wait_for(|line| line.contains(why));
    let ended = tokio::select! {
        ended = call => Some(ended),
        _ = warned => None,
    };
    if let Some(ended) = ended {
        let error = ended.expect_err("no answer to the call");
        assert!(!format!("{error} {error:?}").contains(secret), "{error:?}");
    }
    assert!(
        warned_with_id_replaced(captured, why),
        "{text}: {:#?}",
        captured.0.lock().unwrap()
    );
    logged_without(captured, secret);
}

// The test's runtime runs every task on this thread, so the thread's default subscriber
// sees the client's transport.
#[tokio::test(flavor = "current_thread")]
async fn answers_naming_a_credential_env_var_are_warned_of_without_it_over_stdio() {
    const TOKEN: &str = "tok-0123456789abcdef";
    let captured = Captured::default();
    let _guard = tracing::subscriber::set_default(captured.clone());
    let server = hostile_server("secret-ids")
        .env("SERVICE_TOKEN", TOKEN)
        .call_timeout(HANG_GUARD);
    let client = connect(server).await;
    all_fail_the_call_without_the_secret(&client, &captured, TOKEN).await;
}

#[tokio::test(flavor = "current_thread")]
async fn answers_naming_the_bearer_token_are_warned_of_without_it_over_http() {
    const TOKEN: &str = "tok-secret-42";
    let captured = Captured::default();
    let _guard = tracing::subscriber::set_default(captured.clone());
    // A call's answers on the GET stream: events, read on after each answer.
    let server = HostileHttp::start_with("secret-ids", &["--get"]);
    let client = connect(server.server().bearer_token(TOKEN).call_timeout(HANG_GUARD)).await;
    all_fail_the_call_without_the_secret(&client, &captured, TOKEN).await;
    // One answer alone: a JSON body, and an event stream (which rmcp stops reading at its
    // first answer, whichever request that names).
    for flags in [&[][..], &["--sse"]] {
        let server = HostileHttp::start_with("secret-ids", flags);
        for (text, why) in [("unreadable", UNREADABLE), ("heavy", TOO_HEAVY)] {
            let captured = Captured::default();
            let _guard = tracing::subscriber::set_default(captured.clone());
            let client = connect(server.server().bearer_token(TOKEN)).await;
            warned_without_the_secret(&client, &captured, text, why, TOKEN).await;
        }
    }
}
