//! `[hooks.tool_choice]` with an MCP server, whose tools `reins check` cannot know: `reins run`
//! checks the routed tools after connecting, before the first model call.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, TIME_RULES, TIME_SERVER_TOOLS, model_table, outcome};

/// An agent on `llm` whose route sends prompts about the time to `routed`.
fn agent(llm: &str, routed: &str) -> AgentDir {
    AgentDir::new(&format!(
        r#"{model}
{time_server}
[hooks.tool_choice]
later_turns = "none"

[[hooks.tool_choice.routes]]
prompt_mentions = ["time"]
first_turn = "{routed}"
"#,
        model = model_table(llm),
        time_server = TIME_SERVER_TOOLS,
    ))
}

#[test]
fn a_route_to_a_tool_the_mcp_server_lacks_fails_the_run_before_any_model_call() {
    // Nothing listens on the model's port: a model call would fail with a connection error.
    let agent = agent("http://127.0.0.1:9/v1", "get_time");
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "What time is it?"]));
    assert_eq!(code, 2, "a mistake in the agent file\n{stdout}\n{stderr}");
    assert!(
        stderr.contains("agent.toml:19:")
            && stderr.contains("route 1 (prompt mentions \"time\") names the tool `get_time`")
            && stderr.contains("its tools are `time_get_current_time`"),
        "{stderr}"
    );
    assert!(!stderr.to_lowercase().contains("connect"), "{stderr}");
}

#[test]
fn a_route_to_a_tool_of_the_mcp_server_runs() {
    let llm = FakeLlm::start(TIME_RULES);
    let agent = agent(&llm.openai_url(), "time_get_current_time");
    let (code, stdout, stderr) =
        outcome(agent.keyed(&["run", "AGENT", "What time is it in Paris?"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "The time server answered.");
}
