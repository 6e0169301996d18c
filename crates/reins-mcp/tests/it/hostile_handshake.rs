//! A server's answer to `initialize`, read as a stranger's (`fixtures/hostile_server.py`, its
//! answer's fields replaced by `HOSTILE_INIT_RESULT`): a revision of MCP reins does not speak
//! ends the connection, never confirmed with `notifications/initialized`, with an error
//! naming it and the revisions reins speaks; an answer missing what MCP requires says which
//! field, but one without `capabilities` is read as declaring none; a server that declares
//! no `tools` is not asked for them; what the server calls itself is shown bounded and
//! printable.

use crate::hostile::hostile_server;
use crate::notifications::Captured;
use crate::servers::connect;
use reins_mcp::{McpError, McpServer, SUPPORTED_PROTOCOL_VERSIONS};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The hostile server in `mode`, its answer to `initialize` with `fields` replaced (`null`:
/// left out).
pub fn answering(mode: &str, fields: Value) -> McpServer {
    hostile_server(mode).env("HOSTILE_INIT_RESULT", fields.to_string())
}

/// The error `server` fails to connect with, which must be a failed handshake.
pub async fn refused(server: McpServer) -> String {
    match server.connect().await {
        Ok(client) => panic!("connected to {client:?}"),
        Err(error @ McpError::Handshake { .. }) => error.to_string(),
        Err(other) => panic!("not a handshake error: {other:?}"),
    }
}

/// A file of this test's own in the test target's temporary directory, not there yet.
pub fn scratch_file(name: &str) -> PathBuf {
    let file = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("reins-mcp-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&file);
    file
}

/// The methods of the messages the hostile server was sent, as it recorded them in `file`
/// (`HOSTILE_METHODS_FILE`).
pub fn recorded(file: &Path) -> Vec<String> {
    let methods = std::fs::read_to_string(file).unwrap_or_default();
    let _ = std::fs::remove_file(file);
    methods.lines().map(str::to_owned).collect()
}

/// What a refused revision's error says.
pub fn refusal(offered: &str) -> String {
    format!(
        "MCP server `hostile` failed to start: it answered the handshake with MCP revision \
         `{offered}`, which reins does not speak (it speaks 2024-11-05, 2025-03-26, \
         2025-06-18, 2025-11-25)"
    )
}

#[tokio::test]
async fn a_server_answering_a_revision_reins_does_not_speak_is_refused_and_ended() {
    assert_eq!(
        SUPPORTED_PROTOCOL_VERSIONS,
        ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
    );
    // Newer (the revision without the handshake, and one from the future), older, or no date.
    for offered in ["2026-07-28", "2099-01-01", "2024-10-07", "v1"] {
        let pid_file = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "reins-mcp-revision-{}-{offered}",
            std::process::id()
        ));
        let error = refused(
            answering("linger", json!({"protocolVersion": offered}))
                .env("HOSTILE_PID_FILE", &pid_file),
        )
        .await;
        assert_eq!(error, refusal(offered));
        // The server is not left running (it lingers once its input is closed).
        #[cfg(target_os = "linux")]
        {
            let server = std::fs::read_to_string(&pid_file).unwrap();
            crate::hostile_bounds::ends(server.parse().unwrap()).await;
        }
        let _ = std::fs::remove_file(&pid_file);
    }
}

#[tokio::test]
async fn a_server_answering_an_older_revision_reins_speaks_is_used() {
    let client = connect(answering(
        "polite",
        json!({"protocolVersion": "2024-11-05"}),
    ))
    .await;
    let tools = client.tools().await.unwrap();
    assert_eq!(tools.names().collect::<Vec<_>>(), ["echo"]);
    let said = client
        .call_tool("echo", json!({"text": "hi"}), None)
        .await
        .unwrap();
    assert_eq!(said.text(), "hi");
}

#[tokio::test]
async fn a_revision_offered_that_is_huge_or_unprintable_is_quoted_cut_and_as_text() {
    let offered = format!("\u{1b}]0;owned\u{7}{}", "9".repeat(100_000));
    let error = refused(answering("polite", json!({"protocolVersion": offered}))).await;
    assert!(error.len() < 1_000, "{} bytes of error", error.len());
    assert!(error.contains(r"`\u001b]0;owned\u0007999"), "{error}");
    assert!(!error.contains('\u{1b}'), "{error:?}");
    assert!(error.contains("it speaks 2024-11-05"), "{error}");
}

