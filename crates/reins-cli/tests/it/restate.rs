//! Agents on the Restate store, against a real `restate-server` and fakellm: `reins serve`
//! runs the worker and registers it, `reins run` suspends on a call an approval rule asks
//! about (exit 3), `reins runs approve|deny` decide it through the ingress, and the run
//! finishes on the worker with the tool executed once (or not at all when denied). The
//! commands that need an embedded store's records say they are not available.

use crate::common::approval_service::approval_service;
use crate::common::fakellm::FakeLlm;
use crate::common::{
    AgentDir, TIME_RULES, TIME_SERVER_TOOLS, approve_with_args, events, model_table, outcome,
    save_note_rules, serve_until, waiting_save_note,
};
use reins_test_servers::{RestateServer, free_port};
use serde_json::Value;
use std::process::{Child, Command};

/// The save-note flow, with this file's own rules.
fn rules() -> String {
    save_note_rules(
        "  - name: edited
    when:
      tool_result_contains: \"note: edited\"
    respond:
      content: \"Saved the edited note.\"
",
        "",
    )
}

/// An agent on fakellm and the Restate server at `ingress`, whose `save_note` tool appends
/// each note it saves to `notes.log` beside the agent file, and waits for a person.
fn restate_agent(llm: &FakeLlm, ingress: &str) -> AgentDir {
    restate_agent_asking(llm, ingress, "")
}

/// [`restate_agent`], with `approval` added to its `[hooks.approval]` table.
fn restate_agent_asking(llm: &FakeLlm, ingress: &str, approval: &str) -> AgentDir {
    AgentDir::new(&format!(
        r#"name = "notes"

{model}
[[tools.shell]]
name = "save_note"
description = "Saves a note."
command = ["sh", "-c", "printf 'note: %s\n' \"$0\" | tee -a notes.log", "{{text}}"]
schema = {{ type = "object", properties = {{ text = {{ type = "string" }} }}, required = ["text"] }}

[hooks.approval]
rules = [{{ tool = "save_note", action = "ask" }}]
{approval}
[store]
restate = "{ingress}"
"#,
        model = model_table(&llm.openai_url())
    ))
}

/// `reins serve` of an agent on `listen`, registered with the server's admin API; killed on
/// drop.
pub struct Worker(Child);

impl Worker {
    pub fn start(agent: &AgentDir, server: &RestateServer, listen: &str) -> Worker {
        let register = ["--register", &server.admin_url()];
        Worker(serve_until(agent, listen, &register, &[], "reins: registered").0)
    }
}

impl Worker {
    /// Sends SIGTERM (what a service manager sends) and returns the exit code.
    fn terminate(mut self) -> Option<i32> {
        let sent = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "SIGTERM reaches the worker");
        self.0.wait().expect("the worker exits").code()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `reins run --json` of `prompt` until the call waits; returns the run id and the waiting
/// call. (fakellm tells conversations apart by their first message: one prompt per run.)
fn suspend(agent: &AgentDir, prompt: &str) -> (String, Value) {
    let (code, stdout, stderr) = outcome(agent.reins(&["run", "AGENT", prompt, "--json"]));
    let waiting = waiting_save_note(code, &stdout, &stderr);
    assert_eq!(events(&stdout)[0]["event"], "started", "{stdout}");
    waiting
}

fn notes(agent: &AgentDir) -> String {
    std::fs::read_to_string(agent.dir.path().join("notes.log")).unwrap_or_default()
}

/// `reins runs approve` of the run's waiting call, then `reins runs resume` until it is done:
/// the note saved once.
fn approve_and_finish(agent: &AgentDir, run: &str) {
    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", run]));
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "resume", "AGENT", run]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.", "{stderr}");
    assert_eq!(notes(agent), "note: draft\n", "the tool ran once");
}

