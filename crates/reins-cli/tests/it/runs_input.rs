//! `reins runs` on a run id that is wrong for the command: the message says what is wrong
//! with it, not only that nothing waits (a call decided already names its decision and how
//! the run continues).

use crate::common::fakellm::FakeLlm;
use crate::common::inbox::Inbox;
use crate::common::{
    AgentDir, SAVE_NOTE_TOOL, approve_with_args, model_table, notes_agent, outcome,
    save_note_rules, waiting_save_note,
};
use serde_json::json;

#[test]
fn deciding_a_run_that_is_not_stored_says_so() {
    let agent = AgentDir::new(&model_table("http://127.0.0.1:9"));
    for command in [
        &["runs", "approve", "AGENT", "run-nope"][..],
        &["runs", "edit", "AGENT", "run-nope", "--args", "{}"],
        &["runs", "deny", "AGENT", "run-nope", "--message", "no"],
    ] {
        let (code, _, stderr) = outcome(agent.reins(command));
        assert_eq!(code, 1, "{command:?}: {stderr}");
        assert!(
            stderr.contains("no run `run-nope` is stored"),
            "{command:?}: {stderr}"
        );
    }
}

#[test]
fn deciding_a_run_that_is_not_suspended_says_what_it_is() {
    // No model answers: the run fails at its first model call.
    let agent = AgentDir::new(&format!(
        "default_prompt = \"hi\"\n{}",
        model_table("http://127.0.0.1:9")
    ));
    let (code, _, stderr) = outcome(agent.keyed(&["run", "AGENT"]));
    assert_eq!(code, 1, "{stderr}");
    let (_, stdout, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    let run = stdout
        .split('"')
        .find(|word| word.starts_with("run-"))
        .unwrap_or_else(|| panic!("a run id in {stdout}"))
        .to_owned();
    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &run]));
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("(its status: failed)"), "{stderr}");
}

#[test]
fn a_run_is_resumed_only_with_its_own_agent_file() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = notes_agent(
        &server.openai_url(),
        "[hooks.approval]\nrules = [{ tool = \"save_note\", action = \"ask\" }]\n",
    );
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "--json"]));
    let (run, _) = waiting_save_note(code, &stdout, &stderr);
    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");

    // Another agent beside it shares its store (`.reins/runs.sqlite`), and so its runs.
    let other = other_agent(&agent, &server);
    let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", &other, &run]));
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("is a run of the agent `notes`, not `other`"),
        "{stderr}"
    );

    // Its own file still resumes it: nothing ran.
    let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.");
}

