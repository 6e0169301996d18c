//! A program reading `reins`'s output that stops reading (`reins runs list agent.toml | head
//! -1`): the writes that follow are dropped, never a panic, and the command goes on to its
//! end, so a run whose reader went away still finishes and is stored.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, events, model_table, outcome};
use std::process::{Command, Stdio};

const RULES: &str = r#"version: 1
rules:
  - name: answer
    when:
      messages_contain: "hello"
    respond:
      content: "Hello there, from a model that says a good deal more than one line would hold."
"#;

/// Runs `reins ARGS` in the agent's directory with its stdout's reader gone before anything
/// was written; its exit code and stderr.
fn with_reader_gone(agent: &AgentDir, args: &[&str]) -> (i32, String) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("reins"))
        .args(args)
        .current_dir(agent.dir.path())
        .env("REINS_TEST_KEY", "k")
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start reins");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("reins ends");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn output_nobody_reads_is_dropped_and_the_run_still_finishes() {
    let llm = FakeLlm::start(RULES);
    let agent = AgentDir::new(&model_table(&llm.openai_url()));
    let file = agent.file.to_string_lossy().into_owned();

    let (code, stderr) = with_reader_gone(&agent, &["check", &file]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    let (code, stderr) = with_reader_gone(&agent, &["run", &file, "Say hello."]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    let (code, stdout, stderr) = outcome(agent.reins(&["runs", "list", "AGENT", "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let runs = events(&stdout);
    assert_eq!(runs.len(), 1, "{stdout}");
    assert_eq!(runs[0]["status"], "completed", "{stdout}");

    let (code, stderr) = with_reader_gone(&agent, &["runs", "list", &file]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
