//! What bounds the clients of a tool set served over streamable HTTP: a client that never
//! finishes its request headers is disconnected, one that never finishes its body is
//! answered 408 (a tool that takes longer than that is not), and connections past the cap
//! are closed.

use reins::tool::ToolSet;
use reins_mcp::McpService;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Only against a hang: what these tests wait for happens long before.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// The request of a client that stops in the middle of its headers.
const PARTIAL_REQUEST: &[u8] = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty";

/// A whole request, after which the server closes the connection.
const WHOLE_REQUEST: &[u8] = b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";

async fn serve(service: McpService) -> reins_mcp::McpHttpServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    service.serve_http(listener).unwrap()
}

/// Every byte the server sends on `stream` until it closes the connection (a reset counts
/// as closed too: the server may close before reading what was sent).
async fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut received = Vec::new();
    let read = tokio::time::timeout(HANG_GUARD, async {
        let mut buffer = [0u8; 4096];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server never closed the connection");
    received
}

/// Connects to `address`, sends `request` (the server may have closed already) and reads
/// until the server closes.
async fn exchange(address: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(address).await.unwrap();
    let _ = stream.write_all(request).await;
    read_until_closed(&mut stream).await
}

#[tokio::test]
async fn a_client_that_stops_sending_its_headers_is_disconnected() {
    let served =
        serve(McpService::new(ToolSet::new()).http_header_timeout(Duration::from_millis(200)))
            .await;
    let mut stalled = TcpStream::connect(served.local_addr()).await.unwrap();
    // The start of a request, sent byte by byte, then nothing more.
    for byte in PARTIAL_REQUEST {
        stalled.write_all(&[*byte]).await.unwrap();
    }
    read_until_closed(&mut stalled).await;
    // So is a client that connects and sends nothing.
    let mut silent = TcpStream::connect(served.local_addr()).await.unwrap();
    read_until_closed(&mut silent).await;
    // The server still answers the clients that do send their request.
    let answer = exchange(served.local_addr(), WHOLE_REQUEST).await;
    assert!(
        answer.starts_with(b"HTTP/1.1 "),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    served.shutdown();
}

#[tokio::test]
async fn a_client_that_stops_sending_its_body_is_answered_408_and_disconnected() {
    let served =
        serve(McpService::new(ToolSet::new()).http_body_timeout(Duration::from_millis(200))).await;
    let mut stalled = TcpStream::connect(served.local_addr()).await.unwrap();
    // Whole headers announcing 1,000 bytes of body, then ten of them and nothing more.
    stalled
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n\
              {\"jsonrpc\"",
        )
        .await
        .unwrap();
    let answer = read_until_closed(&mut stalled).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    served.shutdown();
}

#[tokio::test]
async fn a_connection_past_the_cap_is_closed_unanswered_until_one_ends() {
    let served = serve(McpService::new(ToolSet::new()).max_http_connections(1)).await;
    let address = served.local_addr();
    let mut holder = TcpStream::connect(address).await.unwrap();
    holder.write_all(PARTIAL_REQUEST).await.unwrap();

    let refused = exchange(address, WHOLE_REQUEST).await;
    assert!(refused.is_empty(), "{}", String::from_utf8_lossy(&refused));

    // Once the holder leaves, its place is free again (the server notices it left at its
    // own pace, so ask until answered).
    drop(holder);
    let answered = tokio::time::timeout(HANG_GUARD, async {
        loop {
            let answer = exchange(address, WHOLE_REQUEST).await;
            if !answer.is_empty() {
                return answer;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("no connection was answered after the first one closed");
    assert!(
        answered.starts_with(b"HTTP/1.1 "),
        "{}",
        String::from_utf8_lossy(&answered)
    );
    served.shutdown();
}

/// The body timeout bounds the body, not the call: a tool that takes longer answers a client
/// of the 2026-07-28 revision (its version in each request, the answer in the response
/// itself, nothing sent before it) with its result, not `408`.
#[tokio::test]
async fn a_call_longer_than_the_body_timeout_is_answered_with_its_result() {
    let body_timeout = Duration::from_millis(200);
    let slow = reins::tool::tool_fn(
        "slow",
        "Takes a while.",
        move |_: serde_json::Value| async move {
            tokio::time::sleep(body_timeout * 3).await;
            Ok::<_, std::convert::Infallible>("done at last")
        },
    );
    let mut tools = ToolSet::new();
    tools.add(slow);
    let served = serve(McpService::new(tools).http_body_timeout(body_timeout)).await;
    let body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"probe","version":"1"}}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: slow\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let answer = exchange(served.local_addr(), request.as_bytes()).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("done at last"), "{answer}");
    served.shutdown();
}

/// A POST of `body`, after which the server closes the connection.
fn post_closing(body: &str) -> Vec<u8> {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body.as_bytes());
    request
}

/// A body within the 4 MiB a request may take, but made of small objects that would take
/// hundreds of megabytes once parsed (a few such requests at once, gigabytes), is refused
/// unparsed with 413 saying why; the server serves on.
#[tokio::test]
async fn a_request_too_heavy_to_parse_is_refused_unparsed() {
    let served = serve(McpService::new(ToolSet::new())).await;
    let initialize = |extra: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"probe","version":"1"}}{extra}}}}}"#
        )
    };
    let objects = vec![r#"{"a":0}"#; 480 * 1024].join(",");
    let heavy = initialize(&format!(r#","padding":[{objects}]"#));
    assert!(heavy.len() < 4 * 1024 * 1024);
    let answer = exchange(served.local_addr(), &post_closing(&heavy)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("once parsed"), "{answer}");
    let answer = exchange(served.local_addr(), &post_closing(&initialize(""))).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    served.shutdown();
}
