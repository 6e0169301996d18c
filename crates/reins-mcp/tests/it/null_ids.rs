//! A server's error under a null `id` (`{"id": null, "error": ...}`: JSON-RPC's answer when
//! the server could not read the request's id), and a credential a server quotes where rmcp's
//! HTTP transport logs it before reins-mcp's other scrubbing sees it: in the session id, in
//! an event's `id`, in a message on the `initialize` stream before its answer.

use crate::hostile_bounds::HANG_GUARD;
use crate::servers::{connect, python};
use crate::traced_secrets::EveryTarget;
use reins_mcp::{McpError, McpServer};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/it/fixtures/null_id_server.py"
);

/// `null_id_server.py --http <flags>`, killed when dropped.
struct NullIdHttp {
    child: Child,
    url: String,
}

impl NullIdHttp {
    fn start(flags: &[&str]) -> NullIdHttp {
        let mut child = Command::new(python())
            .arg(SCRIPT)
            .arg("--http")
            .args(flags)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("its stdout"))
            .read_line(&mut line)
            .expect("its port");
        let port = line.trim().strip_prefix("PORT ").expect("PORT <n>");
        NullIdHttp {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }

    fn server(&self, token: &str) -> McpServer {
        McpServer::http(&self.url)
            .name("null-id")
            .bearer_token(token)
            .call_timeout(HANG_GUARD)
    }
}

impl Drop for NullIdHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn an_error_under_a_null_id_fails_the_http_call_whose_post_it_answers_at_once() {
    const TOKEN: &str = "tok-null-0123456789";
    // A JSON body, one with a failing status, and an event stream on the POST.
    for flags in [&[][..], &["--status"], &["--sse"]] {
        let http = NullIdHttp::start(flags);
        let client = connect(http.server(TOKEN)).await;
        let error = client
            .call_tool("fail", json!({}), None)
            .await
            .expect_err("the server answers with an error");
        let McpError::Protocol { message, .. } = &error else {
            panic!("{flags:?}: not the server's error: {error:?}");
        };
        assert!(
            message.contains("could not read it, "),
            "{flags:?}: {error}"
        );
        assert!(!format!("{error} {error:?}").contains(TOKEN), "{error:?}");
        // The session goes on.
        client.tools().await.unwrap();
    }
}

// Over stdio nothing ties the error to a request (see `unechoed.rs`): the call is left to
// its timeout, and the error is warned of, without the credential.
#[tokio::test(flavor = "current_thread")]
async fn an_error_under_a_null_id_over_stdio_is_warned_of_and_answers_no_call() {
    const TOKEN: &str = "tok-null-stdio-0123456789";
    let captured = EveryTarget::default();
    let _guard = tracing::subscriber::set_default(captured.clone());
    let server = McpServer::stdio(python(), [SCRIPT])
        .name("null-id")
        .env("SERVICE_TOKEN", TOKEN)
        .call_timeout(Duration::from_millis(500));
    let client = connect(server).await;
    let error = client.call_tool("fail", json!({}), None).await;
    assert!(matches!(error, Err(McpError::Timeout { .. })), "{error:?}");
    let warned = captured.quoting("could not read it, [redacted]");
    assert!(
        warned.iter().any(|line| line.starts_with("reins_mcp")),
        "{warned:?}"
    );
    assert_eq!(captured.quoting(TOKEN), Vec::<String>::new());
}

#[tokio::test(flavor = "current_thread")]
async fn a_credential_in_an_event_id_or_before_the_initialize_answer_is_traced_nowhere() {
    const TOKEN: &str = "tok-events-0123456789";
    let captured = EveryTarget::default();
    let _guard = tracing::subscriber::set_default(captured.clone());
    let http = NullIdHttp::start(&["--sse"]);
    let client = connect(http.server(TOKEN)).await;
    let error = client.call_tool("fail", json!({}), None).await;
    assert!(matches!(error, Err(McpError::Protocol { .. })), "{error:?}");
    client.close();
    assert_eq!(captured.quoting(TOKEN), Vec::<String>::new());
    // The message before the initialize answer, and the event that is no JSON, were logged.
    assert!(!captured.quoting("hello [redacted]").is_empty());
    assert!(!captured.quoting("broken-[redacted]").is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn a_session_id_quoting_a_credential_is_refused_and_traced_nowhere() {
    const TOKEN: &str = "tok-session-0123456789";
    let captured = EveryTarget::default();
    let _guard = tracing::subscriber::set_default(captured.clone());
    let http = NullIdHttp::start(&["--session"]);
    let error = http
        .server(TOKEN)
        .connect()
        .await
        .expect_err("the session id is refused");
    let McpError::Handshake { message, .. } = &error else {
        panic!("not a failed handshake: {error:?}");
    };
    assert!(message.contains("session id"), "{error}");
    assert!(!format!("{error} {error:?}").contains(TOKEN), "{error:?}");
    assert_eq!(captured.quoting(TOKEN), Vec::<String>::new());
}
