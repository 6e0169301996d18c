//! Servers that break the protocol's rules on purpose (`fixtures/hostile_server.py`): what
//! the client and the model see must stay clear, bounded and the same every time.

use crate::servers::python;
use reins_mcp::{McpError, McpServer};
use std::path::PathBuf;

/// `python3 tests/it/fixtures/hostile_server.py <mode>`, named `hostile`.
fn hostile_server(mode: &str) -> McpServer {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/hostile_server.py");
    McpServer::stdio(python(), [script.into_os_string(), mode.into()]).name("hostile")
}

#[tokio::test]
async fn a_stderr_line_without_end_is_cut_in_the_error() {
    let error = hostile_server("huge-stderr").connect().await.unwrap_err();
    assert!(matches!(error, McpError::Handshake { .. }), "{error:?}");
    let text = error.to_string();
    // The server wrote 8 MiB on one line; the error keeps its start and says what is missing.
    assert!(text.len() < 10_000, "{} bytes of error", text.len());
    assert!(text.contains("eeee"), "{text}");
    assert!(text.contains("more bytes of this line not shown"), "{text}");
}

#[tokio::test]
async fn stderr_that_is_not_utf8_does_not_hide_the_lines_after_it() {
    let error = hostile_server("binary-stderr").connect().await.unwrap_err();
    let text = error.to_string();
    assert!(text.contains("garbage"), "{text}");
    assert!(text.contains("the real reason"), "{text}");
}

#[tokio::test]
async fn a_tool_list_that_never_ends_is_a_protocol_error() {
    // Without the page bound the listing would run until the call timeout (60 s).
    let client = hostile_server("endless-pages").connect().await.unwrap();
    let error = client.tools().await.unwrap_err();
    assert!(matches!(error, McpError::Protocol { .. }), "{error:?}");
    let text = error.to_string();
    assert!(text.contains("MCP server `hostile`"), "{text}");
    assert!(text.contains("did not end after 100 pages"), "{text}");
}