fn show(agent: &AgentDir, run: &str) -> Value {
    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "show", "AGENT", run, "--json"]));
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn a_call_suspended_on_restate_is_approved_and_the_run_finishes_on_the_worker() {
    let server = RestateServer::start("cli-approve");
    let llm = FakeLlm::start(&rules());
    let agent = restate_agent(&llm, &server.ingress_url());
    // Restate calls a suspended run back at the address it started on.
    let listen = format!("127.0.0.1:{}", free_port());
    let worker = Worker::start(&agent, &server, &listen);

    let (run, call) = suspend(&agent, "Save a note.");
    assert!(notes(&agent).is_empty(), "nothing ran before the decision");
    let shown = show(&agent, &run);
    assert_eq!(shown["status"], "suspended", "{shown}");
    assert_eq!(shown["pending"][0]["call"], call["call"]);
    // `skip` and `supply` answer only a call in doubt: this one never started.
    let id = call["call"].as_str().expect("its id");
    for answer in [
        ["skip", "--message", "no"],
        ["supply", "--result", "note: x"],
    ] {
        let mut args = vec!["runs", answer[0], "AGENT", &run];
        args.extend(&answer[1..]);
        let (code, _, stderr) = outcome(agent.reins(&args));
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains(&format!("call `{id}` of run `{run}` is not in doubt")),
            "{stderr}"
        );
    }

    // The waiting run holds no worker: it survives the worker's death and finishes on the
    // next one.
    drop(worker);
    let _worker = Worker::start(&agent, &server, &listen);

    approve_and_finish(&agent, &run);

    let shown = show(&agent, &run);
    assert_eq!(shown["status"], "completed", "{shown}");
    assert_eq!(shown["answer"], "Done: the note is saved.");
    assert_eq!(shown["turns"], 2);
    assert_eq!(shown["pending"], Value::Array(vec![]));
    // Two model calls and the tool call, each one journaled step.
    assert_eq!(shown["steps"].as_array().map(Vec::len), Some(3), "{shown}");

    for command in ["show", "resume", "approve"] {
        let (code, _, stderr) = outcome(agent.reins(&["runs", command, "AGENT", "run-unknown"]));
        assert_eq!(code, 1, "{command}: {stderr}");
        assert!(
            stderr.contains("run `run-unknown` is not known"),
            "{command}: {stderr}"
        );
    }
}

