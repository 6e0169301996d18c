//! A server answering `initialize` as a JSON-RPC batch (`fixtures/hostile_server.py` with
//! `HOSTILE_INIT_BATCH`): MCP 2025-03-26, a revision reins speaks, allowed a batch, and
//! servers written for it still send one. Its messages are read one by one, over stdio and
//! over HTTP (a JSON body or an event), whether the batch holds the answer alone or among
//! other messages (a notification before it; an empty batch, a nested batch and a number,
//! none of them a message, after it); the answer's revision is still checked, and one reins
//! does not speak is never confirmed with `notifications/initialized`.

use crate::hostile::hostile_server;
use crate::hostile_handshake::{answering, recorded, refusal, refused, scratch_file};
use crate::hostile_http::HostileHttp;
use crate::servers::connect;
use reins_mcp::McpServer;
use serde_json::json;
use std::path::Path;
use std::time::Duration;

/// The batches a server sends in these tests (`HOSTILE_INIT_BATCH`).
const BATCHES: [&str; 2] = ["alone", "among"];

/// Bounds a handshake whose answer is never read (the connect timeout is 30 s).
const HANDSHAKE_GUARD: Duration = Duration::from_secs(10);

/// The HTTP flags of the fixture: answers as a JSON body, or as events.
const HTTP_ANSWERS: [&[&str]; 2] = [&[], &["--sse"]];

/// Connects to `server`, lists its tools and calls `echo`, then checks that the server was
/// told `notifications/initialized` once, after its answer, and asked for the rest (`methods`,
/// its `HOSTILE_METHODS_FILE`).
async fn is_used(server: McpServer, methods: &Path, case: &str) {
    let client = connect(server.connect_timeout(HANDSHAKE_GUARD)).await;
    let tools = client.tools().await.unwrap();
    assert_eq!(tools.names().collect::<Vec<_>>(), ["echo"], "{case}");
    let said = client
        .call_tool("echo", json!({"text": "hi"}), None)
        .await
        .unwrap();
    assert_eq!(said.text(), "hi", "{case}");
    assert_eq!(
        client.server_version(),
        Some(("hostile".to_owned(), "0".to_owned())),
        "{case}"
    );
    client.close();
    assert_eq!(
        recorded(methods),
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call"
        ],
        "{case}"
    );
}

#[tokio::test]
async fn an_answer_to_initialize_in_a_batch_is_read_over_stdio() {
    for batch in BATCHES {
        let methods = scratch_file(&format!("batch-stdio-{batch}"));
        let server = hostile_server("polite")
            .env("HOSTILE_INIT_BATCH", batch)
            .env("HOSTILE_METHODS_FILE", &methods);
        is_used(server, &methods, batch).await;
    }
}

#[tokio::test]
async fn an_answer_to_initialize_in_a_batch_is_read_over_http() {
    for batch in BATCHES {
        for flags in HTTP_ANSWERS {
            let case = format!("{batch} {flags:?}");
            let methods = scratch_file(&format!("batch-http-{batch}-{}", flags.len()));
            let methods_env = methods.to_string_lossy().into_owned();
            let server = HostileHttp::start_with_env(
                "polite",
                flags,
                &[
                    ("HOSTILE_INIT_BATCH", batch),
                    ("HOSTILE_METHODS_FILE", &methods_env),
                ],
            );
            is_used(server.server(), &methods, &case).await;
        }
    }
}

/// A revision reins does not speak, answered in a batch, is refused as one answered alone:
/// with the error naming it, and never confirmed.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_revision_refused_in_a_batch_is_never_confirmed() {
    use crate::hostile_bounds::ends;
    let offered = json!({"protocolVersion": "2099-01-01"});
    for batch in BATCHES {
        let (methods, pid) = (
            scratch_file(&format!("batch-refused-{batch}")),
            scratch_file(&format!("batch-refused-{batch}-pid")),
        );
        let server = answering("polite", offered.clone())
            .env("HOSTILE_INIT_BATCH", batch)
            .env("HOSTILE_METHODS_FILE", &methods)
            .env("HOSTILE_PID_FILE", &pid)
            .connect_timeout(HANDSHAKE_GUARD);
        assert_eq!(refused(server).await, refusal("2099-01-01"), "{batch}");
        // The server reads its input to its end: all the client wrote is recorded.
        ends(std::fs::read_to_string(&pid).unwrap().parse().unwrap()).await;
        assert_eq!(recorded(&methods), ["initialize"], "{batch}");

        for flags in HTTP_ANSWERS {
            let case = format!("{batch} {flags:?}");
            let methods = scratch_file(&format!("batch-refused-http-{batch}-{}", flags.len()));
            let methods_env = methods.to_string_lossy().into_owned();
            let server = HostileHttp::start_with_env(
                "polite",
                flags,
                &[
                    ("HOSTILE_INIT_BATCH", batch),
                    ("HOSTILE_INIT_RESULT", &offered.to_string()),
                    ("HOSTILE_METHODS_FILE", &methods_env),
                ],
            );
            let error = refused(server.server().connect_timeout(HANDSHAKE_GUARD)).await;
            assert_eq!(error, refusal("2099-01-01"), "{case}");
            assert_eq!(recorded(&methods), ["initialize"], "{case}");
        }
    }
}

/// An answer to `initialize` in a batch too heavy or too long to read, over stdio: the line
/// names no id that can be read (a batch's is inside it), yet only `initialize` waits for an
/// answer, so the handshake fails at once saying why, rather than at the connect timeout as
/// if the server had said nothing.
#[tokio::test]
async fn an_answer_to_initialize_in_a_batch_too_heavy_or_too_long_fails_the_handshake_at_once() {
    for (batch, why) in [
        ("heavy", "once parsed"),
        ("long", "over the 16 MiB a message may take"),
    ] {
        let server = hostile_server("polite")
            .env("HOSTILE_INIT_BATCH", batch)
            .connect_timeout(HANDSHAKE_GUARD);
        let error = refused(server).await;
        assert!(error.contains(why), "{batch}: {error}");
    }
}
