//! A tool's call whose arguments do not fit its schema (a shell tool's `schema`, an MCP
//! server's input schema) is refused before an approval rule asks about it: nobody is asked
//! to approve a call that would then be refused. The model is told why, as when the tool
//! refuses the arguments itself, and can call again.

use crate::common::fakellm::FakeLlm;
use crate::common::{
    AgentDir, SAVE_NOTE_TOOL, asking_time_agent, events, model_table, outcome, tool_results,
};
use reins_test_servers::Tmux;

/// fakellm rules: asked for a note, the model calls `save_note` with a misspelt argument
/// (`txt`); told that it does not fit, it calls again with `text`; a saved note ends the run.
const RULES: &str = r#"version: 1
rules:
  - name: answer
    when:
      tool_result_contains: "note: draft"
    respond:
      content: "Done: the note is saved."
  - name: retry
    when:
      tool_result_contains: "do not fit"
    respond:
      tool_calls:
        - name: save_note
          arguments: {text: "draft"}
  - name: misspelt
    when:
      messages_contain: "note"
    respond:
      tool_calls:
        - name: save_note
          arguments: {txt: "draft"}
"#;

/// The notes agent on `server`, its `save_note` calls asking a person.
fn asking_agent(server: &FakeLlm) -> AgentDir {
    AgentDir::new(&format!(
        "{}\n{SAVE_NOTE_TOOL}\n[hooks.approval]\n\
         rules = [{{ tool = \"save_note\", action = \"ask\" }}]\n",
        model_table(&server.openai_url())
    ))
}

#[test]
fn a_call_out_of_its_schema_is_refused_before_it_waits_for_a_person() {
    let server = FakeLlm::start(RULES);
    let agent = asking_agent(&server);
    // No terminal: a call an `ask` rule matches waits in the store for a decision.
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "Save a note.", "--json"]));
    assert_eq!(code, 3, "{stdout}\n{stderr}");
    let events = events(&stdout);
    let refused = tool_results(&events);
    assert_eq!(refused.len(), 1, "{stdout}");
    let told = refused[0]["result"].as_str().unwrap_or_default();
    assert!(
        told.contains("the arguments do not fit the schema of `save_note`")
            && told.contains("\"text\" is a required property")
            && told.contains("the tool did not run"),
        "{told}"
    );
    assert_eq!(refused[0]["outcome"]["status"], "denied", "{stdout}");
    assert_eq!(refused[0]["outcome"]["report"].as_str(), Some(told));
    // What waits is the call that fits, the one a person can approve.
    let suspended = events.last().expect("events");
    assert_eq!(suspended["event"], "suspended", "{stdout}");
    let pending = suspended["pending"].as_array().expect("the waiting calls");
    assert_eq!(pending.len(), 1, "{stdout}");
    assert_eq!(pending[0]["args"], serde_json::json!({"text": "draft"}));
    assert!(!stderr.contains("\"txt\""), "{stderr}");
}

#[test]
fn the_terminal_asks_only_about_the_call_that_fits_its_schema() {
    let server = FakeLlm::start(RULES);
    let agent = asking_agent(&server);
    let tmux = Tmux::start(&format!(
        "cd '{dir}' && env REINS_TEST_KEY=k '{reins}' run '{file}' 'Save a note.'; \
         echo EXIT=$?; sleep 600",
        dir = agent.dir.path().display(),
        reins = env!("CARGO_BIN_EXE_reins"),
        file = agent.file.display(),
    ));
    let screen = tmux.wait_for("(a)pprove, (d)eny, (e)dit arguments?");
    assert!(screen.contains("\"text\": \"draft\""), "{screen}");
    assert!(
        !screen.contains("\"txt\""),
        "asked about the call that does not fit\n{screen}"
    );
    tmux.type_line("a");
    let screen = tmux.wait_for("EXIT=");
    assert_eq!(
        screen
            .matches("(a)pprove, (d)eny, (e)dit arguments?")
            .count(),
        1,
        "{screen}"
    );
    assert!(screen.contains("Done: the note is saved."), "{screen}");
    assert!(screen.contains("EXIT=0"), "{screen}");
}

/// fakellm rules: asked the time, the model calls the time server's `get_current_time` with
/// a misspelt argument (`tz`, where `timezone` is required); told that it does not fit, it
/// gives up.
const MCP_RULES: &str = r#"version: 1
rules:
  - name: give_up
    when:
      tool_result_contains: "do not fit"
    respond:
      content: "I could not ask for the time."
  - name: misspelt
    when:
      messages_contain: "time"
    respond:
      tool_calls:
        - name: time_get_current_time
          arguments: {tz: "Asia/Tokyo"}
"#;

#[test]
fn an_mcp_tools_call_out_of_its_servers_schema_is_refused_before_it_waits_for_a_person() {
    let server = FakeLlm::start(MCP_RULES);
    let agent = asking_time_agent(&server.openai_url());
    // No terminal: a call the `ask` rule matched would wait in the store (exit 3).
    let (code, stdout, stderr) =
        outcome(agent.keyed(&["run", "AGENT", "What time is it?", "--json"]));
    assert_eq!(code, 0, "nobody was asked\n{stdout}\n{stderr}");
    let events = events(&stdout);
    let refused = tool_results(&events);
    assert_eq!(refused.len(), 1, "{stdout}");
    assert_eq!(refused[0]["outcome"]["status"], "denied", "{stdout}");
    let told = refused[0]["result"].as_str().unwrap_or_default();
    assert!(
        told.contains("the arguments do not fit the schema of `time_get_current_time`")
            && told.contains("\"timezone\" is a required property")
            && told.contains("the tool did not run"),
        "{told}"
    );
    assert!(
        !events.iter().any(|event| event["event"] == "suspended"),
        "{stdout}"
    );
    assert_eq!(events.last().expect("events")["event"], "done", "{stdout}");
}
