//! A server's answer to `initialize`, read as a stranger's (`fixtures/hostile_server.py`, its
//! answer's fields replaced by `HOSTILE_INIT_RESULT`): a revision of MCP reins does not speak
//! ends the connection with an error naming it and the revisions reins speaks; an answer
//! missing what MCP requires says which field; what the server calls itself is shown bounded
//! and printable.

use crate::hostile::hostile_server;
use crate::servers::connect;
use reins_mcp::{McpError, McpServer, SUPPORTED_PROTOCOL_VERSIONS};
use serde_json::{Value, json};

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
        let pid_file = std::env::temp_dir().join(format!(
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
        (
            json!({"capabilities": null}),
            "has no `capabilities`, which MCP requires",
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
