//! A served tool set's client that breaks the protocol's rules: one that sends `initialize`
//! again in a session it already initialized, one that sends a request under the id of one
//! of its requests still running, one that names a session the server does not know. Each
//! is answered as the MCP specification says, and the session goes on.

use crate::serve_calls::{INITIALIZE, answer, call, open_session, post, tools};
use reins_mcp::McpService;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// Only against a hang: what these tests wait for happens long before.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// `initialize` again, under id 1, in a session already initialized.
const INITIALIZE_AGAIN: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}"#;

/// A `ping` under id `id`.
fn ping(id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)
}

/// Waits until `count` calls of the `wait` tool have started.
async fn started(calls: &AtomicUsize, signal: &Notify, count: usize) {
    tokio::time::timeout(HANG_GUARD, async {
        loop {
            let signalled = signal.notified();
            if calls.load(Ordering::SeqCst) >= count {
                return;
            }
            signalled.await;
        }
    })
    .await
    .expect("the call never started");
}

/// The refusal `message` should be: an invalid-request error by `id` saying `why`.
fn assert_refused(message: &Value, id: u64, why: &str) {
    assert_eq!(message["id"], id, "{message}");
    assert_eq!(message["error"]["code"], -32600, "{message}");
    let said = message["error"]["message"].as_str().unwrap_or_default();
    assert!(said.contains(why), "{message}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_second_initialize_is_refused_over_stdio_and_the_session_goes_on() {
    use std::io::{BufRead, Write};
    let (mut server, mut input, mut output) = crate::serve_stdio::initialized_server();
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    writeln!(input, "{INITIALIZE_AGAIN}").unwrap();
    writeln!(input, "{}", ping(2)).unwrap();
    let mut read = || {
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap_or_else(|_| panic!("not JSON: {line:?}"))
    };
    let refused = read();
    let pinged = read();
    drop(input);
    let _ = server.kill();
    let _ = server.wait();
    assert_refused(&refused, 1, "already initialized");
    assert_eq!(pinged, json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
}

#[tokio::test]
async fn a_second_initialize_is_refused_over_http_and_the_session_goes_on() {
    let served = McpService::new(tools(Arc::default(), Arc::default(), Arc::default()))
        .serve_http(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap())
        .unwrap();
    let address = served.local_addr();
    let session = open_session(address).await;
    let (head, mut stream) = post(address, Some(&session), INITIALIZE_AGAIN).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_refused(&answer(&mut stream, 1).await, 1, "already initialized");
    // No other session was opened in its place: the response names none.
    assert!(
        !head.to_ascii_lowercase().contains("mcp-session-id"),
        "{head}"
    );
    let (_, mut stream) = post(address, Some(&session), &call(2, "quick")).await;
    assert_eq!(
        answer(&mut stream, 2).await["result"]["content"][0]["text"],
        "done"
    );
    served.shutdown();
}

/// The next message the server writes with the id `id`, read line by line from `lines`.
async fn next_with_id<R: tokio::io::AsyncBufRead + Unpin>(
    lines: &mut tokio::io::Lines<R>,
    id: u64,
) -> Value {
    tokio::time::timeout(HANG_GUARD, async {
        loop {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("the server ended its output");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("nothing answered id {id}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_under_an_id_in_flight_is_refused_over_stdio_and_the_first_completes() {
    let (calls, signal, release) = (Arc::default(), Arc::default(), Arc::new(Notify::new()));
    let service = McpService::new(tools(
        Arc::clone(&calls),
        Arc::clone(&signal),
        release.clone(),
    ));
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (server_input, server_output) = tokio::io::split(server);
    let serving = tokio::spawn(service.serve_io(server_input, server_output));
    let (client_input, mut client_output) = tokio::io::split(client);
    let mut lines = BufReader::new(client_input).lines();
    let mut send = async |line: &str| {
        client_output.write_all(line.as_bytes()).await.unwrap();
        client_output.write_all(b"\n").await.unwrap();
    };
    send(INITIALIZE).await;
    next_with_id(&mut lines, 0).await;
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    send(&call(7, "wait")).await;
    started(&calls, &signal, 1).await;

    // Sent while call 7 runs: refused by its id, and call 7 is answered once it ends.
    send(&ping(7)).await;
    assert_refused(&next_with_id(&mut lines, 7).await, 7, "already in use");
    release.notify_waiters();
    let completed = next_with_id(&mut lines, 7).await;
    assert_eq!(
        completed["result"]["content"][0]["text"], "released",
        "{completed}"
    );
    // Once answered, the id may be used again.
    send(&ping(7)).await;
    assert_eq!(next_with_id(&mut lines, 7).await["result"], json!({}));
    drop(client_output);
    serving.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_under_an_id_in_flight_is_refused_over_http_and_the_first_completes() {
    let (calls, signal, release) = (Arc::default(), Arc::default(), Arc::new(Notify::new()));
    let served = McpService::new(tools(
        Arc::clone(&calls),
        Arc::clone(&signal),
        release.clone(),
    ))
    .serve_http(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap())
    .unwrap();
    let address = served.local_addr();
    let session = open_session(address).await;
    let (head, mut first) = post(address, Some(&session), &call(7, "wait")).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    started(&calls, &signal, 1).await;

    let (head, mut second) = post(address, Some(&session), &ping(7)).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_refused(&answer(&mut second, 7).await, 7, "already in use");
    release.notify_waiters();
    let completed = answer(&mut first, 7).await;
    assert_eq!(
        completed["result"]["content"][0]["text"], "released",
        "{completed}"
    );
    let (_, mut again) = post(address, Some(&session), &ping(7)).await;
    assert_eq!(answer(&mut again, 7).await["result"], json!({}));
    served.shutdown();
}

/// The status of the response to `request`, sent on a connection of its own.
async fn status(address: SocketAddr, request: &str) -> u16 {
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    tokio::time::timeout(HANG_GUARD, stream.read_exact(&mut head))
        .await
        .expect("the server never answered")
        .unwrap();
    let head = String::from_utf8_lossy(&head).into_owned();
    head[9..12]
        .parse()
        .unwrap_or_else(|_| panic!("no status in {head:?}"))
}

fn delete(session: &str) -> String {
    format!(
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: {session}\r\n\
         MCP-Protocol-Version: 2025-06-18\r\nContent-Length: 0\r\n\r\n"
    )
}

fn get(session: &str) -> String {
    format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: {session}\r\n\
         MCP-Protocol-Version: 2025-06-18\r\nAccept: text/event-stream\r\n\r\n"
    )
}

/// A session the server does not know, never opened or ended already, is answered `404`
/// whatever the request (the specification asks it of every request naming one), so that
/// a client knows to initialize a new one.
#[tokio::test]
async fn a_request_in_a_session_the_server_does_not_know_is_answered_404() {
    let served = McpService::new(tools(Arc::default(), Arc::default(), Arc::default()))
        .serve_http(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap())
        .unwrap();
    let address = served.local_addr();
    assert_eq!(status(address, &delete("made-up")).await, 404);
    assert_eq!(status(address, &get("made-up")).await, 404);

    let session = open_session(address).await;
    assert_eq!(status(address, &delete(&session)).await, 202);
    assert_eq!(status(address, &delete(&session)).await, 404);
    assert_eq!(status(address, &get(&session)).await, 404);
    let (head, _) = post(address, Some(&session), &ping(1)).await;
    assert!(head.starts_with("HTTP/1.1 404"), "{head}");
    served.shutdown();
}
