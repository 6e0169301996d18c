//! The commands that run the agent (`run`, `chat`, `runs resume`) read its file once: given
//! as a pipe (`reins chat <(envsubst < agent.toml.in)`), a second read found it empty and
//! the command refused a file that was fine; a file changed between two reads made one
//! command act on two agents.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, SAVE_NOTE_TOOL, model_table, outcome, save_note_rules};

/// The save-note agent (named, since its file's name is the pipe's), its store named by an
/// absolute path (one relative to the file would be beside the pipe); asking about each note
/// when `asking`.
fn agent(server: &FakeLlm, asking: bool) -> AgentDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = dir.path().join("runs.sqlite");
    let approval = match asking {
        true => "[hooks.approval]\nrules = [{ tool = \"save_note\", action = \"ask\" }]\n",
        false => "",
    };
    let toml = format!(
        "name = \"notes\"\n{model}\n{SAVE_NOTE_TOOL}\n{approval}\n[store]\nsqlite = \"{}\"\n",
        store.display(),
        model = model_table(&server.openai_url())
    );
    let file = dir.path().join("agent.toml");
    std::fs::write(&file, toml).expect("write the agent file");
    AgentDir { dir, file }
}

/// `reins ARGS` in bash, `AGENT` standing for the agent file given through a pipe.
fn through_a_pipe(agent: &AgentDir, args: &str, stdin: &str) -> (i32, String, String) {
    let mut command = assert_cmd::Command::new("bash");
    command
        .arg("-c")
        .arg(format!(
            "\"$REINS_BINARY\" {}",
            args.replace("AGENT", "<(cat agent.toml)")
        ))
        .env("REINS_BINARY", assert_cmd::cargo::cargo_bin("reins"))
        .env("REINS_TEST_KEY", "k")
        .env_remove("REINS_LOG")
        .current_dir(agent.dir.path())
        .write_stdin(stdin);
    outcome(command)
}

#[test]
fn reins_run_reads_its_agent_file_once() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = agent(&server, false);
    let (code, stdout, stderr) = through_a_pipe(&agent, "run AGENT 'Save a note.'", "");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.");
}

#[test]
fn reins_chat_reads_its_agent_file_once() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = agent(&server, false);
    let (code, stdout, stderr) = through_a_pipe(&agent, "chat AGENT", "Save a note.\n");
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Done: the note is saved."), "{stdout}");
}

#[test]
fn reins_runs_resume_reads_its_agent_file_once() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = agent(&server, true);
    let (code, _, stderr) = outcome(agent.keyed(&["run", "AGENT", "Save a note."]));
    assert_eq!(code, 3, "the note waits for a decision: {stderr}");
    let (_, listed, _) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    let listed: serde_json::Value = serde_json::from_str(listed.trim()).expect("one run");
    let run = listed["run"].as_str().expect("its id");
    let (code, _, stderr) = outcome(agent.reins(&["runs", "approve", "AGENT", run]));
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = through_a_pipe(&agent, &format!("runs resume AGENT {run}"), "");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.");
}

/// A file given as a pipe has no directory of its own (its path is `/dev/fd/N`): its relative
/// paths — a tool's program, the default store — are relative to the current directory, as
/// they would be beside a file named there, not to `/dev/fd`.
#[test]
fn the_relative_paths_of_an_agent_file_given_as_a_pipe_are_the_current_directory_s() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let dir = tempfile::tempdir().expect("a temporary directory");
    let script = dir.path().join("save.sh");
    std::fs::write(&script, "#!/bin/sh\nprintf 'note: %s' \"$1\"\n").expect("the tool's script");
    let made_runnable = std::process::Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .expect("chmod");
    assert!(made_runnable.success());
    let toml = format!(
        "name = \"notes\"\n{model}\n{tool}",
        model = model_table(&server.openai_url()),
        tool = SAVE_NOTE_TOOL.replace(
            r#"["printf", "note: %s", "{text}"]"#,
            r#"["./save.sh", "{text}"]"#
        ),
    );
    assert!(toml.contains("./save.sh"), "{toml}");
    let file = dir.path().join("agent.toml");
    std::fs::write(&file, toml).expect("write the agent file");
    let agent = AgentDir { dir, file };

    let (code, stdout, stderr) = through_a_pipe(&agent, "run AGENT 'Save a note.'", "");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.");
    let store = agent.dir.path().join(".reins").join("runs.sqlite");
    assert!(
        store.is_file(),
        "the store is in the current directory: {stderr}"
    );
}