#[test]
fn a_run_is_decided_only_with_its_own_agent_file() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = asking_agent(&server);
    let run = waiting_run(&agent);

    // Arguments checked against the other agent's schema would be let through for a run of
    // `notes`.
    let other = other_agent(&agent, &server);
    for command in [
        &["runs", "approve", &other, &run][..],
        &["runs", "approve", &other, &run, "--args", r#"{"text": 5}"#],
        &["runs", "edit", &other, &run, "--args", r#"{"text": 5}"#],
        &["runs", "deny", &other, &run, "--message", "no"],
    ] {
        let (code, stdout, stderr) = outcome(agent.reins(command));
        assert_eq!(code, 2, "{command:?}: {stdout}\n{stderr}");
        assert!(
            stderr.contains(&format!(
                "`{run}` is a run of the agent `notes`, not `other`"
            )) && stderr.contains("decide it with the agent file of `notes`"),
            "{command:?}: {stderr}"
        );
        assert!(!stderr.contains("runs resume"), "{command:?}: {stderr}");
    }

    // Nothing was decided: the call still waits, and its own file decides it.
    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    let shown: serde_json::Value = serde_json::from_str(&shown).expect("JSON");
    assert_eq!(shown["decisions"], json!([]), "{shown}");
    assert_eq!(shown["pending"][0]["tool"], "save_note", "{shown}");
    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_run_is_forked_only_with_its_own_agent_file() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = asking_agent(&server);
    let run = waiting_run(&agent);
    let other = other_agent(&agent, &server);
    for command in [
        &["runs", "fork", &other, &run][..],
        &["runs", "fork", &other, &run, "--args", r#"{"text": 5}"#],
    ] {
        let (code, stdout, stderr) = outcome(agent.reins(command));
        assert_eq!(code, 2, "{command:?}: {stdout}\n{stderr}");
        assert!(
            stderr.contains(&format!(
                "`{run}` is a run of the agent `notes`, not `other`"
            )) && stderr.contains("fork it with the agent file of `notes`"),
            "{command:?}: {stderr}"
        );
        assert!(stdout.is_empty(), "no new run's id: {stdout}");
    }

    // Nothing was forked: the store holds the one run, and its own file forks it.
    let (_, listed, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    assert_eq!(listed.lines().count(), 1, "{listed}");
    let (code, forked, stderr) = outcome(agent.reins(&["runs", "fork", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    assert!(forked.trim().starts_with("run-"), "{forked}");
}

/// Another agent, `other`, beside `agent` (so sharing its store, `.reins/runs.sqlite`, and its
/// runs), whose `save_note` takes an integer: its file's path.
fn other_agent(agent: &AgentDir, server: &FakeLlm) -> String {
    let other = agent.dir.path().join("other.toml");
    std::fs::write(
        &other,
        format!(
            "name = \"other\"\n{}\n{}",
            model_table(&server.openai_url()),
            SAVE_NOTE_TOOL.replace("type = \"string\"", "type = \"integer\"")
        ),
    )
    .expect("the other agent file");
    other.to_string_lossy().into_owned()
}

/// The notes agent on `server`, its `save_note` calls asking a person.
fn asking_agent(server: &FakeLlm) -> AgentDir {
    notes_agent(
        &server.openai_url(),
        "[hooks.approval]\nrules = [{ tool = \"save_note\", action = \"ask\" }]\n",
    )
}

/// A new run of `agent`, suspended with its `save_note` call waiting: the run's id.
fn waiting_run(agent: &AgentDir) -> String {
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "--json"]));
    waiting_save_note(code, &stdout, &stderr).0
}

#[test]
fn deciding_a_call_twice_says_it_is_decided_and_how_the_run_continues() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = asking_agent(&server);
    let waiting = || waiting_run(&agent);
    let run = waiting();
    let (code, _, stderr) =
        outcome(agent.reins(&["runs", "approve", "AGENT", &run, "--as", "ana"]));
    assert_eq!(code, 0, "{stderr}");
    let resume = format!(
        "; `reins runs resume {} {run}` continues the run",
        agent.file.display()
    );
    // `runs show` says what is left to do.
    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run]));
    assert!(
        shown.contains(&format!(
            "every waiting call is decided: `reins runs resume {} {run}` continues the run",
            agent.file.display()
        )),
        "{shown}"
    );
    for command in [
        &["runs", "approve", "AGENT", &run, "t1c0"][..],
        &["runs", "approve", "AGENT", &run],
        &["runs", "edit", "AGENT", &run, "--args", "{}"],
        &["runs", "deny", "AGENT", &run, "--message", "no"],
    ] {
        let (code, _, stderr) = outcome(agent.reins(command));
        assert_eq!(code, 1, "{command:?}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "call `t1c0` of run `{run}` is already approved (by ana via reins runs approve, at "
            )) && stderr.contains(&resume)
                && stderr.contains("(`--change` replaces a decision until then)"),
            "{command:?}: {stderr}"
        );
    }

    let denied = waiting();
    let (code, _, stderr) =
        outcome(agent.reins(&["runs", "deny", "AGENT", &denied, "--message", "not today"]));
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &denied, "t1c0"]));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "call `t1c0` of run `{denied}` is already denied: not today (by "
        )),
        "{stderr}"
    );
}

/// `--change` replaces a decision until the run resumes: the run goes on with the newer one,
/// and the trail keeps both.
#[test]
fn a_decision_changed_before_the_run_resumes_is_the_one_it_goes_on_with() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = asking_agent(&server);
    let run = waiting_run(&agent);
    let (code, _, stderr) =
        outcome(agent.reins(&["runs", "approve", "AGENT", &run, "--as", "ana"]));
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = outcome(agent.reins(&[
        "runs",
        "deny",
        "AGENT",
        &run,
        "--change",
        "--as",
        "bo",
        "--message",
        "not today",
    ]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("reins: denied; `reins runs resume "),
        "{stderr}"
    );

    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run]));
    let (ana, bo) = (
        shown.find("by ana via reins runs approve"),
        shown.find("by bo via reins runs deny"),
    );
    assert!(
        matches!((ana, bo), (Some(ana), Some(bo)) if ana < bo),
        "both decisions, oldest first: {shown}"
    );
    // Which one the run goes on with is said, in words, as JSON and in the inbox.
    let replaced = "replaced by a later decision about the call";
    assert_eq!(shown.matches(replaced).count(), 1, "{shown}");
    assert!(shown.find(replaced) < bo, "{shown}");
    let (_, json, _) = outcome(agent.reins(&["runs", "show", "AGENT", &run, "--json"]));
    let json: serde_json::Value = serde_json::from_str(&json).expect("runs show --json");
    let replaced: Vec<_> = json["decisions"]
        .as_array()
        .expect("the decisions")
        .iter()
        .map(|decision| (decision["decided_by"].clone(), decision["replaced"].clone()))
        .collect();
    assert_eq!(
        replaced,
        [
            (json!("ana via reins runs approve"), json!(true)),
            (json!("bo via reins runs deny"), json!(false))
        ]
    );
    let inbox = Inbox::start(&agent, &[]);
    let page = inbox.run_page(&run);
    assert_eq!(
        page.matches("(replaced by a later decision)").count(),
        1,
        "{page}"
    );
    drop(inbox);
    let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "I did not save it.");

    // The run acted on the decision: there is none left to change.
    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &run, "--change"]));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!("run `{run}` has no call waiting for a decision")),
        "{stderr}"
    );
}

