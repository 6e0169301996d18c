//! A model that calls a tool the agent does not have, on `reins run` against fakellm: a
//! misnamed call runs the tool it means, any other is answered with the agent's tools and the
//! model asked again (`[limits] max_invalid_tool_call_retries`, 2 by default; 0 fails the run
//! as it did before the setting).

use crate::common::fakellm::FakeLlm;
use crate::common::{check_file, events, model_table, notes_agent, outcome, tool_results};

/// The feedback naming the agent's one tool, as fakellm matches it (lowercased).
const TOOL_LIST: &str = r#"call one of these by its exact name: "save_note""#;

/// The model calls `SaveNote`, and answers once a note is saved.
const MISNAMED_RULES: &str = r#"version: 1
rules:
  - name: answer
    when:
      tool_result_contains: "note:"
    respond:
      content: "Done: the note is saved."
  - name: misnamed
    when:
      messages_contain: "note"
    respond:
      tool_calls:
        - name: SaveNote
          arguments: {text: "draft"}
"#;

/// The model calls `nonsense` twice, each time after being told the tools (the second and
/// third requests must hold the list), then answers in text.
fn nonsense_rules() -> String {
    format!(
        r#"version: 1
rules:
  - name: gives-up
    when:
      turn: 3
      messages_contain: '{TOOL_LIST}'
    respond:
      content: "I have no such tool."
  - name: again
    when:
      turn: 2
      messages_contain: '{TOOL_LIST}'
    respond:
      tool_calls:
        - name: nonsense
          arguments: {{}}
  - name: first
    when:
      turn: 1
    respond:
      tool_calls:
        - name: nonsense
          arguments: {{}}
"#
    )
}

#[test]
fn a_misnamed_tool_call_runs_the_tool_it_means() {
    let server = FakeLlm::start(MISNAMED_RULES);
    let agent = notes_agent(&server.openai_url(), "");
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "--json"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let events = events(&stdout);
    // The call is announced as the model wrote it, and runs as the tool it means.
    let called: Vec<_> = events
        .iter()
        .filter(|event| event["event"] == "tool_call")
        .map(|event| event["tool"].as_str().unwrap())
        .collect();
    assert_eq!(called, ["SaveNote"], "{stdout}");
    let ran: Vec<_> = tool_results(&events)
        .iter()
        .map(|result| {
            (
                result["tool"].as_str().unwrap(),
                result["result"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(ran, [("save_note", "note: draft")], "{stdout}");
    assert_eq!(
        events.last().unwrap()["answer"],
        "Done: the note is saved.",
        "{stdout}"
    );
}

#[test]
fn an_unknown_tool_is_answered_with_the_tools_and_the_model_asked_again() {
    let server = FakeLlm::start(&nonsense_rules());
    let agent = notes_agent(&server.openai_url(), "");
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "--json"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let events = events(&stdout);
    let discarded = events
        .iter()
        .filter(|event| event["event"] == "turn_discarded")
        .count();
    assert_eq!(discarded, 2, "{stdout}");
    let done = events.last().unwrap();
    assert_eq!(
        (done["answer"].as_str(), done["turns"].as_u64()),
        (Some("I have no such tool."), Some(3)),
        "{stdout}"
    );
}

#[test]
fn past_its_retries_or_with_none_an_unknown_tool_fails_the_run() {
    let server = FakeLlm::start(&nonsense_rules());
    let agent = notes_agent(
        &server.openai_url(),
        "[limits]\nmax_invalid_tool_call_retries = 1\n",
    );
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT"]));
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(stderr.contains("nonsense"), "{stderr}");

    // With none, a misnamed call is not repaired either: the run fails as it always did.
    let server = FakeLlm::start(MISNAMED_RULES);
    let agent = notes_agent(
        &server.openai_url(),
        "[limits]\nmax_invalid_tool_call_retries = 0\n",
    );
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT"]));
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(stderr.contains("SaveNote"), "{stderr}");
}

#[test]
fn check_bounds_the_retries() {
    let file = |retries: &str| {
        format!(
            "{model}\n[limits]\nmax_invalid_tool_call_retries = {retries}\n",
            model = model_table("http://127.0.0.1:9/v1")
        )
    };
    let (code, stderr) = check_file(&file("11"));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("agent.toml:8:") && stderr.contains("must be at most 10"),
        "{stderr}"
    );
    for allowed in ["0", "10"] {
        let (code, stderr) = check_file(&file(allowed));
        assert_eq!(code, 0, "{allowed}: {stderr}");
    }
}
