//! `reins run` and `reins runs` without a terminal, against the fakellm mock server: the
//! answer streams, a call that needs a person suspends the run (exit 3), decisions recorded
//! with `runs approve|deny` are applied by `runs resume`, and limits and failures have their
//! own exit codes.
//!
//! Over 500 lines because its tests share one agent file and one model script, and each
//! follows a run from its start through the decision commands to its end.

use crate::common::fakellm::FakeLlm;
use crate::common::{
    AgentDir, approve_with_args, events, notes_agent, outcome, save_note_rules, tool_results,
    waiting_save_note,
};
use serde_json::Value;

/// The save-note flow, with this file's own rules.
fn rules() -> String {
    save_note_rules("", "")
}

/// An agent on fakellm with one shell tool; `extra` is appended (hooks, limits).
fn agent_file(server: &FakeLlm, extra: &str) -> AgentDir {
    notes_agent(&server.openai_url(), extra)
}

/// Resumes the decided run: it finishes with the model's answer, and the tool ran with the
/// decided arguments (its output, `note`, is on stderr).
fn resume_and_expect_note(agent: &AgentDir, run: &str, note: &str) {
    let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", run]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.");
    assert!(stderr.contains(note), "the decided arguments ran\n{stderr}");
}

const ASK: &str = "[hooks.approval]\nrules = [{ tool = \"save_note\", action = \"ask\" }]\n";

#[test]
fn a_run_streams_its_answer_and_shows_the_tool_call() {
    let server = FakeLlm::start(&rules());
    let agent = agent_file(&server, "");
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "Save a note."]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.", "{stderr}");
    assert!(
        stderr.contains("[tool] save_note -> note: draft"),
        "{stderr}"
    );
    // fakellm reports no token counts: they are not shown as none used.
    assert!(
        stderr.contains(": 2 model call(s), no token counts from the provider"),
        "{stderr}"
    );
}

#[test]
fn json_mode_prints_one_event_per_line() {
    let server = FakeLlm::start(&rules());
    let agent = agent_file(&server, "");
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let events = events(&stdout);
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"started"));
    assert!(kinds.contains(&"tool_call"), "{stdout}");
    let result = tool_results(&events).into_iter().next().expect(&stdout);
    assert_eq!(result["result"], "note: draft");
    let done = events.last().expect("events");
    assert_eq!(done["event"], "done");
    assert_eq!(done["answer"], "Done: the note is saved.");
    assert_eq!(done["turns"], 2);
}

/// Runs until suspended; returns the run's id and its waiting call.
fn suspend(agent: &AgentDir) -> (String, Value) {
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "--json"]));
    waiting_save_note(code, &stdout, &stderr)
}

#[test]
fn without_a_terminal_a_call_suspends_and_is_approved_with_edited_arguments() {
    let server = FakeLlm::start(&rules());
    let agent = agent_file(&server, ASK);
    let (run, _) = suspend(&agent);

    let (code, stdout, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    assert_eq!(code, 0);
    let listed = events(&stdout);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["run"], run.as_str());
    assert_eq!(listed[0]["status"], "suspended");
    assert_eq!(listed[0]["agent"], "notes");
    assert_eq!(listed[0]["model"], "openai/gpt-5-mini");

    let (code, _, stderr) = approve_with_args(&agent, &run, r#"{"text": "edited"}"#);
    assert_eq!(code, 0, "{stderr}");
    // The command that goes on is named whole, ready to paste.
    assert!(
        stderr.contains("reins: approved; `reins runs resume ")
            && stderr.contains(&format!(" {run}` continues the run")),
        "{stderr}"
    );
    resume_and_expect_note(&agent, &run, "note: edited");

    let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
    assert_eq!(shown["status"], "completed");
    assert_eq!(shown["pending"], Value::Array(vec![]));
    assert!(
        shown["history"].to_string().contains("note: edited"),
        "{stdout}"
    );
}

#[test]
fn runs_edit_opens_the_arguments_in_the_editor_and_approves_what_was_saved() {
    let server = FakeLlm::start(&rules());
    let agent = agent_file(&server, ASK);
    let (run, _) = suspend(&agent);
    // An "editor" that rewrites the note, as a person would, and saves.
    let editor = agent.dir.path().join("edit.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/draft/from the editor/' \"$1\"\n",
    )
    .expect("write the editor");
    let made_executable = std::process::Command::new("chmod")
        .arg("+x")
        .arg(&editor)
        .status();
    assert!(made_executable.is_ok_and(|status| status.success()));

    let (code, _, stderr) = outcome(
        agent
            .reins(&["runs", "edit", "AGENT", &run, "--as", "ana"])
            .env("EDITOR", &editor),
    );
    assert_eq!(code, 0, "{stderr}");
    resume_and_expect_note(&agent, &run, "note: from the editor");
    let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    assert!(
        stdout.contains("ana"),
        "the decision names who decided\n{stdout}"
    );
}

#[test]
fn a_denied_call_tells_the_model_the_message() {
    let server = FakeLlm::start(&rules());
    let agent = agent_file(&server, ASK);
    let (run, call) = suspend(&agent);
    let call = call["call"].as_str().expect("call id");
    let (code, _, stderr) = outcome(agent.reins(&[
        "runs",
        "deny",
        "AGENT",
        &run,
        call,
        "--message",
        "not today",
    ]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(&format!(" {run}` continues the run")),
        "{stderr}"
    );
    let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "I did not save it.");
    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run]));
    assert!(shown.contains("not today"), "{shown}");
    assert!(
        !shown.contains("note: draft"),
        "the denied call did not run\n{shown}"
    );
}

