//! What a hostile server (`fixtures/hostile_server.py`) can make the client hold: every
//! message is weighed before it is parsed, and what the server leaves running is ended.

use crate::hostile::hostile_server;
use crate::servers::connect;
use reins_mcp::McpError;
use serde_json::json;
use std::time::Duration;

/// Long enough for a slow machine, short of waiting for ever if a bound fails.
pub(crate) const HANG_GUARD: Duration = Duration::from_secs(60);

/// A server's last answer, written without the newline that ends a line before it exits, is
/// an answer all the same.
#[tokio::test]
async fn a_last_answer_without_its_newline_is_read() {
    let client = connect(hostile_server("no-newline-then-exit").call_timeout(HANG_GUARD)).await;
    let answer = client
        .call_tool("echo", json!({"text": "x"}), None)
        .await
        .unwrap();
    assert_eq!(answer.text(), "last words");
}

#[tokio::test]
async fn an_answer_too_heavy_or_too_long_to_parse_fails_its_call_at_once() {
    let client = connect(hostile_server("oversized").call_timeout(HANG_GUARD)).await;
    refuses_answers_too_heavy_or_too_long(&client).await;
}

/// The calls of the `oversized` server, whose answer to `heavy` is 1 MiB of `{"a":0}` (over
/// 100 MiB once parsed) and to `long` over 16 MiB: each is refused unread and its call fails
/// at once saying why (not at its timeout, which a client of [`HANG_GUARD`] is given); the
/// connection is as it was.
pub(crate) async fn refuses_answers_too_heavy_or_too_long(client: &reins_mcp::McpClient) {
    let error = client
        .call_tool("echo", json!({"text": "heavy"}), None)
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Protocol { .. }), "{error:?}");
    let text = error.to_string();
    assert!(
        text.contains("MCP server `hostile`: `tools/call echo`"),
        "{text}"
    );
    assert!(
        text.contains("more than 32 MiB of memory once parsed"),
        "{text}"
    );

    let error = client
        .call_tool("echo", json!({"text": "long"}), None)
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Protocol { .. }), "{error:?}");
    let text = error.to_string();
    assert!(text.contains("was not read"), "{text}");
    assert!(text.contains("over the 16 MiB"), "{text}");

    let fine = client
        .call_tool("echo", json!({"text": "fine"}), None)
        .await
        .unwrap();
    assert_eq!(fine.text(), "fine");
}

/// `sh -c 'python3 hostile_server.py linger; ...'`: the server is the wrapper's child, and
/// keeps running once its input is closed. Its tool answers its process id.
fn wrapped_lingering_server() -> reins_mcp::McpServer {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/it/fixtures/hostile_server.py"
    );
    reins_mcp::McpServer::stdio(
        "sh",
        [
            "-c",
            "\"$0\" \"$1\" linger; echo wrapper-done >&2",
            &crate::servers::python(),
            script,
        ],
    )
    .name("wrapped")
}

/// Whether process `pid` is running (a zombie waiting to be reaped is not).
#[cfg(target_os = "linux")]
fn is_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

#[cfg(target_os = "linux")]
async fn server_pid(client: &reins_mcp::McpClient) -> u32 {
    let answer = client
        .call_tool("echo", json!({}), None)
        .await
        .unwrap()
        .text();
    answer.parse().unwrap()
}