#[test]
fn the_approval_webhook_is_asked_once_on_the_worker_and_its_answer_is_replayed() {
    let server = RestateServer::start("cli-webhook");
    let llm = FakeLlm::start(&rules());
    let (webhook, received) =
        approval_service(r#"{"decision": "suspend", "reason": "a person signs off on notes"}"#);
    let agent = restate_agent_asking(
        &llm,
        &server.ingress_url(),
        &format!("webhook = \"{webhook}\"\n"),
    );
    let listen = format!("127.0.0.1:{}", free_port());
    let worker = Worker::start(&agent, &server, &listen);

    // The worker posts the call to the webhook, which hands it to a person.
    let (run, _) = suspend(&agent, "Save a note.");
    assert_eq!(received.lock().expect("requests").len(), 1);
    let shown = show(&agent, &run);
    assert_eq!(shown["pending"][0]["reason"], "a person signs off on notes");

    // A new worker replays the run from its journal when the decision comes: the webhook's
    // answer is read from there, not asked for again.
    drop(worker);
    let _worker = Worker::start(&agent, &server, &listen);
    approve_and_finish(&agent, &run);
    assert_eq!(
        received.lock().expect("requests").len(),
        1,
        "the webhook was asked once"
    );

    // The model calls, the approval and the tool call, each one journaled step.
    let shown = show(&agent, &run);
    let steps: Vec<&str> = shown["steps"]
        .as_array()
        .map(|steps| steps.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert_eq!(steps.len(), 4, "{shown}");
    assert_eq!(steps[1], format!("{run}/approval/t1c0"), "{shown}");
}

#[test]
fn a_denied_call_never_runs_and_an_edited_one_runs_with_its_new_arguments() {
    let server = RestateServer::start("cli-decide");
    let llm = FakeLlm::start(&rules());
    let agent = restate_agent(&llm, &server.ingress_url());
    let worker = Worker::start(&agent, &server, "127.0.0.1:0");

    let (denied, call) = suspend(&agent, "Save a note.");
    let call = call["call"].as_str().expect("call id");
    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &denied, "t9c9"]));
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("no call `t9c9` waiting"), "{stderr}");
    let (code, _, stderr) = outcome(agent.reins(&[
        "runs",
        "deny",
        "AGENT",
        &denied,
        call,
        "--message",
        "not today",
    ]));
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "resume", "AGENT", &denied]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "I did not save it.");
    assert!(notes(&agent).is_empty(), "the denied call did not run");

    let (edited, _) = suspend(&agent, "Save another note.");
    let (code, _, stderr) = approve_with_args(&agent, &edited, r#"{"text": "edited"}"#);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) =
        outcome(agent.reins(&["runs", "resume", "AGENT", &edited, "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let done = events(&stdout).pop().expect("events");
    assert_eq!(done["event"], "done", "{stdout}");
    assert_eq!(done["answer"], "Saved the edited note.");
    assert_eq!(notes(&agent), "note: edited\n");

    assert_eq!(
        worker.terminate(),
        Some(0),
        "SIGTERM stops the worker cleanly"
    );
}

#[test]
fn check_accepts_a_restate_ingress_url_and_points_at_a_bad_one() {
    let llm_url = "http://127.0.0.1:9/v1";
    let file = |store: &str| format!("{}\n[store]\n{store}\n", model_table(llm_url).trim_end());
    let agent = AgentDir::new(&file("restate = \"http://127.0.0.1:8080\""));
    let (code, stdout, stderr) = outcome(agent.keyed(&["check", "AGENT"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("ok"), "{stdout}");

    for (store, needle) in [
        ("restate = \"127.0.0.1:8080\"", "http:// or https://"),
        ("restate = \"ftp://127.0.0.1:8080\"", "http:// or https://"),
        ("restate = \"http://\"", "is not a valid URL"),
        (
            "restate = \"http://127.0.0.1:8080\"\nsqlite = \"runs.sqlite\"",
            "give one store",
        ),
        (
            "restate = \"http://admin:hunter2@127.0.0.1:8080\"",
            "must not hold credentials",
        ),
        (
            "restate = \"http://127.0.0.1:8080\"\n\n[limits]\nmax_wall_time_secs = 60",
            "`limits.max_wall_time_secs` reads the clock",
        ),
        (
            "restate = \"http://127.0.0.1:8080\"\n\n[hooks.cache]\nrecord = \"turns.jsonl\"",
            "`hooks.cache.record` answers a replayed run",
        ),
    ] {
        let agent = AgentDir::new(&file(store));
        let (code, _, stderr) = outcome(agent.keyed(&["check", "AGENT"]));
        assert_eq!(code, 2, "{store}: {stderr}");
        assert!(
            stderr.contains("agent.toml:7:") && stderr.contains(needle),
            "{store}: expected `{needle}` at line 7, got\n{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        // A credential in the file is pointed at, never shown.
        assert!(!stderr.contains("hunter2"), "{stderr}");
    }
}

#[test]
fn commands_that_need_run_records_say_the_restate_store_has_none() {
    let agent = AgentDir::new(&format!(
        "{}\n[store]\nrestate = \"http://127.0.0.1:9\"\n",
        model_table("http://127.0.0.1:9/v1")
    ));
    for args in [
        &["runs", "list", "AGENT"][..],
        &["runs", "checkpoints", "AGENT", "run-1"],
        &["runs", "fork", "AGENT", "run-1"],
        &["chat", "AGENT"],
        &["ui", "AGENT"],
    ] {
        let (code, _, stderr) = outcome(agent.reins(args).env("REINS_TEST_KEY", "k"));
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("not available for agents on the Restate store"),
            "{args:?}: {stderr}"
        );
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    }
    // Where the model's key is not set (on Restate, only the worker calls the model), they
    // say so too, not that the key is missing: setting it would not help.
    for args in [&["chat", "AGENT"][..], &["ui", "AGENT"]] {
        let (code, _, stderr) = outcome(agent.reins(args));
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("not available for agents on the Restate store"),
            "{args:?}: {stderr}"
        );
    }
    // Nothing listens on the ingress: `reins run` says so instead of hanging.
    let (code, _, stderr) = outcome(agent.reins(&["run", "AGENT", "hello"]));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("cannot reach the Restate ingress"),
        "{stderr}"
    );
}

#[test]
fn a_failed_registration_does_not_show_the_admin_url_s_credentials() {
    let agent = AgentDir::new(&format!(
        "{}\n[store]\nrestate = \"http://127.0.0.1:9\"\n",
        model_table("http://127.0.0.1:9/v1")
    ));
    // Nothing listens on the admin port: the registration fails and says where it tried.
    let (code, _, stderr) = outcome(agent.keyed(&[
        "serve",
        "AGENT",
        "--listen",
        "127.0.0.1:0",
        "--register",
        "http://ops:hunter2@127.0.0.1:9",
    ]));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("admin API at http://***@127.0.0.1:9"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
    // It is the admin API that could not be reached, not the ingress.
    assert!(
        stderr.contains("the Restate admin API could not be reached"),
        "{stderr}"
    );
    assert!(!stderr.contains("ingress"), "{stderr}");
}

#[test]
fn the_example_restate_agent_passes_check() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/agents/restate-assistant.toml");
    let agent = AgentDir::new("");
    let (code, stdout, stderr) =
        outcome(agent.reins(&["check", example]).env("OPENAI_API_KEY", "k"));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("ok (agent `restate-assistant`)"),
        "{stdout}"
    );
}

#[test]
fn a_run_without_a_registered_worker_names_the_command_that_serves_one() {
    let server = RestateServer::start("cli-unregistered");
    let llm = FakeLlm::start(&rules());
    let agent = restate_agent(&llm, &server.ingress_url());
    let (code, _, stderr) = outcome(agent.reins(&["run", "AGENT", "Save a note."]));
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("reins serve"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn serve_refuses_an_agent_whose_store_is_not_restate() {
    let agent = AgentDir::new(&model_table("http://127.0.0.1:9/v1"));
    let (code, _, stderr) = outcome(agent.keyed(&["serve", "AGENT", "--listen", "127.0.0.1:0"]));
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("needs `[store] restate"), "{stderr}");
}

#[test]
fn a_run_that_fails_on_the_worker_exits_1_with_the_reason() {
    let server = RestateServer::start("cli-failed");
    // A model server that answers every request with an error.
    let llm = FakeLlm::start(
        "version: 1\nrules:\n  - name: broken\n    when: {messages_contain: \"note\"}\n    respond:\n      status: 400\n      error: \"no such model\"\n",
    );
    let agent = restate_agent(&llm, &server.ingress_url());
    let _worker = Worker::start(&agent, &server, "127.0.0.1:0");
    let (code, stdout, stderr) = outcome(agent.reins(&["run", "AGENT", "Save a note.", "--json"]));
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let failed = events(&stdout).pop().expect("events");
    assert_eq!(failed["event"], "error", "{stdout}");
    let message = failed["message"].as_str().unwrap_or_default();
    assert!(message.contains("the run failed"), "{stdout}");
    assert!(message.contains("400"), "{stdout}");
    let shown = show(&agent, failed["run"].as_str().expect("run id"));
    assert_eq!(shown["status"], "failed", "{shown}");
}

#[test]
fn a_run_that_reaches_its_turn_limit_on_the_worker_exits_4_as_a_limit() {
    let server = RestateServer::start("cli-limit");
    let llm = FakeLlm::start(&rules());
    // One model call allowed, and the model's first answer is a tool call: the run ends at
    // its limit with the call unexecuted.
    let agent = AgentDir::new(&format!(
        r#"{model}
[limits]
max_turns = 1

[[tools.shell]]
name = "save_note"
description = "Saves a note."
command = ["sh", "-c", "printf 'note: %s\n' \"$0\"", "{{text}}"]
schema = {{ type = "object", properties = {{ text = {{ type = "string" }} }}, required = ["text"] }}

[store]
restate = "{ingress}"
"#,
        model = model_table(&llm.openai_url()),
        ingress = server.ingress_url(),
    ));
    let _worker = Worker::start(&agent, &server, "127.0.0.1:0");
    let (code, stdout, stderr) = outcome(agent.reins(&["run", "AGENT", "Save a note.", "--json"]));
    assert_eq!(code, 4, "{stdout}\n{stderr}");
    let ended = events(&stdout).pop().expect("events");
    assert_eq!(ended["event"], "max_turns", "{stdout}");
}

#[test]
fn an_mcp_servers_tool_runs_on_the_worker_as_a_journaled_step() {
    let server = RestateServer::start("cli-mcp");
    let llm = FakeLlm::start(TIME_RULES);
    let agent = AgentDir::new(&format!(
        r#"{model}
{time_server}
[store]
restate = "{ingress}"
"#,
        model = model_table(&llm.openai_url()),
        time_server = TIME_SERVER_TOOLS,
        ingress = server.ingress_url(),
    ));
    let _worker = Worker::start(&agent, &server, "127.0.0.1:0");
    let (code, stdout, stderr) = outcome(agent.reins(&["run", "AGENT", "What time is it?"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "The time server answered.", "{stderr}");
    // The model call, the MCP tool call (named by its effect id), the final model call.
    let steps: Vec<&str> = stderr
        .lines()
        .filter_map(|line| line.strip_prefix("[step] "))
        .collect();
    assert_eq!(steps.len(), 3, "{stderr}");
    assert!(steps[1].ends_with("/t1c0"), "{stderr}");
}