#[test]
fn a_decision_for_a_call_that_does_not_wait_is_refused() {
    let server = FakeLlm::start(&rules());
    let agent = agent_file(&server, ASK);
    let (run, call) = suspend(&agent);
    let call = call["call"].as_str().expect("call id");
    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &run, "t9c9"]));
    assert_eq!(code, 1);
    // The calls that do wait are named, with their tools: the id to give instead.
    assert!(
        stderr.contains("has no call `t9c9` waiting")
            && stderr.contains(&format!("waiting: `{call}` (save_note)")),
        "{stderr}"
    );
    let (code, _, stderr) =
        outcome(agent.reins(&["runs", "approve", "AGENT", &run, "--args", "[1]"]));
    assert_eq!(code, 1);
    assert!(stderr.contains("must be a JSON object"), "{stderr}");

    // Once the run is over, no call waits: said so.
    let (code, _, stderr) = outcome(agent.reins(&["runs", "deny", "AGENT", &run, call]));
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = outcome(agent.reins(&["runs", "deny", "AGENT", &run, "t9c9"]));
    assert_eq!(code, 1);
    assert!(
        stderr.contains("has no call `t9c9` waiting") && stderr.contains("no call of it waits"),
        "{stderr}"
    );
}

#[test]
fn the_turn_limit_exits_4() {
    let server = FakeLlm::start(&rules());
    let agent = agent_file(&server, "[limits]\nmax_turns = 1\n");
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "--json"]));
    assert_eq!(code, 4, "{stdout}\n{stderr}");
    assert_eq!(events(&stdout).pop().expect("events")["event"], "max_turns");
}

#[test]
fn a_model_that_cannot_be_reached_exits_1() {
    let server = FakeLlm::start(&rules());
    let agent = agent_file(&server, "");
    drop(server);
    let (code, _, stderr) = outcome(agent.keyed(&["run", "AGENT", "Save a note."]));
    assert_eq!(code, 1, "{stderr}");
    // The run's error, not the warnings of its retries (`the model call failed (...);
    // trying again`).
    assert!(
        stderr.contains("reins: the model call failed: "),
        "{stderr}"
    );
    assert!(!stderr.contains("REINS_TEST_KEY=k"), "{stderr}");
}

