//! Which calls a tool set served over streamable HTTP runs: only those of an open session,
//! and only so many at once (a client that sends a call and hangs up leaves it running, as
//! the protocol does not take a disconnection for a cancellation, so without a cap a client
//! could start any number of them, one connection after another).

use reins::tool::{ToolSet, tool_fn};
use reins_mcp::McpService;
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// Only against a hang: what these tests wait for happens long before.
const HANG_GUARD: Duration = Duration::from_secs(60);

pub(crate) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Sends a POST of `body` (in the session `session`) and reads its response's head; the
/// stream is left open for the body.
pub(crate) async fn post(
    address: SocketAddr,
    session: Option<&str>,
    body: &str,
) -> (String, TcpStream) {
    let session = session
        .map(|id| format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-06-18\r\n"))
        .unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{session}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let head = tokio::time::timeout(HANG_GUARD, async {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match stream.read(&mut byte).await {
                Ok(0) | Err(_) => break,
                Ok(_) => head.push(byte[0]),
            }
        }
        head
    })
    .await
    .expect("the server never answered");
    (String::from_utf8_lossy(&head).into_owned(), stream)
}

/// The JSON-RPC message answering request `id` in the event stream on `stream`.
pub(crate) async fn answer(stream: &mut TcpStream, id: u64) -> Value {
    tokio::time::timeout(HANG_GUARD, async {
        let mut received = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            let text = String::from_utf8_lossy(&received).into_owned();
            let found = text
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
                .find(|message| message["id"] == id);
            if let Some(message) = found {
                return message;
            }
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => panic!("the stream ended without an answer: {text}"),
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await
    .expect("the call was never answered")
}

/// Opens a session (initialize, then initialized) and returns its id.
pub(crate) async fn open_session(address: SocketAddr) -> String {
    let (head, mut stream) = post(address, None, INITIALIZE).await;
    let session = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id in {head}"));
    answer(&mut stream, 0).await;
    let (head, _) = post(address, Some(&session), INITIALIZED).await;
    assert!(head.starts_with("HTTP/1.1 202"), "{head}");
    session
}

pub(crate) fn call(id: u64, tool: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
    )
}

/// A tool `wait` that counts its calls as they start and returns once `release` is notified;
/// and `quick`, which returns at once.
pub(crate) fn tools(
    started: Arc<AtomicUsize>,
    started_signal: Arc<Notify>,
    release: Arc<Notify>,
) -> ToolSet {
    let mut tools = ToolSet::new();
    tools.add(tool_fn("wait", "Waits to be released.", move |_: Value| {
        let (started, started_signal, release) =
            (started.clone(), started_signal.clone(), release.clone());
        async move {
            let released = release.notified();
            started.fetch_add(1, Ordering::SeqCst);
            started_signal.notify_waiters();
            released.await;
            Ok::<_, std::convert::Infallible>("released")
        }
    }));
    tools.add(tool_fn("quick", "Returns at once.", |_: Value| async {
        Ok::<_, std::convert::Infallible>("done")
    }));
    tools
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_past_the_cap_are_refused_even_when_their_clients_hung_up() {
    let started = Arc::new(AtomicUsize::new(0));
    let started_signal = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let service = McpService::new(tools(
        started.clone(),
        started_signal.clone(),
        release.clone(),
    ))
    .max_concurrent_calls(2);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let served = service.serve_http(listener).unwrap();
    let address = served.local_addr();
    let session = open_session(address).await;

    // Two calls sent, their connections closed as soon as the answer's stream starts.
    for id in 1..=2 {
        let (head, stream) = post(address, Some(&session), &call(id, "wait")).await;
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        drop(stream);
    }
    tokio::time::timeout(HANG_GUARD, async {
        while started.load(Ordering::SeqCst) < 2 {
            let signalled = started_signal.notified();
            if started.load(Ordering::SeqCst) >= 2 {
                break;
            }
            signalled.await;
        }
    })
    .await
    .expect("the calls never started");

    // Both still run: a third call is refused at once, as a tool error the model can read.
    let (_, mut stream) = post(address, Some(&session), &call(3, "quick")).await;
    let refused = answer(&mut stream, 3).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("2 calls"), "{text}");
    assert_eq!(started.load(Ordering::SeqCst), 2);

    // Once they end, calls run again.
    release.notify_waiters();
    let mut answered = None;
    for id in 4..200 {
        let (_, mut stream) = post(address, Some(&session), &call(id, "quick")).await;
        let message = answer(&mut stream, id).await;
        if message["result"]["isError"] != true {
            answered = Some(message);
            break;
        }
        tokio::task::yield_now().await;
    }
    let answered = answered.expect("calls were refused after the running ones ended");
    assert_eq!(answered["result"]["content"][0]["text"], "done");
    served.shutdown();
}

#[tokio::test]
async fn requests_outside_a_session_are_refused_and_run_nothing() {
    let started = Arc::new(AtomicUsize::new(0));
    let service = McpService::new(tools(
        started.clone(),
        Arc::new(Notify::new()),
        Arc::new(Notify::new()),
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let served = service.serve_http(listener).unwrap();
    let address = served.local_addr();
    let status = |head: &str| -> u16 {
        head.split(' ')
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("no status in {head:?}"))
    };

    // A call without initialize, one in a session that does not exist, a batch (the
    // protocol has none since 2025-06-18), and a batch that would open a session.
    let (head, _) = post(address, None, &call(1, "wait")).await;
    assert!((400..500).contains(&status(&head)), "{head}");
    let (head, _) = post(address, Some("made-up"), &call(2, "wait")).await;
    assert!((400..500).contains(&status(&head)), "{head}");
    let session = open_session(address).await;
    let batch = format!("[{},{}]", call(3, "wait"), call(4, "wait"));
    let (head, _) = post(address, Some(&session), &batch).await;
    assert!((400..500).contains(&status(&head)), "{head}");
    let (head, _) = post(address, None, &format!("[{INITIALIZE}]")).await;
    assert!((400..500).contains(&status(&head)), "{head}");

    // The session still serves, and none of the refused calls ran.
    let (_, mut stream) = post(address, Some(&session), &call(5, "quick")).await;
    assert_eq!(
        answer(&mut stream, 5).await["result"]["content"][0]["text"],
        "done"
    );
    assert_eq!(started.load(Ordering::SeqCst), 0);
    served.shutdown();
}

#[tokio::test]
async fn sessions_past_the_cap_are_refused_until_one_ends() {
    let service = McpService::new(ToolSet::new()).max_http_sessions(2);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let served = service.serve_http(listener).unwrap();
    let address = served.local_addr();
    let first = open_session(address).await;
    open_session(address).await;

    // A third client's initialize is refused: sessions live until their client ends them
    // (or for minutes idle), so a client opening one after another would hold any number.
    let (head, _) = post(address, None, INITIALIZE).await;
    assert!(head.starts_with("HTTP/1.1 503"), "{head}");

    // Once a client ends its session, another may open.
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: {first}\r\n\
         MCP-Protocol-Version: 2025-06-18\r\nContent-Length: 0\r\n\r\n"
    );
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(delete.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 202", "{}", String::from_utf8_lossy(&head));
    open_session(address).await;
    served.shutdown();
}

/// A `tools/call` whose `arguments` are not an object, or without `params`, is answered with
/// an invalid-params error saying what MCP asks for: it was answered "method not found"
/// (`-32601`), as if the server served no tools.
#[tokio::test]
async fn a_call_whose_arguments_are_not_an_object_is_answered_invalid_params() {
    let service = McpService::new(tools(
        Arc::new(AtomicUsize::new(0)),
        Arc::new(Notify::new()),
        Arc::new(Notify::new()),
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let served = service.serve_http(listener).unwrap();
    let address = served.local_addr();
    let session = open_session(address).await;
    for (id, params) in [
        (1, r#","params":{"name":"quick","arguments":[1]}"#),
        (2, r#","params":{"name":"quick","arguments":"{}"}"#),
        (3, r#","params":{"arguments":{}}"#),
        (4, ""),
    ] {
        let request = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call"{params}}}"#);
        let (_, mut stream) = post(address, Some(&session), &request).await;
        let error = &answer(&mut stream, id).await["error"];
        assert_eq!(error["code"], -32602, "{request}: {error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("object `arguments`"),
            "{request}: {message}"
        );
    }
    // `arguments` left out are none: the call runs.
    let request = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"quick"}}"#;
    let (_, mut stream) = post(address, Some(&session), request).await;
    assert_eq!(
        answer(&mut stream, 5).await["result"]["content"][0]["text"],
        "done"
    );
    served.shutdown();
}
