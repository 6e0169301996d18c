//! The hostile server of `hostile.rs` over streamable HTTP: what the client reads leniently
//! over stdio it reads the same way over HTTP (the same wrapper sits on both transports).

use crate::hostile::{reads_newer_content, reads_newer_tools};
use crate::hostile_bounds::{HANG_GUARD, refuses_answers_too_heavy_or_too_long};
use crate::hostile_handshake::{recorded, refusal, refused, scratch_file};
use crate::servers::{connect, python};
use reins_mcp::McpServer;
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// `hostile_server.py <mode> --http`, killed when dropped.
pub(crate) struct HostileHttp {
    child: Child,
    url: String,
}

impl HostileHttp {
    fn start(mode: &str) -> HostileHttp {
        HostileHttp::start_with(mode, &[])
    }

    /// The server in `mode`, with `flags` after `--http` (`--sse`: every answer an event;
    /// `--get`: a call's answer on the stream the client opens with a GET).
    pub(crate) fn start_with(mode: &str, flags: &[&str]) -> HostileHttp {
        HostileHttp::start_with_env(mode, flags, &[])
    }

    /// The server in `mode`, with `flags`, and `env` in its environment.
    pub(crate) fn start_with_env(mode: &str, flags: &[&str], env: &[(&str, &str)]) -> HostileHttp {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/it/fixtures/hostile_server.py"
        );
        let mut child = Command::new(python())
            .args([script, mode, "--http"])
            .args(flags)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the hostile server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("its stdout"))
            .read_line(&mut line)
            .expect("its port");
        let port = line.trim().strip_prefix("PORT ").expect("PORT <n>");
        HostileHttp {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }

    pub(crate) fn server(&self) -> McpServer {
        McpServer::http(&self.url).name("hostile")
    }
}

impl Drop for HostileHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn content_the_client_cannot_read_is_left_out_over_http_too() {
    let server = HostileHttp::start("newer-content");
    reads_newer_content(connect(server.server()).await).await;
}

#[tokio::test]
async fn a_listed_tool_the_client_cannot_read_is_left_out_over_http_too() {
    let server = HostileHttp::start("newer-tools");
    reads_newer_tools(connect(server.server()).await).await;
}

#[tokio::test]
async fn a_result_echoing_the_bearer_token_does_not_show_it() {
    let server = HostileHttp::start("echo-auth");
    let client = connect(server.server().bearer_token("tok-secret-42")).await;
    let result = client.call_tool("echo", json!({}), None).await.unwrap();
    assert_eq!(result.text(), "you sent Bearer [redacted]");
}

/// Each way an HTTP server answers a POST: a JSON body, or an event stream.
const ANSWERED_AS: [&[&str]; 2] = [&[], &["--sse"]];

#[tokio::test]
async fn an_answer_too_heavy_or_too_long_to_parse_fails_its_call_at_once_over_http() {
    for flags in ANSWERED_AS {
        let server = HostileHttp::start_with("oversized", flags);
        let client = connect(server.server().call_timeout(HANG_GUARD)).await;
        refuses_answers_too_heavy_or_too_long(&client).await;
    }
}

#[tokio::test]
async fn an_answer_too_heavy_or_too_long_fails_its_call_at_once_on_the_get_stream() {
    let server = HostileHttp::start_with("oversized", &["--get"]);
    let client = connect(server.server().call_timeout(HANG_GUARD)).await;
    refuses_answers_too_heavy_or_too_long(&client).await;
}

#[tokio::test]
async fn a_tool_list_too_heavy_to_parse_fails_at_once_over_http() {
    for flags in ANSWERED_AS {
        let server = HostileHttp::start_with("heavy-list", flags);
        let client = connect(server.server().call_timeout(HANG_GUARD)).await;
        let error = client.tools().await.unwrap_err();
        let text = error.to_string();
        assert!(text.contains("tools/list"), "{flags:?}: {text}");
        assert!(
            text.contains("more than 32 MiB of memory once parsed"),
            "{flags:?}: {text}"
        );
        // The connection is as it was.
        let fine = client
            .call_tool("echo", json!({"text": "fine"}), None)
            .await
            .unwrap();
        assert_eq!(fine.text(), "fine");
    }
}

/// The revision the server answers is the one each later request names in its
/// `MCP-Protocol-Version` header (an older one than the client asked for, here); one reins
/// does not speak ends the connection at the handshake.
#[tokio::test]
async fn the_revision_the_server_answered_is_sent_with_each_request_and_an_unsupported_one_refused()
{
    let answering = |offered: &str| {
        let fields = json!({"protocolVersion": offered}).to_string();
        HostileHttp::start_with_env("sent-version", &[], &[("HOSTILE_INIT_RESULT", &fields)])
    };
    for offered in ["2025-06-18", "2024-11-05"] {
        let server = answering(offered);
        let client = connect(server.server()).await;
        let sent = client.call_tool("echo", json!({}), None).await.unwrap();
        assert_eq!(sent.text(), offered);
    }
    for offered in ["2026-07-28", "2099-01-01"] {
        let server = answering(offered);
        assert_eq!(refused(server.server()).await, refusal(offered));
    }
}

/// Over HTTP too, a revision refused is never confirmed with `notifications/initialized`
/// (rmcp's transport would POST it before the client could refuse).
#[tokio::test]
async fn a_revision_refused_over_http_is_never_confirmed_with_notifications_initialized() {
    for (offered, confirmed) in [("2025-06-18", true), ("2099-01-01", false)] {
        let methods = scratch_file(&format!("http-{offered}"));
        let fields = json!({"protocolVersion": offered}).to_string();
        let server = HostileHttp::start_with_env(
            "polite",
            &[],
            &[
                ("HOSTILE_INIT_RESULT", &fields),
                ("HOSTILE_METHODS_FILE", &methods.to_string_lossy()),
            ],
        );
        if confirmed {
            connect(server.server()).await.close();
        } else {
            assert_eq!(refused(server.server()).await, refusal(offered));
        }
        // Killed and waited for: it has recorded all it was sent.
        drop(server);
        let expected: &[&str] = if confirmed {
            &["initialize", "notifications/initialized"]
        } else {
            &["initialize"]
        };
        assert_eq!(recorded(&methods), expected, "{offered}");
    }
}

/// An answer to `initialize` without `capabilities` is read as declaring none before rmcp's
/// HTTP transport reads it, whether it comes as JSON or as an event: the revision it answered
/// is the one each later request names.
#[tokio::test]
async fn an_answer_to_initialize_without_capabilities_is_read_over_http_too() {
    let fields = json!({"protocolVersion": "2025-03-26", "capabilities": null}).to_string();
    for flags in ANSWERED_AS {
        let server =
            HostileHttp::start_with_env("sent-version", flags, &[("HOSTILE_INIT_RESULT", &fields)]);
        let client = connect(server.server()).await;
        let tools = client.tools().await.unwrap();
        assert!(tools.iter().any(|tool| tool.name() == "echo"), "{flags:?}");
        let sent = client.call_tool("echo", json!({}), None).await.unwrap();
        assert_eq!(sent.text(), "2025-03-26", "{flags:?}");
    }
}
