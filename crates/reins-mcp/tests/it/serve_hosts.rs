//! Which `Host` a request to a tool set served over streamable HTTP may name: loopback and
//! the allowed names without a token (against DNS rebinding), any with one; and which web
//! page (`Origin`) it may come from: loopback pages and the allowed ones without a token.

use reins::tool::ToolSet;
use reins_mcp::McpService;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Only against a hang: the status line comes long before.
const HANG_GUARD: Duration = Duration::from_secs(60);

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}"#;

/// The status code of an `initialize` request naming `host`, with `token` as its bearer.
async fn status(address: SocketAddr, host: &str, token: Option<&str>) -> u16 {
    let authorization = token
        .map(|token| format!("Authorization: Bearer {token}\r\n"))
        .unwrap_or_default();
    status_with(address, host, &authorization).await
}

/// The status code of an `initialize` request naming `host`, sent with a page's `origin`.
async fn status_from(address: SocketAddr, host: &str, origin: &str) -> u16 {
    status_with(address, host, &format!("Origin: {origin}\r\n")).await
}

/// The status code of an `initialize` request naming `host`, with `headers` (whole lines).
async fn status_with(address: SocketAddr, host: &str, headers: &str) -> u16 {
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{headers}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    );
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let head = tokio::time::timeout(HANG_GUARD, async {
        let mut head = Vec::new();
        let mut buffer = [0u8; 1024];
        while !head.windows(2).any(|pair| pair == b"\r\n") {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buffer[..n]),
            }
        }
        head
    })
    .await
    .expect("the server never answered");
    let line = String::from_utf8_lossy(&head).into_owned();
    line.split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {line:?}"))
}

async fn listener() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").await.unwrap()
}

#[tokio::test]
async fn without_a_token_only_loopback_and_allowed_hosts_are_served() {
    let served = McpService::new(ToolSet::new())
        .allow_host("agents.internal")
        .serve_http(listener().await)
        .unwrap();
    let address = served.local_addr();
    let port = address.port();

    assert_eq!(
        status(address, &format!("127.0.0.1:{port}"), None).await,
        200
    );
    assert_eq!(
        status(address, &format!("localhost:{port}"), None).await,
        200
    );
    // A name re-pointed at this machine by an attacker's DNS is refused.
    assert_eq!(
        status(address, &format!("attacker.example:{port}"), None).await,
        403
    );
    // The name the service was told it is served under is not.
    assert_eq!(status(address, "agents.internal", None).await, 200);
    assert_eq!(
        status(address, &format!("agents.internal:{port}"), None).await,
        200
    );
}

#[tokio::test]
async fn with_a_token_clients_may_name_the_server_by_any_host() {
    let served = McpService::new(ToolSet::new())
        .serve_http_with_bearer_token(listener().await, "host-token-7")
        .unwrap();
    let address = served.local_addr();
    let public = "tools.example.com:8443";

    assert_eq!(status(address, public, Some("host-token-7")).await, 200);
    assert_eq!(status(address, public, None).await, 401);
    assert_eq!(status(address, public, Some("host-token-8")).await, 401);
}

/// A page of another site cannot call the tools through a visitor's browser: without a token,
/// a request from a page (`Origin`) is served only from loopback pages and the allowed ones;
/// one from no page (any client that is not a browser) is served.
#[tokio::test]
async fn without_a_token_only_loopback_and_allowed_pages_are_served() {
    let served = McpService::new(ToolSet::new())
        .allow_origin("https://console.example:443")
        .serve_http(listener().await)
        .unwrap();
    let address = served.local_addr();
    let host = format!("127.0.0.1:{}", address.port());
    assert_eq!(
        status_from(address, &host, "http://evil.example").await,
        403
    );
    assert_eq!(status_from(address, &host, "null").await, 403);
    assert_eq!(
        status_from(address, &host, "http://localhost.evil.example:6274").await,
        403
    );
    for page in [
        "http://localhost:6274",
        "http://127.0.0.1:8080",
        "https://console.example",
    ] {
        assert_eq!(status_from(address, &host, page).await, 200, "{page}");
    }
    assert_eq!(status(address, &host, None).await, 200);
    served.shutdown();
}
