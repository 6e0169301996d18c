//! The hostile server of `hostile.rs` over streamable HTTP: what the client reads leniently
//! over stdio it reads the same way over HTTP (the same wrapper sits on both transports).

use crate::hostile::{reads_newer_content, reads_newer_tools};
use crate::servers::{connect, python};
use reins_mcp::McpServer;
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// `hostile_server.py <mode> --http`, killed when dropped.
struct HostileHttp {
    child: Child,
    url: String,
}

impl HostileHttp {
    fn start(mode: &str) -> HostileHttp {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/it/fixtures/hostile_server.py"
        );
        let mut child = Command::new(python())
            .args([script, mode, "--http"])
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

    fn server(&self) -> McpServer {
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
