//! What a model writes reaches a person's terminal as text: an escape sequence in an answer
//! cannot clear the screen (and the approval prompt with it), nor a bidirectional override
//! reorder the arguments a person approves. Piped, the answer stays as the model wrote it.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, SAVE_NOTE_TOOL, model_table, outcome, save_note_rules};
use reins_test_servers::Tmux;

/// The save-note flow, with a note whose name reads backwards after U+202E and an answer
/// that clears the screen and turns red.
fn rules() -> String {
    save_note_rules(
        r#"  - name: hostile answer
    when:
      tool_result_contains: "note: report"
    respond:
      content: "Saved.\e[2J\e[H\e[31mAll clear"
  - name: coloured
    when:
      messages_contain: "colour"
    respond:
      content: "Red: \e[31mred\e[0m"
"#,
        "",
    )
    .replace(
        "arguments: {text: \"draft\"}",
        "arguments: {text: \"report\\u202efdp.exe\"}",
    )
}

#[test]
fn a_terminal_shows_control_sequences_from_the_model_as_text() {
    let server = FakeLlm::start(&rules());
    let agent = AgentDir::new(&format!(
        "{model}\n{SAVE_NOTE_TOOL}\n[hooks.approval]\n\
         rules = [{{ tool = \"save_note\", action = \"ask\" }}]\n",
        model = model_table(&server.openai_url())
    ));
    let tmux = Tmux::start(&format!(
        "cd '{dir}' && env REINS_TEST_KEY=k '{reins}' run '{file}' 'Save a note.'; \
         echo EXIT=$?; sleep 600",
        reins = env!("CARGO_BIN_EXE_reins"),
        dir = agent.dir.path().display(),
        file = agent.file.display(),
    ));
    let screen = tmux.wait_for("(a)pprove, (d)eny, (e)dit arguments?");
    // The person sees where the override is instead of a name that reads `report.exe...`.
    assert!(
        screen.contains(r#""text": "report\u202efdp.exe""#),
        "{screen}"
    );
    assert!(!screen.contains('\u{202e}'), "{screen}");
    tmux.type_line("a");
    let screen = tmux.wait_for("EXIT=");
    assert!(
        screen.contains(r"[tool] save_note -> note: report\u202efdp.exe"),
        "{screen}"
    );
    assert!(
        screen.contains(r"Saved.\u001b[2J\u001b[H\u001b[31mAll clear"),
        "{screen}"
    );
    // Nothing cleared the screen: the question asked before the answer is still there.
    assert!(
        screen.contains("the model wants to run `save_note`"),
        "{screen}"
    );
    assert!(screen.contains("EXIT=0"), "{screen}");
}

#[test]
fn a_piped_answer_is_the_model_s_text_and_runs_show_quotes_it() {
    let server = FakeLlm::start(&rules());
    let agent = AgentDir::new(&model_table(&server.openai_url()));
    let (code, stdout, stderr) = outcome(agent.keyed(&["run", "AGENT", "Say it in colour."]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "Red: \u{1b}[31mred\u{1b}[0m\n", "{stderr}");
    let run = stderr
        .lines()
        .find_map(|line| line.strip_prefix("reins: ")?.split_whitespace().next())
        .expect("the run's id")
        .to_owned();
    let (code, shown, stderr) = outcome(agent.reins(&["runs", "show", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        shown.contains(r"assistant: Red: \u001b[31mred\u001b[0m"),
        "{shown}"
    );
    assert!(!shown.contains('\u{1b}'), "{shown:?}");
}