#[test]
fn edited_arguments_that_do_not_fit_the_tool_s_schema_are_refused_and_the_call_waits() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = asking_agent(&server);
    let run = waiting_run(&agent);
    // `save_note` requires `text`; a misspelt key would only fail the tool after resuming.
    let (code, _, stderr) = approve_with_args(&agent, &run, r#"{"txt": "edited"}"#);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("the arguments do not fit the schema of `save_note`")
            && stderr.contains("\"text\" is a required property"),
        "{stderr}"
    );
    // Nothing was decided: the call still waits, and arguments that fit are taken.
    let (code, _, stderr) = approve_with_args(&agent, &run, r#"{"text": "edited"}"#);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_fork_s_new_arguments_that_do_not_fit_the_tool_s_schema_are_refused() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = asking_agent(&server);
    let run = waiting_run(&agent);
    let fork = |args: &str| outcome(agent.reins(&["runs", "fork", "AGENT", &run, "--args", args]));
    let (code, stdout, stderr) = fork(r#"{"txt": "edited"}"#);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("the arguments do not fit the schema of `save_note`")
            && stderr.contains("\"text\" is a required property"),
        "{stderr}"
    );
    // Nothing was forked; arguments that fit are taken.
    let (_, listed, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    assert_eq!(listed.lines().count(), 1, "{listed}");
    let (code, forked, stderr) = fork(r#"{"text": "edited"}"#);
    assert_eq!(code, 0, "{stderr}");
    let (_, shown, _) = outcome(agent.reins(&["runs", "show", "AGENT", forked.trim(), "--json"]));
    let shown: serde_json::Value = serde_json::from_str(&shown).expect("runs show --json");
    assert_eq!(
        shown["pending"][0]["args"],
        json!({"text": "edited"}),
        "{shown}"
    );
}

/// The commands the CLI prints name the agent file as one shell word: pasted into a shell as
/// printed, a path with a space and a quote in it still reaches `reins` whole.
#[test]
fn suggested_commands_work_when_pasted_into_a_shell() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let plain = asking_agent(&server);
    let folder = plain.dir.path().join("ana's agents");
    std::fs::create_dir(&folder).expect("the folder");
    let file = folder.join("notes agent.toml");
    std::fs::rename(&plain.file, &file).expect("the agent file moves");
    let agent = AgentDir {
        dir: plain.dir,
        file,
    };

    let (code, _, stderr) = outcome(agent.keyed(&["run", "AGENT"]));
    assert_eq!(code, 3, "{stderr}");
    let show = quoted_command(&stderr, "reins runs show ");
    let (code, shown, stderr) = outcome(agent.shell(&show));
    assert_eq!(code, 0, "`{show}`: {stderr}");
    assert!(shown.contains("save_note"), "`{show}`: {shown}");
    let run = show.rsplit(' ').next().expect("the run id").to_owned();

    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    let resume = quoted_command(&stderr, "reins runs resume ");
    let (code, stdout, stderr) = outcome(agent.shell(&resume).env("REINS_TEST_KEY", "k"));
    assert_eq!(code, 0, "`{resume}`: {stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.");
}

/// The first command in backquotes in `text` that starts with `start`.
fn quoted_command(text: &str, start: &str) -> String {
    let from = text
        .find(&format!("`{start}"))
        .unwrap_or_else(|| panic!("no `{start}…` in {text}"));
    let command = &text[from + 1..];
    command[..command.find('`').expect("a closing backquote")].to_owned()
}
