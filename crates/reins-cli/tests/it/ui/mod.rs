//! `reins ui`, the web inbox, in one module per concern: the flow in headless Chromium
//! ([`browser`]), the guards against plain HTTP requests ([`guards`]), what bounds the pages
//! ([`bounds`]), decisions and the runs an inbox serves ([`decisions`]), the answers to a
//! call in doubt ([`in_doubt`]), the runs list ([`list`]), the token a default inbox makes
//! ([`token`]), what another program on the machine or a site can do ([`same_machine`]), and
//! an inbox started without the model's key ([`without_key`]). Below: the agent and the
//! suspended run they share.

mod bounds;
mod browser;
mod decisions;
mod guards;
mod in_doubt;
mod list;
mod same_machine;
mod sessions;
mod token;
mod without_key;

use crate::common::fakellm::FakeLlm;
use crate::common::inbox::{Inbox, http};
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

/// `runs show --json` of `run` once it completed: the inbox resumes a run in its own process,
/// after the decision's answer.
pub fn finished(agent: &AgentDir, run: &str) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", run, "--json"]));
        let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
        if shown["status"] == "completed" {
            return shown;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the run never finished: {stdout}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Opens `run`'s page in an inbox started with `--token token`, as a browser does: the token
/// given once in the address, then its cookie. The cookie (`name=value`) and the page.
pub fn opened_with_token(inbox: &Inbox, run: &str, token: &str) -> (String, String) {
    let opened = http()
        .get(format!("{}/runs/{run}?token={token}", inbox.url))
        .send()
        .expect("get");
    let cookie = opened
        .headers()
        .get("set-cookie")
        .and_then(|c| c.to_str().ok())
        .and_then(|c| c.split(';').next())
        .expect("a cookie")
        .to_owned();
    let page = http()
        .get(format!("{}/runs/{run}", inbox.url))
        .header("Cookie", &cookie)
        .send()
        .and_then(|r| r.text())
        .expect("page");
    (cookie, page)
}
