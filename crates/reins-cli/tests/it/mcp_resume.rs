//! A call to an MCP server's tool that waits for a person survives its process: the run
//! suspends in one `reins` process (whose `mcp-server-time` ends with it), is approved from
//! a second, and a third resumes it — starting the server again — and the call reaches the
//! new server.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, TIME_RULES, TIME_SERVER_TOOLS, model_table, outcome};
use serde_json::Value;

#[test]
fn a_suspended_mcp_call_resumes_in_another_process_with_the_server_started_again() {
    let llm = FakeLlm::start(TIME_RULES);
    let agent = AgentDir::new(&format!(
        r#"{model}
{time_server}
[hooks.approval]
rules = [{{ tool = "time_*", action = "ask" }}]
"#,
        model = model_table(&llm.openai_url()),
        time_server = TIME_SERVER_TOOLS,
    ));

    let (code, stdout, stderr) =
        outcome(agent.keyed(&["run", "AGENT", "What time is it in Paris?", "--json"]));
    assert_eq!(code, 3, "the call waits for a person\n{stdout}\n{stderr}");
    let suspended: Value = stdout
        .lines()
        .last()
        .and_then(|line| serde_json::from_str(line).ok())
        .unwrap_or_else(|| panic!("no event: {stdout}"));
    assert_eq!(suspended["event"], "suspended", "{stdout}");
    assert_eq!(suspended["pending"][0]["tool"], "time_get_current_time");
    let run = suspended["run"].as_str().expect("a run id").to_owned();

    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");

    let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", &run]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "The time server answered.", "{stderr}");
    assert!(
        stderr.contains("[tool] time_get_current_time -> ") && stderr.contains("Europe/Paris"),
        "the new server process answered the approved call: {stderr}"
    );
}
