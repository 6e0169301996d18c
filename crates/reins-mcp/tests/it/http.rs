//! `@modelcontextprotocol/server-everything` in its streamable HTTP mode, on loopback.

use crate::servers::{EverythingHttp, call, connect, free_port};
use reins::tool::ToolSet;
use reins_mcp::{McpError, McpServer};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn lists_and_calls_tools_over_streamable_http() {
    let server = EverythingHttp::start();
    let client = connect(
        McpServer::http(server.url())
            .name("everything-http")
            .bearer_token("not-checked-by-this-server")
            .header("x-tenant", "reins-tests"),
    )
    .await;
    assert_eq!(client.name(), "everything-http");
    assert_eq!(client.process_id(), None);
    let (name, _version) = client.server_version().unwrap();
    assert!(name.contains("everything"), "{name}");

    let tools = client.tools().await.unwrap();
    let names: Vec<&str> = tools.names().collect();
    assert!(names.contains(&"echo"), "{names:?}");
    assert!(names.contains(&"get-sum"), "{names:?}");

    let mut set = ToolSet::new();
    for tool in tools {
        set.add(tool);
    }
    let sum = call(&set, "get-sum", json!({"a": 40, "b": 2})).await;
    assert!(sum.outcome.is_success(), "{:?}", sum.output);
    assert!(sum.output.render().contains("42"), "{:?}", sum.output);

    let echo = client
        .call_tool("echo", json!({"message": "over http"}), Some("effect-1"))
        .await
        .unwrap();
    assert!(echo.text().contains("over http"), "{echo:?}");
}

#[tokio::test]
async fn an_unreachable_url_fails_naming_the_server_without_its_secrets() {
    let port = free_port();
    let server = McpServer::http(format!("http://127.0.0.1:{port}/mcp?api_key=query-secret"))
        .bearer_token("bearer-secret-1")
        .header("x-api-key", "header-secret-2")
        .connect_timeout(Duration::from_secs(10));
    let debug = format!("{server:?}");
    let error = server.connect().await.unwrap_err();
    let shown = format!("{error} {error:?} {debug}");
    assert!(
        matches!(error, McpError::Handshake { .. } | McpError::Timeout { .. }),
        "{error:?}"
    );
    assert_eq!(error.server(), format!("http://127.0.0.1:{port}/mcp"));
    for secret in ["bearer-secret-1", "header-secret-2", "query-secret"] {
        assert!(!shown.contains(secret), "{secret} leaked: {shown}");
    }
}

#[tokio::test]
async fn a_header_http_cannot_carry_is_a_config_error() {
    let error = McpServer::http("http://127.0.0.1:1/mcp")
        .name("bad")
        .header("x-key", "line\nbreak")
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Config { .. }), "{error:?}");
    assert!(!error.to_string().contains("line\nbreak"), "{error}");
}

#[tokio::test]
async fn a_url_written_unlike_its_normal_form_leaks_no_secret_either() {
    // The HTTP library quotes the URL in its normal form (host in lower case, a `/` path),
    // not as written: what is hidden must not depend on how the user wrote it.
    let port = free_port();
    let server = McpServer::http(format!(
        "http://probe:password-secret-3@LOCALHOST:{port}?api_key=query-secret-4"
    ))
    .connect_timeout(Duration::from_secs(10));
    let error = server.connect().await.unwrap_err();
    let shown = format!("{error} {error:?}");
    assert!(
        matches!(error, McpError::Handshake { .. } | McpError::Timeout { .. }),
        "{error:?}"
    );
    for secret in ["password-secret-3", "query-secret-4"] {
        assert!(!shown.contains(secret), "{secret} leaked: {shown}");
    }
}
