//! Ctrl-C at the demo's approval question (`reins` with no subcommand). The demo keeps no
//! runs, so unlike `reins run` it has no store to leave the call waiting in: the demo stops,
//! and says so — that the call was not run and why it was not left waiting — exiting 130.

use crate::common::fakellm::FakeLlm;
use reins_test_servers::Tmux;

/// The model writes a note (`write_note`, which the demo asks about), then answers.
const RULES: &str = r#"version: 1
rules:
  - name: answer
    when:
      tool_result_contains: "note"
    respond:
      content: "Done."
  - name: write
    when:
      messages_contain: "note"
    respond:
      tool_calls:
        - name: write_note
          arguments: {file: "door.txt", text: "the door is red"}
"#;

#[test]
fn ctrl_c_at_the_demo_s_question_says_the_call_was_not_run_and_exits_130() {
    let server = FakeLlm::start(RULES);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let reins = env!("CARGO_BIN_EXE_reins");
    let tmux = Tmux::start(&format!(
        "cd '{dir}' && env OPENAI_API_KEY=k OPENAI_BASE_URL='{url}' '{reins}' --provider openai \
         'Write a note.'; echo EXIT=$?; sleep 600",
        dir = dir.path().display(),
        url = server.openai_url(),
    ));
    tmux.wait_for("[approval] allow it? [y/N]");
    tmux.press("C-c");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=130"), "{screen}");
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    assert!(
        lines.iter().any(|line| line.starts_with(
            "reins: Ctrl-C at the question: `write_note` was not run, and the demo stopped"
        )),
        "{screen}"
    );
    assert!(!dir.path().join("door.txt").exists(), "{screen}");
}
