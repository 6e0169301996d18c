//! An MCP server's tool named like a tool the agent already has: the server could stand in
//! for the agent's own tool, and its annotations would speak for it to the approval rules,
//! so the run refuses to start and says to give the server a prefix.

use crate::common::{AgentDir, TIME_SERVER_TOOLS, model_table, outcome};

#[test]
fn a_server_tool_named_like_a_shell_tool_fails_the_run_before_any_model_call() {
    // Nothing listens on the model's port: a model call would fail with a connection error.
    let agent = AgentDir::new(&format!(
        r#"{model}
[[tools.shell]]
name = "time_get_current_time"
description = "The application's own clock."
command = ["date"]
schema = {{ type = "object", properties = {{}} }}

{time_server}"#,
        model = model_table("http://127.0.0.1:9/v1"),
        time_server = TIME_SERVER_TOOLS,
    ));
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "What time is it?"]));
    assert_eq!(code, 2, "a mistake in the agent file\n{stdout}\n{stderr}");
    assert!(
        stderr.contains("MCP server `time` lists `time_get_current_time`")
            && stderr.contains("set `prefix`"),
        "{stderr}"
    );
    assert!(!stderr.to_lowercase().contains("connect"), "{stderr}");
}