#[test]
fn run_without_a_prompt_or_a_default_prompt_exits_2() {
    let server = FakeLlm::start(&rules());
    let agent = agent_file(&server, "");
    let text = std::fs::read_to_string(&agent.file).expect("read");
    std::fs::write(
        &agent.file,
        text.replace("default_prompt = \"Save a note.\"\n", ""),
    )
    .expect("write");
    let (code, _, stderr) = outcome(agent.keyed(&["run", "AGENT"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("give a prompt"), "{stderr}");
}

#[test]
fn runs_kept_in_postgresql_suspend_and_resume() {
    assert!(
        std::env::var_os("REINS_POSTGRES_URL").is_some(),
        "REINS_POSTGRES_URL is not set: run the tests under scripts/with-postgres.sh \
         (scripts/test.sh does)"
    );
    let server = FakeLlm::start(&rules());
    let agent = agent_file(
        &server,
        &format!("{ASK}\n[store]\npostgres_url_env = \"REINS_POSTGRES_URL\"\n"),
    );
    let (run, _) = suspend(&agent);
    assert!(
        !agent.dir.path().join(".reins").exists(),
        "no SQLite file when the store is PostgreSQL"
    );
    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.");
    let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
    assert_eq!(shown["status"], "completed");
}

#[test]
fn a_chat_keeps_the_conversation_in_the_store_and_resumes_it() {
    let server = FakeLlm::start(
        r#"
version: 1
rules:
  - name: second
    when:
      messages_contain: "and the second"
    respond:
      content: "Second answer."
  - name: first
    when:
      messages_contain: "first question"
    respond:
      content: "First answer."
"#,
    );
    let agent = agent_file(&server, "");
    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["chat", "AGENT"])
            .write_stdin("The first question.\n"),
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "First answer.");
    let (_, listed, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    let first = events(&listed).pop().expect("a run")["run"]
        .as_str()
        .expect("id")
        .to_owned();

    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["chat", "AGENT", "--resume", &first])
            .write_stdin("And the second?\n/quit\n"),
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Second answer.");
    let (_, listed, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    let runs = events(&listed);
    assert_eq!(runs.len(), 2);
    let second = runs
        .iter()
        .find(|r| r["run"] != first.as_str())
        .and_then(|r| r["run"].as_str())
        .expect("the second run")
        .to_owned();
    // One conversation, named after its first run: traces group the two runs by it.
    for run in &runs {
        assert_eq!(run["conversation"], first.as_str(), "{run}");
    }
    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", &second]));
    // The second run starts from the first one's history.
    let first_at = shown.find("The first question.").expect(&shown);
    let second_at = shown.find("And the second?").expect(&shown);
    assert!(first_at < second_at, "{shown}");
    assert!(shown.contains("First answer."), "{shown}");
}

/// A conversation does not go on from a run that has not finished: the run's waiting call
/// would be copied unanswered into the new run (which a model refuses), and the run itself
/// left waiting. The chat says how to finish it.
#[test]
fn a_chat_does_not_go_on_from_a_run_that_waits() {
    let server = FakeLlm::start(&rules());
    let agent = agent_file(&server, ASK);
    let (run, _) = suspend(&agent);
    let (code, _, stderr) = outcome(
        agent
            .keyed(&["chat", "AGENT", "--resume", &run])
            .write_stdin("And then?\n"),
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!("run `{run}` waits for a decision"))
            && stderr.contains("reins runs resume"),
        "{stderr}"
    );
    let (_, listed, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    assert_eq!(events(&listed).len(), 1, "no run started: {listed}");
}

#[test]
fn model_takes_a_gguf_only_for_a_local_agent_and_only_an_existing_file() {
    let server = FakeLlm::start(&rules());
    let agent = agent_file(&server, "");
    let (code, _, stderr) =
        outcome(agent.keyed(&["run", "AGENT", "Save a note.", "--model", "AGENT"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("provider = \"local\""), "{stderr}");

    let local = AgentDir::new("[model]\nprovider = \"local\"\n");
    let (code, _, stderr) =
        outcome(local.reins(&["run", "AGENT", "Hi.", "--model", "missing.gguf"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("missing.gguf: no such file"), "{stderr}");
    let (code, _, stderr) = outcome(local.reins(&["run", "AGENT", "Hi.", "--model", "."]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("is a directory: name the .gguf file"),
        "{stderr}"
    );
}

#[test]
fn a_finished_run_is_forked_at_its_suspended_checkpoint_with_other_arguments() {
    let server = FakeLlm::start(&rules());
    let agent = agent_file(&server, ASK);
    let (run, _) = suspend(&agent);
    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");

    let (code, stdout, stderr) =
        outcome(agent.reins(&["runs", "checkpoints", "AGENT", &run, "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let checkpoints = events(&stdout);
    assert_eq!(
        checkpoints.last().expect("checkpoints")["status"],
        "completed"
    );
    let suspended = checkpoints
        .iter()
        .find(|c| c["status"] == "suspended")
        .unwrap_or_else(|| panic!("a suspended checkpoint\n{stdout}"));
    let version = suspended["version"].to_string();

    // The latest checkpoint waits for nothing: there are no arguments to change.
    let (code, _, stderr) =
        outcome(agent.reins(&["runs", "fork", "AGENT", &run, "--args", r#"{"text": "x"}"#]));
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("no call waiting"), "{stderr}");

    let (code, stdout, stderr) = outcome(agent.reins(&[
        "runs",
        "fork",
        "AGENT",
        &run,
        "--at",
        &version,
        "--args",
        r#"{"text": "forked"}"#,
    ]));
    assert_eq!(code, 0, "{stderr}");
    let fork = stdout.trim().to_owned();
    assert_ne!(fork, run);

    let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", &fork, "--json"]));
    let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
    assert_eq!(shown["status"], "suspended", "{stdout}");
    assert_eq!(shown["pending"][0]["args"]["text"], "forked", "{stdout}");
    let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    let parent: Value = serde_json::from_str(stdout.trim()).expect("json");
    assert_eq!(parent["status"], "completed", "the parent is kept");

    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &fork]));
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", &fork]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.");
    assert!(stderr.contains("note: forked"), "{stderr}");
}

/// `[store] keep_checkpoints = 1`: the run's record keeps its newest checkpoint only, however
/// many times it was written, and the run still pauses, resumes and finishes.
#[test]
fn a_store_keeping_one_checkpoint_lists_one() {
    let server = FakeLlm::start(&rules());
    let agent = agent_file(&server, &format!("{ASK}[store]\nkeep_checkpoints = 1\n"));
    let (run, _) = suspend(&agent);
    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    resume_and_expect_note(&agent, &run, "note: draft");
    let (code, stdout, stderr) =
        outcome(agent.reins(&["runs", "checkpoints", "AGENT", &run, "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let checkpoints = events(&stdout);
    assert_eq!(checkpoints.len(), 1, "{stdout}");
    assert_eq!(checkpoints[0]["status"], "completed", "{stdout}");
}

/// Where neither `$USER` nor `$LOGNAME` is set (a container, a service), a decision is
/// recorded as made by the account the command runs as.
#[test]
fn a_decision_names_the_account_when_no_user_variable_does() {
    let server = FakeLlm::start(&rules());
    let agent = agent_file(&server, ASK);
    let (run, _) = suspend(&agent);
    let (code, _, stderr) = outcome(
        agent
            .reins(&["runs", "approve", "AGENT", &run])
            .env_remove("USER")
            .env_remove("LOGNAME"),
    );
    assert_eq!(code, 0, "{stderr}");
    let account = std::process::Command::new("id")
        .arg("-un")
        .output()
        .expect("id -un");
    let account = String::from_utf8_lossy(&account.stdout).trim().to_owned();
    let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
    assert_eq!(
        shown["decisions"][0]["decided_by"],
        format!("{account} via reins runs approve").as_str(),
        "{stdout}"
    );
}

#[test]
fn the_decision_trail_shows_who_decided_why_and_the_arguments_it_was_bound_to() {
    let server = FakeLlm::start(&rules());
    let agent = agent_file(&server, ASK);
    let (run, _) = suspend(&agent);
    let (code, _, stderr) = outcome(agent.reins(&[
        "runs",
        "approve",
        "AGENT",
        &run,
        "--args",
        r#"{"text": "edited"}"#,
        "--as",
        "carol",
        "--reason",
        "the draft was wrong",
    ]));
    assert_eq!(code, 0, "{stderr}");

    let (_, stdout, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    let shown: Value = serde_json::from_str(stdout.trim()).expect("json");
    let decision = &shown["decisions"][0];
    assert_eq!(decision["decided_by"], "carol via reins runs approve");
    assert_eq!(decision["reason"], "the draft was wrong");
    assert_eq!(decision["verdict"], "approved with edited arguments");
    assert_eq!(decision["bound_arguments"]["text"], "draft", "{stdout}");
    assert_eq!(decision["new_arguments"]["text"], "edited");
    assert!(
        decision["binding"]
            .as_str()
            .is_some_and(|b| b.starts_with("sha256:"))
    );

    let (_, text, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run]));
    assert!(
        text.contains("approved with edited arguments by carol via reins runs approve at "),
        "{text}"
    );
    assert!(text.contains("because the draft was wrong"), "{text}");
    assert!(
        text.contains(r#"bound to the arguments {"text":"draft"}"#),
        "{text}"
    );
}
