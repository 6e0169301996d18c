//! `[hooks.approval]` rules with an MCP server, whose tools `reins check` cannot know:
//! `reins run` checks them against the server's tools after connecting, before the first
//! model call, so a misspelt `ask` rule never lets the tool through unasked.

use crate::common::{AgentDir, TIME_SERVER_TOOLS, model_table, outcome};

#[test]
fn an_approval_rule_matching_no_tool_of_the_mcp_server_fails_the_run_before_any_model_call() {
    // Nothing listens on the model's port: a model call would fail with a connection error.
    let agent = AgentDir::new(&format!(
        r#"{model}
{time_server}
[hooks.approval]
rules = [
  {{ tool = "get_current_time", action = "ask" }},
  {{ tool = "*", action = "allow" }},
]
"#,
        model = model_table("http://127.0.0.1:9/v1"),
        time_server = TIME_SERVER_TOOLS,
    ));
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "What time is it?"]));
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("agent.toml:16:")
            && stderr.contains("the approval rule for `get_current_time` matches no tool")
            && stderr.contains("its tools are `time_get_current_time`"),
        "{stderr}"
    );
    assert!(!stderr.to_lowercase().contains("connect"), "{stderr}");
}