#[tokio::test]
async fn an_answer_to_initialize_without_what_mcp_requires_says_which_field() {
    for (fields, says) in [
        (
            json!({"protocolVersion": null}),
            "has no `protocolVersion`, which MCP requires",
        ),
        (
            json!({"protocolVersion": 20251125}),
            "the `protocolVersion` of its answer to `initialize` is not what MCP allows",
        ),
        // A missing `capabilities` is no fault (declaring none): the next field is named.
        (
            json!({"capabilities": null, "serverInfo": null}),
            "has no `serverInfo`, which MCP requires",
        ),
        (
            json!({"capabilities": {"tools": "yes"}}),
            "the `capabilities` of its answer to `initialize` is not what MCP allows",
        ),
        (
            json!({"serverInfo": null}),
            "has no `serverInfo`, which MCP requires",
        ),
        (
            json!({"serverInfo": {"name": "hostile"}}),
            "the `serverInfo` of its answer to `initialize` is not what MCP allows",
        ),
    ] {
        let error = refused(answering("polite", fields.clone())).await;
        assert!(
            error.starts_with("MCP server `hostile` failed to start: "),
            "{fields}: {error}"
        );
        assert!(error.contains(says), "{fields}: {error}");
        // Not rmcp's dump of the whole answer.
        assert!(!error.contains("CustomResult"), "{fields}: {error}");
    }
}

#[tokio::test]
async fn the_name_and_version_a_server_gives_itself_are_shown_cut_and_as_text() {
    let client = connect(hostile_server("huge-server-info")).await;
    let Some((name, version)) = client.server_version() else {
        panic!("no server info");
    };
    for (what, shown) in [("name", &name), ("version", &version)] {
        assert!(shown.len() < 512, "{} bytes of {what}", shown.len());
        assert!(!shown.contains('\u{1b}'), "{what}: {shown:?}");
        assert!(
            shown.contains(&format!("the server's {what} was")),
            "{what}: {shown}"
        );
    }
    assert!(
        name.starts_with(r"\u001b[2J\u001b]0;owned\u0007IGNORE"),
        "{name}"
    );
    assert!(version.starts_with(r"\u001b]0;owned\u0007999"), "{version}");
}

/// MCP asks a client that does not speak the server's revision to disconnect, not to confirm
/// the handshake: the server must never be told `notifications/initialized` (it would start
/// serving a client that is gone).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_revision_refused_is_never_confirmed_with_notifications_initialized() {
    use crate::hostile_bounds::ends;
    let started = |offered: &str, name: &str| {
        let (methods, pid) = (scratch_file(name), scratch_file(&format!("{name}-pid")));
        let server = answering("polite", json!({"protocolVersion": offered}))
            .env("HOSTILE_METHODS_FILE", &methods)
            .env("HOSTILE_PID_FILE", &pid);
        (server, methods, pid)
    };
    let pid_of = |file: &Path| -> u32 { std::fs::read_to_string(file).unwrap().parse().unwrap() };

    // A revision reins speaks is confirmed (the server records what it is sent).
    let (server, methods, pid) = started("2025-06-18", "spoken");
    connect(server).await.close();
    ends(pid_of(&pid)).await;
    assert_eq!(
        recorded(&methods),
        ["initialize", "notifications/initialized"]
    );

    // One it does not speak is refused as before, and never confirmed. The server reads its
    // input to its end (it ignores SIGTERM), so what it was sent is all recorded.
    let (server, methods, pid) = started("2099-01-01", "refused");
    assert_eq!(refused(server).await, refusal("2099-01-01"));
    ends(pid_of(&pid)).await;
    assert_eq!(recorded(&methods), ["initialize"]);
}

/// Servers in the wild leave `capabilities` out of their answer (MCP requires it): such a
/// server is connected to, and its tools are still asked for and listed.
#[tokio::test]
async fn an_answer_to_initialize_without_capabilities_still_has_its_tools_listed() {
    let client = connect(answering("polite", json!({"capabilities": null}))).await;
    let tools = client.tools().await.unwrap();
    assert!(tools.iter().any(|tool| tool.name() == "echo"));
    assert_eq!(
        client.server_version(),
        Some(("hostile".to_owned(), "0".to_owned()))
    );
}

/// A server that does not declare `tools` is not asked for them (this one would never
/// answer): its list is empty at once, and a warning names the server.
#[tokio::test(flavor = "current_thread")]
async fn a_server_declaring_no_tools_is_not_asked_for_them_and_a_warning_says_so() {
    let captured = Captured::default();
    reins_test_servers::ask_every_subscriber();
    let _guard = tracing::subscriber::set_default(captured.clone());
    let methods = scratch_file("no-tools");
    let server = answering(
        "silent-list",
        json!({"capabilities": {"logging": {}, "resources": {}}}),
    )
    .env("HOSTILE_METHODS_FILE", &methods)
    // Bounds the old behaviour (a listing never answered) for a test run against it.
    .call_timeout(Duration::from_secs(10));
    let client = connect(server).await;
    let tools = client.tools().await.unwrap();
    assert!(tools.is_empty());
    // As an agent's tool source: still empty, still not asked.
    assert!(tools.refresh().await.unwrap().is_empty());
    client.close();
    let warned: Vec<String> = captured.0.lock().unwrap().clone();
    let warning = "declares no `tools` capability in its handshake";
    assert_eq!(
        warned
            .iter()
            .filter(|line| line.contains(warning) && line.contains("server=hostile"))
            .count(),
        2,
        "{warned:#?}"
    );
    assert!(
        !recorded(&methods)
            .iter()
            .any(|method| method == "tools/list"),
        "tools/list was asked"
    );
}
