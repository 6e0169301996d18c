//! The hostile server of `hostile.rs` over streamable HTTP: what the client reads leniently
//! over stdio it reads the same way over HTTP (the same wrapper sits on both transports).

use crate::servers::{connect, python};
use reins::tool::ToolCallContext;
use reins_mcp::{McpContent, McpServer};
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
    let client = connect(server.server()).await;
    let set = client.tools().await.unwrap().to_tool_set();
    let call = set
        .call(
            "echo",
            &json!({"text": "x"}),
            ToolCallContext::new("r", "1", "p"),
        )
        .await;
    assert!(call.outcome.is_success(), "{:?}", call.output);
    assert_eq!(
        call.output.render(),
        "before\n[content of type \"video\" not shown]\n[content of type \"image\" not shown]\nafter"
    );
    let result = client
        .call_tool("echo", json!({"text": "x"}), None)
        .await
        .unwrap();
    assert_eq!(
        result.content[1],
        McpContent::Other {
            kind: "video".into()
        }
    );
}

#[tokio::test]
async fn a_listed_tool_the_client_cannot_read_is_left_out_over_http_too() {
    let server = HostileHttp::start("newer-tools");
    let client = connect(server.server()).await;
    let tools = client.tools().await.unwrap();
    assert_eq!(tools.names().collect::<Vec<_>>(), ["echo", "draw"]);
    assert!(tools.get("echo").unwrap().traits().read_only);
}
