//! A call cut off between its side effect and its result's checkpoint waits "in doubt" once
//! the run is resumed: `reins runs skip` answers it with a message and `reins runs supply`
//! with the result a person found it had, neither running the tool again; both are kept in
//! the run's decision trail, and both refuse a call that is not in doubt.

use crate::common::fakellm::FakeLlm;
use crate::common::{
    AgentDir, events, model_table, notes_agent, outcome, save_note_rules, waiting_save_note,
};
use crate::interrupt::{interrupt, start_run, wait_for};
use serde_json::Value;

/// The model charges when asked, and says which answer it read for the charge.
pub(crate) const RULES: &str = r#"version: 1
rules:
  - name: saw_the_skip
    when:
      tool_result_contains: "checked by hand"
    respond:
      content: "Saw the skip."
  - name: saw_the_receipt
    when:
      tool_result_contains: "receipt 42"
    respond:
      content: "Saw the receipt."
  - name: charged_again
    when:
      tool_result_contains: "charged"
    respond:
      content: "Charged again."
  - name: charge
    when:
      messages_contain: "wait"
    respond:
      tool_calls:
        - name: charge
          arguments: {}
"#;

/// A `charge` tool whose side effect is a line appended to `effects`; then it hangs (the run
/// is cut off there) unless `go` exists.
const CHARGE_TOOL: &str = r#"[[tools.shell]]
name = "charge"
description = "Charges a card."
command = ["sh", "-c", "echo charge >> effects; test -e go && echo charged || { touch waiting; exec sleep 120; }"]
schema = { type = "object", properties = {} }
"#;

/// How many times the charge had its effect.
pub(crate) fn effects(agent: &AgentDir) -> usize {
    std::fs::read_to_string(agent.dir.path().join("effects"))
        .unwrap_or_default()
        .lines()
        .count()
}

/// A run whose charge had its effect and was cut off (Ctrl-C) before its result was
/// recorded, then resumed: it waits with the call in doubt. The agent, the run and the call.
pub(crate) fn run_cut_off_in_doubt(llm: &FakeLlm) -> (AgentDir, String, String) {
    let agent = AgentDir::new(&format!(
        "{model}\n{CHARGE_TOOL}",
        model = model_table(&llm.openai_url())
    ));
    let mut child = start_run(&agent);
    wait_for(&agent.dir.path().join("waiting"), &mut child);
    let pid = child.id().to_string();
    let stderr = interrupt(child, &pid);
    let run = crate::interrupt::interrupted_run(&stderr).1;
    // A resume would run the charge again if it did not stop: let it end if it does.
    std::fs::write(agent.dir.path().join("go"), "").expect("let the tool finish");

    let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", &run, "--json"]));
    assert_eq!(code, 3, "the cut-off call waits\n{stdout}\n{stderr}");
    let waiting = events(&stdout).pop().expect("events");
    assert_eq!(waiting["event"], "suspended", "{stdout}");
    assert_eq!(waiting["pending"][0]["tool"], "charge", "{stdout}");
    assert_eq!(waiting["pending"][0]["in_doubt"], true, "{stdout}");
    let call = waiting["pending"][0]["call"]
        .as_str()
        .expect("the call's id")
        .to_owned();
    assert_eq!(effects(&agent), 1, "the charge was not run again");
    (agent, run, call)
}

/// `runs show --json` of `run`.
pub(crate) fn shown(agent: &AgentDir, run: &str) -> Value {
    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "show", "AGENT", run, "--json"]));
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// What the model was given as the charge's result.
pub(crate) fn charge_result(run: &Value) -> String {
    run["history"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|message| message["role"] == "tool")
        .and_then(|message| message["content"].as_str())
        .unwrap_or_else(|| panic!("no tool result in {run}"))
        .to_owned()
}

/// `runs resume` of `run` to its end: the model's answer.
fn resumed_answer(agent: &AgentDir, run: &str) -> String {
    let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", run]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    stdout.trim().to_owned()
}

