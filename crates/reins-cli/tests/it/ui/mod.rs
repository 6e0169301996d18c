//! `reins ui`, the web inbox, in one module per concern: the flow in headless Chromium
//! ([`browser`]), the guards against plain HTTP requests ([`guards`]), what bounds the pages
//! ([`bounds`]), and decisions and the runs an inbox serves ([`decisions`]). Below: the agent and the suspended run they share.

mod bounds;
mod browser;
mod decisions;
mod guards;

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, notes_agent, outcome};
use serde_json::Value;

pub const RULES: &str = r#"
version: 1
rules:
  - name: answer
    when:
      tool_result_contains: "note:"
    respond:
      content: "Done: the note is saved."
  - name: save
    when:
      messages_contain: "note"
    respond:
      tool_calls:
        - name: save_note
          arguments: {text: "draft <img src=x onerror=alert(1)>"}
"#;

/// The notes agent whose `save_note` calls wait for a person, with a trace link.
pub fn agent(server: &FakeLlm) -> AgentDir {
    notes_agent(
        &server.openai_url(),
        r#"
[hooks.approval]
rules = [{ tool = "save_note", action = "ask" }]

[ui]
trace_link = "http://127.0.0.1:16686/trace?run={run}&x=<b>"
"#,
    )
}

/// Runs the agent until it suspends; the run's id.
pub fn suspended_run(agent: &AgentDir) -> String {
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "--json"]));
    assert_eq!(code, 3, "{stdout}\n{stderr}");
    let last: Value = serde_json::from_str(stdout.lines().last().expect("events")).expect("json");
    last["run"].as_str().expect("run id").to_owned()
}
