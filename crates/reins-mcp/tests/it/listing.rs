//! A tool list whose cursors go round (`recording_server.py` with `LIST=same-cursor`) fails
//! as soon as a cursor comes back, saying so, rather than after a hundred requests.

use crate::cancellation::received;
use crate::hostile_handshake::scratch_file;
use crate::servers::connect;
use crate::traced_secrets::recording_server;
use reins_mcp::McpError;

#[tokio::test]
async fn a_tool_list_naming_a_cursor_again_fails_at_once() {
    let record = scratch_file("same-cursor");
    let server = recording_server(&[
        ("RECORD_FILE", record.to_str().unwrap()),
        ("LIST", "same-cursor"),
    ]);
    let client = connect(server).await;
    let error = client.tools().await.unwrap_err();
    assert!(matches!(error, McpError::Protocol { .. }), "{error:?}");
    let text = error.to_string();
    assert!(text.contains("MCP server `recording`"), "{text}");
    assert!(text.contains("the tool list goes round"), "{text}");
    // The first page, then the one its cursor names, which names that cursor again.
    let listed = received(&record)
        .iter()
        .filter(|message| message["method"] == "tools/list")
        .count();
    assert_eq!(listed, 2);
    let _ = std::fs::remove_file(&record);
}