#[test]
fn runs_show_says_a_call_is_in_doubt_and_how_to_answer_it() {
    let llm = FakeLlm::start(RULES);
    let (agent, run, call) = run_cut_off_in_doubt(&llm);

    let json = shown(&agent, &run);
    assert_eq!(json["pending"][0]["call"], call.as_str(), "{json}");
    assert_eq!(json["pending"][0]["in_doubt"], true, "{json}");
    let (code, text, stderr) = outcome(agent.reins(&["runs", "show", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        text.contains(&format!("waiting: call {call} — charge"))
            && text.contains("in doubt")
            && text.contains("reins runs skip")
            && text.contains("reins runs supply"),
        "{text}"
    );
}

#[test]
fn a_skipped_call_in_doubt_is_not_run_again_and_the_model_reads_the_message() {
    let llm = FakeLlm::start(RULES);
    let (agent, run, call) = run_cut_off_in_doubt(&llm);

    let (code, _, stderr) = outcome(agent.reins(&[
        "runs",
        "skip",
        "AGENT",
        &run,
        &call,
        "--message",
        "checked by hand: the card was charged",
        "--as",
        "ana",
        "--reason",
        "the bank shows the charge",
    ]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("skipped") && stderr.contains("reins runs resume"),
        "{stderr}"
    );
    let trail = &shown(&agent, &run)["decisions"][0];
    assert_eq!(trail["call"], call.as_str(), "{trail}");
    assert_eq!(trail["decided_by"], "ana via reins runs skip", "{trail}");
    assert_eq!(trail["reason"], "the bank shows the charge", "{trail}");
    let verdict = trail["verdict"].as_str().unwrap_or_default();
    assert!(
        verdict.starts_with("skipped: ") && verdict.contains("checked by hand"),
        "{trail}"
    );

    assert_eq!(resumed_answer(&agent, &run), "Saw the skip.");
    assert_eq!(effects(&agent), 1, "the skipped charge did not run again");
    let done = shown(&agent, &run);
    assert_eq!(done["status"], "completed", "{done}");
    assert!(
        charge_result(&done).contains("checked by hand: the card was charged"),
        "{done}"
    );
}

#[test]
fn a_supplied_result_is_what_the_model_reads_and_the_tool_does_not_run_again() {
    let llm = FakeLlm::start(RULES);
    let (agent, run, call) = run_cut_off_in_doubt(&llm);

    // The only waiting call is the default.
    let (code, _, stderr) = outcome(agent.reins(&[
        "runs",
        "supply",
        "AGENT",
        &run,
        "--result",
        "{\"receipt\": \"receipt 42\"}",
    ]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("reins runs resume"), "{stderr}");
    let trail = &shown(&agent, &run)["decisions"][0];
    assert_eq!(trail["call"], call.as_str(), "{trail}");
    assert_eq!(
        trail["verdict"], "result supplied: {\"receipt\": \"receipt 42\"}",
        "{trail}"
    );
    assert!(
        trail["decided_by"]
            .as_str()
            .unwrap_or_default()
            .ends_with("via reins runs supply"),
        "{trail}"
    );

    assert_eq!(resumed_answer(&agent, &run), "Saw the receipt.");
    assert_eq!(effects(&agent), 1, "the charge did not run again");
    assert_eq!(
        charge_result(&shown(&agent, &run)),
        "{\"receipt\": \"receipt 42\"}"
    );
}

#[test]
fn skip_and_supply_refuse_a_call_that_is_not_in_doubt_or_not_waiting() {
    // A call an approval rule asks about never started: approve or deny it.
    let llm = FakeLlm::start(&save_note_rules("", ""));
    let ask = "[hooks.approval]\nrules = [{ tool = \"save_note\", action = \"ask\" }]\n";
    let notes = notes_agent(&llm.openai_url(), ask);
    let (code, stdout, stderr) = outcome(notes.keyed(&["run", "AGENT", "Save a note.", "--json"]));
    let (run, pending) = waiting_save_note(code, &stdout, &stderr);
    let call = pending["call"].as_str().expect("its id").to_owned();
    for answer in [
        ["skip", "--message", "no"],
        ["supply", "--result", "note: draft"],
    ] {
        let mut args = vec!["runs", answer[0], "AGENT", &run, &call];
        args.extend(&answer[1..]);
        let (code, _, stderr) = outcome(notes.reins(&args));
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains(&format!("call `{call}` of run `{run}` is not in doubt"))
                && stderr.contains("reins runs approve"),
            "{stderr}"
        );
    }
    let listed = shown(&notes, &run);
    assert_eq!(listed["pending"][0]["call"], call.as_str(), "still waiting");
    assert_eq!(
        listed["decisions"],
        serde_json::json!([]),
        "nothing recorded"
    );

    // A call in doubt: a call id that names no waiting call, and a second answer.
    let llm = FakeLlm::start(RULES);
    let (agent, run, call) = run_cut_off_in_doubt(&llm);
    let (code, _, stderr) =
        outcome(agent.reins(&["runs", "skip", "AGENT", &run, "t9c9", "--message", "no"]));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!("run `{run}` has no call `t9c9` waiting")),
        "{stderr}"
    );
    let (code, _, stderr) = outcome(agent.reins(&["runs", "supply", "AGENT", &run]));
    assert_eq!(code, 2, "`--result` is required\n{stderr}");

    let skip = ["runs", "skip", "AGENT", &run, &call, "--message", "no"];
    let (code, _, stderr) = outcome(agent.reins(&skip));
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = outcome(agent.reins(&skip));
    assert_eq!(code, 1, "a call answered already\n{stderr}");
    assert!(stderr.contains("--change"), "{stderr}");
    assert_eq!(effects(&agent), 1);
}

/// On the Restate store: a worker killed while the charge runs, after its effect. The next
/// worker's replay lists the call in doubt; `runs skip` answers it through the ingress, and
/// the run finishes on the worker without charging again.
#[test]
fn a_call_a_dying_restate_worker_cut_off_is_skipped_from_the_command_line() {
    use crate::restate::Worker;
    use reins_test_servers::{RestateServer, free_port};

    let server = RestateServer::start("cli-in-doubt");
    let llm = FakeLlm::start(RULES);
    // The charge notes its program's pid, so the test can end it once its worker is dead.
    let tool = CHARGE_TOOL.replace("touch waiting;", "echo $$ > sleeper; touch waiting;");
    let agent = AgentDir::new(&format!(
        "{model}\n{tool}\n[store]\nrestate = \"{ingress}\"\n",
        model = model_table(&llm.openai_url()),
        ingress = server.ingress_url()
    ));
    let listen = format!("127.0.0.1:{}", free_port());
    let worker = Worker::start(&agent, &server, &listen);
    let mut run = start_run(&agent);
    wait_for(&agent.dir.path().join("waiting"), &mut run);
    drop(worker);
    let sleeper = std::fs::read_to_string(agent.dir.path().join("sleeper")).expect("its pid");
    let _ = std::process::Command::new("kill")
        .arg(sleeper.trim())
        .status();
    std::fs::write(agent.dir.path().join("go"), "").expect("let the tool finish");
    let _worker = Worker::start(&agent, &server, &listen);

    // `reins run` follows the run until it waits, now in doubt.
    let output = run.wait_with_output().expect("reins run ends");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    let run_id = restate_run(&stderr);
    let file = agent.file.display();
    for command in ["skip", "supply"] {
        let line = format!("  reins runs {command} {file} {run_id}");
        assert!(stderr.contains(&line), "{stderr}");
    }
    let json = shown(&agent, &run_id);
    let run_id = json["run"].as_str().expect("its id").to_owned();
    assert_eq!(json["pending"][0]["in_doubt"], true, "{json}");
    assert_eq!(effects(&agent), 1);

    let (code, _, stderr) = outcome(agent.reins(&[
        "runs",
        "skip",
        "AGENT",
        &run_id,
        "--as",
        "ana",
        "--message",
        "x",
    ]));
    assert_eq!(code, 1, "Restate keeps no trail for `--as`\n{stderr}");
    let (code, _, stderr) = outcome(agent.reins(&[
        "runs",
        "skip",
        "AGENT",
        &run_id,
        "--message",
        "checked by hand: the card was charged",
    ]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(resumed_answer(&agent, &run_id), "Saw the skip.");
    assert_eq!(effects(&agent), 1, "the charge did not run again");
}

/// The run a `reins run` on Restate names as it starts (`reins: <run> (...)`).
fn restate_run(stderr: &str) -> String {
    stderr
        .lines()
        .find_map(|line| line.strip_prefix("reins: run-"))
        .and_then(|rest| rest.split_whitespace().next())
        .map(|id| format!("run-{id}"))
        .unwrap_or_else(|| panic!("no run named: {stderr}"))
}
