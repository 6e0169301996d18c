//! `[hooks.approval]` rules with an MCP server, whose tools `reins check` cannot know:
//! `reins run` checks them against the server's tools after connecting, before the first
//! model call, so a misspelt `ask` rule never lets the tool through unasked (exit 2, as for
//! any mistake in the agent file; a server that cannot start is an error, exit 1). A waiting
//! call of an MCP tool whose arguments a person edits is checked against the server's schema.

use crate::common::fakellm::FakeLlm;
use crate::common::inbox::{Inbox, form_field};
use crate::common::{
    AgentDir, TIME_RULES, TIME_SERVER_TOOLS, approve_with_args, asking_time_agent, events,
    model_table, outcome,
};

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
    assert_eq!(code, 2, "a mistake in the agent file\n{stdout}\n{stderr}");
    assert!(
        stderr.contains("agent.toml:16:")
            && stderr.contains("the approval rule for `get_current_time` matches no tool")
            && stderr.contains("its tools are `time_get_current_time`"),
        "{stderr}"
    );
    assert!(!stderr.to_lowercase().contains("connect"), "{stderr}");
}

#[test]
fn an_mcp_server_that_cannot_start_fails_the_run_as_an_error_not_as_an_invalid_file() {
    let agent = AgentDir::new(&format!(
        "{model}\n[[tools.mcp]]\nname = \"gone\"\ncommand = \"/nonexistent/mcp-server\"\n",
        model = model_table("http://127.0.0.1:9/v1"),
    ));
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "What time is it?"]));
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("MCP server `gone`") && stderr.contains("/nonexistent/mcp-server"),
        "{stderr}"
    );
}

#[test]
fn edited_arguments_of_a_waiting_mcp_call_are_checked_against_the_server_s_schema() {
    let server = FakeLlm::start(TIME_RULES);
    let agent = asking_time_agent(&server.openai_url());
    let (code, stdout, stderr) =
        outcome(agent.keyed(&["run", "AGENT", "What time is it?", "--json"]));
    assert_eq!(code, 3, "the call waits for a person\n{stdout}\n{stderr}");
    let suspended = events(&stdout).pop().expect("events");
    assert_eq!(suspended["pending"][0]["tool"], "time_get_current_time");
    let run = suspended["run"].as_str().expect("run id").to_owned();

    // `get_current_time` requires `timezone`: a misspelt key is refused before the run
    // resumes, from the command line and from the inbox, and the call still waits.
    let (code, _, stderr) = approve_with_args(&agent, &run, r#"{"tz": "Asia/Tokyo"}"#);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("the arguments do not fit the schema of `time_get_current_time`")
            && stderr.contains("\"timezone\" is a required property"),
        "{stderr}"
    );
    let inbox = Inbox::start(&agent, &[]);
    let page = inbox.run_page(&run);
    let refused = inbox
        .http()
        .post(format!(
            "{}/runs/{run}/calls/{}/approve",
            inbox.url,
            pending_call(&suspended)
        ))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!(
            "csrf={}&binding={}&args=%7B%22tz%22%3A%22Asia%2FTokyo%22%7D",
            form_field(&page, "csrf"),
            form_field(&page, "binding")
        ))
        .send()
        .expect("post");
    assert_eq!(refused.status(), 400);
    let why = refused.text().unwrap_or_default();
    assert!(why.contains("do not fit the schema of"), "{why}");
    drop(inbox);

    let (code, _, stderr) = approve_with_args(&agent, &run, r#"{"timezone": "Asia/Tokyo"}"#);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "The time server answered.", "{stderr}");
}

fn pending_call(suspended: &serde_json::Value) -> String {
    suspended["pending"][0]["call"]
        .as_str()
        .expect("call id")
        .to_owned()
}