/// Waits for process `pid` to end; fails the test if it is still running after the guard.
#[cfg(target_os = "linux")]
pub async fn ends(pid: u32) {
    let ended = async {
        while is_running(pid) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    if tokio::time::timeout(HANG_GUARD, ended).await.is_err() {
        panic!("the server (process {pid}) is still running");
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_server_started_through_a_wrapper_ends_with_the_client() {
    // Closed…
    let client = connect(wrapped_lingering_server()).await;
    let server = server_pid(&client).await;
    assert_ne!(
        client.process_id(),
        Some(server),
        "the server is the wrapper's child"
    );
    client.close();
    ends(server).await;

    // …dropped…
    let client = connect(wrapped_lingering_server()).await;
    let server = server_pid(&client).await;
    drop(client);
    ends(server).await;

    // …or failing to connect: it never answers the handshake.
    let pid_file = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("reins-mcp-linger-{}", std::process::id()));
    let failed = wrapped_lingering_server()
        .env("HOSTILE_SILENT_INIT", "1")
        .env("HOSTILE_PID_FILE", &pid_file)
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await;
    assert!(
        matches!(failed, Err(McpError::Timeout { .. })),
        "{failed:?}"
    );
    let server = std::fs::read_to_string(&pid_file).unwrap();
    let _ = std::fs::remove_file(&pid_file);
    ends(server.parse().unwrap()).await;
}

/// A client dropped as its runtime ends (the end of `main`) ends the server too: no task is
/// left to run then, so the server is asked to end as the client is dropped.
#[cfg(target_os = "linux")]
#[test]
fn a_server_started_through_a_wrapper_ends_with_a_client_dropped_at_the_runtime_s_end() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(async {
        let client = connect(wrapped_lingering_server()).await;
        let server = server_pid(&client).await;
        drop(client);
        server
    });
    drop(runtime);
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(ends(server));
}

#[tokio::test]
async fn a_server_that_sends_requests_without_reading_the_answers_is_answered_a_bounded_number() {
    let client = connect(hostile_server("ping-flood").call_timeout(HANG_GUARD)).await;
    // The server sends 50,000 pings without reading its input, then announces a tool change.
    let flood_over = async {
        while !client.tools_changed() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(HANG_GUARD, flood_over)
        .await
        .expect("the server's announcement after its pings");
    // Then it reads its input until nothing more comes: the answers that fit in the pipe,
    // and the answers waiting in the client's memory, 64 at most (the other pings were
    // dropped); not 50,000.
    let answered: usize = client
        .call_tool("echo", json!({}), None)
        .await
        .unwrap()
        .text()
        .parse()
        .unwrap();
    assert!(answered < 10_000, "{answered} pings answered");
    // And the connection still works.
    assert!(!client.is_closed());
}

/// What a 9 MB error message starting with terminal control sequences becomes in an error.
fn shows_a_bounded_printable_message(error: &McpError) {
    let text = error.to_string();
    assert!(text.len() < 300 * 1024, "{} bytes of error", text.len());
    assert!(
        text.contains(r"\u001b[2J\u001b]0;owned\u0007IGNORE"),
        "{}",
        &text[..200]
    );
    assert!(!text.contains('\u{1b}'));
    assert!(
        text.ends_with("the first 262144 are shown]"),
        "{}",
        &text[text.len() - 100..]
    );
}

#[tokio::test]
async fn a_server_s_huge_error_message_is_cut_and_shown_as_text() {
    let client = connect(hostile_server("huge-error")).await;
    let error = client.call_tool("echo", json!({}), None).await.unwrap_err();
    assert!(matches!(error, McpError::Protocol { .. }), "{error:?}");
    shows_a_bounded_printable_message(&error);

    let error = hostile_server("huge-init-error")
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Handshake { .. }), "{error:?}");
    shows_a_bounded_printable_message(&error);
}

#[tokio::test]
async fn the_first_tools_within_the_limits_are_kept() {
    let listed = |server: reins_mcp::McpServer| async move {
        let tools = connect(server).await.tools().await.unwrap();
        tools.names().map(str::to_owned).collect::<Vec<_>>()
    };
    // The server lists 600 tools over three pages: 256 are kept by default.
    let names = listed(hostile_server("many-tools")).await;
    assert_eq!(names.len(), 256);
    assert_eq!((names[0].as_str(), names[255].as_str()), ("t0", "t255"));
    assert_eq!(
        listed(hostile_server("many-tools").max_tools(1000))
            .await
            .len(),
        600
    );
    // `t0` and its schema `{"type":"object"}` take 19 bytes: five of them fit in 100.
    let names = listed(hostile_server("many-tools").max_tool_list_bytes(100)).await;
    assert_eq!(names, ["t0", "t1", "t2", "t3", "t4"]);

    // A list whose pages never end is read no further than the limit needs.
    let names = listed(hostile_server("endless-pages").max_tools(5)).await;
    assert_eq!(names, ["echo_0", "echo_1", "echo_2", "echo_3", "echo_4"]);
}

/// A listing is the server's list now: what it asked the client to keep (`ttlMs`) is not
/// kept, so its memory is not the client's to hold and a new list is seen at once.
#[tokio::test]
async fn every_listing_asks_the_server() {
    let client = connect(hostile_server("cached-list")).await;
    for expected in ["listed_1", "listed_2"] {
        let tools = client.tools().await.unwrap();
        assert_eq!(tools.names().collect::<Vec<_>>(), [expected]);
    }
}
