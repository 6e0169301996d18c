//! What a person is told to run to decide a waiting call: a suspended run and `runs show`
//! print the whole commands (the agent file as given, the run, the call when the run waits on
//! several), each on a line of its own, which run as printed when pasted into a shell; and a
//! decision about a run some process is driving says so, and how to take the run over.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, notes_agent, outcome, save_note_rules, suspended_run_named};
use crate::interrupt::{RULES, run_waiting_in_its_tool};

/// The notes agent asking about every `save_note` call, its file named `my notes.toml` (a
/// name a shell splits unless it is quoted).
fn asking_agent(server: &FakeLlm) -> AgentDir {
    let agent = notes_agent(
        &server.openai_url(),
        "[hooks.approval]\nrules = [{ tool = \"save_note\", action = \"ask\" }]\n",
    );
    let file = agent.dir.path().join("my notes.toml");
    std::fs::rename(&agent.file, &file).expect("the agent file moves");
    AgentDir {
        dir: agent.dir,
        file,
    }
}

/// The line of `text` that is `command` alone (indented), as a person copies it.
fn command_line(text: &str, command: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|line| *line == command)
        .unwrap_or_else(|| panic!("no line `{command}` in:\n{text}"))
        .to_owned()
}

#[test]
fn a_suspended_run_prints_whole_commands_that_decide_it_and_work_when_pasted() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = asking_agent(&server);
    // The file as a person gives it: relative to where they are, quoted for their shell.
    let (code, _, stderr) = outcome(
        agent
            .shell("reins run 'my notes.toml'")
            .env("REINS_TEST_KEY", "k"),
    );
    assert_eq!(code, 3, "{stderr}");
    let run = suspended_run_named(&stderr);
    command_line(&stderr, &format!("reins runs deny 'my notes.toml' {run}"));
    let approve = command_line(
        &stderr,
        &format!("reins runs approve 'my notes.toml' {run}"),
    );
    let resume = command_line(&stderr, &format!("reins runs resume 'my notes.toml' {run}"));

    // `runs show` names them too, with the file as it was given to it.
    let (code, shown, stderr) =
        outcome(agent.shell(&format!("reins runs show 'my notes.toml' {run}")));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        command_line(&shown, &format!("reins runs approve 'my notes.toml' {run}")),
        approve
    );
    command_line(&shown, &format!("reins runs deny 'my notes.toml' {run}"));

    let (code, _, stderr) = outcome(agent.shell(&approve));
    assert_eq!(code, 0, "`{approve}`: {stderr}");
    let (code, stdout, stderr) = outcome(agent.shell(&resume).env("REINS_TEST_KEY", "k"));
    assert_eq!(code, 0, "`{resume}`: {stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.");
}

/// Two calls wait: each command names its call, and the run goes on once both are decided.
#[test]
fn each_of_several_waiting_calls_is_named_in_its_commands() {
    let server = FakeLlm::start(
        r#"version: 1
rules:
  - name: answer
    when:
      tool_result_contains: "denied"
    respond:
      content: "One note saved."
  - name: save
    when:
      messages_contain: "note"
    respond:
      tool_calls:
        - name: save_note
          arguments: {text: "one"}
        - name: save_note
          arguments: {text: "two"}
"#,
    );
    let agent = asking_agent(&server);
    let (code, _, stderr) = outcome(
        agent
            .shell("reins run 'my notes.toml'")
            .env("REINS_TEST_KEY", "k"),
    );
    assert_eq!(code, 3, "{stderr}");
    let run = suspended_run_named(&stderr);
    let approve = command_line(
        &stderr,
        &format!("reins runs approve 'my notes.toml' {run} t1c0"),
    );
    let deny = command_line(
        &stderr,
        &format!("reins runs deny 'my notes.toml' {run} t1c1"),
    );
    let resume = command_line(&stderr, &format!("reins runs resume 'my notes.toml' {run}"));
    for decide in [approve, deny] {
        let (code, _, stderr) = outcome(agent.shell(&decide));
        assert_eq!(code, 0, "`{decide}`: {stderr}");
    }
    let (code, stdout, stderr) = outcome(agent.shell(&resume).env("REINS_TEST_KEY", "k"));
    assert_eq!(code, 0, "`{resume}`: {stderr}");
    assert_eq!(stdout.trim(), "One note saved.");
}

/// A decision about a run a live `reins run` drives (its terminal asks about its calls, or it
/// runs a tool) says the run is in progress and who drives it, not only its status; once that
/// process is gone, how to take the run over.
#[test]
fn a_decision_about_a_run_in_progress_says_who_drives_it() {
    let llm = FakeLlm::start(RULES);
    let (agent, mut child) = run_waiting_in_its_tool(&llm);
    let pid = child.id();
    let (_, listed, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    let run: serde_json::Value = serde_json::from_str(listed.trim()).expect("one run");
    let run = run["run"].as_str().expect("its id").to_owned();

    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &run]));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!("run `{run}` is in progress")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("reins run, pid {pid} on ")),
        "{stderr}"
    );
    assert!(stderr.contains("at that process's terminal"), "{stderr}");
    let resume = format!("`reins runs resume {} {run}`", agent.file.display());
    assert!(stderr.contains(&resume), "{stderr}");

    // Killed outright: its lease holds the run for nobody, and a resume takes it over.
    child.kill().expect("kill reins");
    child.wait().expect("reins ends");
    if cfg!(target_os = "linux") {
        let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", &run]));
        assert_eq!(code, 1, "{stderr}");
        assert!(stderr.contains("is no longer running"), "{stderr}");
        assert!(
            stderr.contains(&format!("{resume} takes the run over")),
            "{stderr}"
        );
    }
}
