//! An MCP server reached by `url` (streamable HTTP): `@modelcontextprotocol/server-everything`
//! started on loopback as crates/reins-mcp's tests start it, its credentials named by
//! environment variables whose values never show in the output.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, model_table, outcome};
use reins_test_servers::EverythingHttp;

const RULES: &str = r#"
version: 1
rules:
  - name: answer
    when:
      tool_result_contains: "Echo:"
    respond:
      content: "The server echoed it."
  - name: echo
    when:
      messages_contain: "echo"
    respond:
      tool_calls:
        - name: echo
          arguments: {message: "over http"}
"#;

#[test]
fn a_run_calls_a_tool_of_an_mcp_server_reached_by_url_without_showing_its_credentials() {
    let everything = EverythingHttp::start();
    let llm = FakeLlm::start(RULES);
    let agent = AgentDir::new(&format!(
        r#"{model}
[[tools.mcp]]
name = "everything"
url = "http://127.0.0.1:{port}/mcp"
include = ["echo"]
bearer_token_env = "REINS_TEST_MCP_TOKEN"
headers_from_env = {{ "X-Api-Key" = "REINS_TEST_MCP_KEY" }}
"#,
        model = model_table(&llm.openai_url()),
        port = everything.port,
    ));
    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["run", "AGENT", "Please echo something."])
            .env("REINS_TEST_MCP_TOKEN", "token-value-7f3a")
            .env("REINS_TEST_MCP_KEY", "key-value-91c2"),
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stderr.contains("Echo: over http"), "{stderr}");
    assert_eq!(stdout.trim(), "The server echoed it.");
    for secret in ["token-value-7f3a", "key-value-91c2"] {
        assert!(!stdout.contains(secret) && !stderr.contains(secret));
    }

    // A server that cannot be reached: the error names the server, not the credentials.
    drop(everything);
    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["run", "AGENT", "Please echo something."])
            .env("REINS_TEST_MCP_TOKEN", "token-value-7f3a")
            .env("REINS_TEST_MCP_KEY", "key-value-91c2"),
    );
    assert_eq!(code, 1, "{stderr}");
    for secret in ["token-value-7f3a", "key-value-91c2"] {
        assert!(
            !stdout.contains(secret) && !stderr.contains(secret),
            "{stderr}"
        );
    }
}
