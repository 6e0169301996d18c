//! Ctrl-C while the editor started at the approval question ("edit arguments") is open: it is
//! the editor's. A person who quits the editor with it comes back to the question, the
//! arguments unchanged; an editor that takes it as a key (as vi does) goes on. Neither stops
//! the run nor leaves the call waiting.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, outcome, suspended_run_named};
use crate::terminal::{agent, editor_script, in_terminal, rules};
use reins_test_servers::Tmux;

const QUESTION: &str = "(a)pprove, (d)eny, (e)dit arguments?";

/// An "editor" that asks for the note's new text on the terminal (a plain shell script, so
/// Ctrl-C ends it), `prelude` run first.
fn typing_editor(agent: &AgentDir, prelude: &str) -> String {
    editor_script(
        agent,
        &format!(
            "#!/bin/sh\n{prelude}\nprintf 'new text: '\nread -r text\nsed -i \"s/draft/$text/\" \"$1\"\n"
        ),
    )
}

/// `reins run` asking about the note, with `editor`, at the question.
fn at_the_question(server: &FakeLlm, prelude: &str) -> (AgentDir, Tmux) {
    let agent = agent(server, 300);
    let editor = typing_editor(&agent, prelude);
    let file = agent.file.display().to_string();
    let tmux = in_terminal(&agent, &editor, &format!("run '{file}' 'Save a note.'"));
    tmux.wait_for(QUESTION);
    (agent, tmux)
}

/// Waits for the run to end and checks it saved `note` and exited 0; the screen.
fn ends_saving(tmux: &Tmux, note: &str) -> String {
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains(&format!("note: {note}")), "{screen}");
    assert!(screen.contains("EXIT=0"), "{screen}");
    screen
}

#[test]
fn ctrl_c_that_quits_the_editor_comes_back_to_the_question_with_the_arguments_unchanged() {
    let server = FakeLlm::start(&rules());
    let (_agent, tmux) = at_the_question(&server, "");
    tmux.type_line("e");
    tmux.wait_for("new text: ");
    tmux.press("C-c");
    let screen = tmux.wait_for_count(QUESTION, 2);
    assert!(
        screen.contains("[approval] the editor was quit with Ctrl-C: the arguments are unchanged"),
        "{screen}"
    );
    tmux.type_line("a");
    ends_saving(&tmux, "draft");
}

/// An editor that exits with a failure (`:cq`) is quit the same way: the question again.
#[test]
fn an_editor_that_fails_comes_back_to_the_question_with_the_arguments_unchanged() {
    let server = FakeLlm::start(&rules());
    let (_agent, tmux) = at_the_question(&server, "sed -i 's/draft/lost/' \"$1\"; exit 1");
    tmux.type_line("e");
    let screen = tmux.wait_for_count(QUESTION, 2);
    assert!(
        screen.contains("[approval] the editor exited with status 1: the arguments are unchanged"),
        "{screen}"
    );
    tmux.type_line("a");
    ends_saving(&tmux, "draft");
}

/// An editor that takes Ctrl-C as a key goes on, and so does the run once it is saved.
#[test]
fn a_ctrl_c_the_editor_takes_stops_nothing() {
    let server = FakeLlm::start(&rules());
    let (_agent, tmux) = at_the_question(&server, "trap '' INT");
    tmux.type_line("e");
    tmux.wait_for("new text: ");
    tmux.press("C-c");
    tmux.type_line("kept");
    ends_saving(&tmux, "kept");
}

/// In a chat too, where Ctrl-C is listened for on a thread of its own.
#[test]
fn a_ctrl_c_the_editor_takes_stops_nothing_in_a_chat() {
    let server = FakeLlm::start(&rules());
    let agent = agent(&server, 300);
    let editor = typing_editor(&agent, "trap '' INT");
    let file = agent.file.display().to_string();
    let tmux = in_terminal(&agent, &editor, &format!("chat '{file}'"));
    tmux.wait_for("you: ");
    tmux.type_line("Save a note.");
    tmux.wait_for(QUESTION);
    tmux.type_line("e");
    tmux.wait_for("new text: ");
    tmux.press("C-c");
    tmux.type_line("kept");
    // Read by the chat's next prompt, or by the shell if the chat ended.
    tmux.type_line("/quit");
    let screen = ends_saving(&tmux, "kept");
    assert!(screen.contains("Done: the note is saved."), "{screen}");
}

/// A run suspended on its note (no terminal to ask at), and its id.
fn suspended(agent: &AgentDir) -> String {
    let (code, _, stderr) = outcome(agent.keyed(&["run", "AGENT", "Save a note."]));
    assert_eq!(code, 3, "{stderr}");
    suspended_run_named(&stderr)
}

/// `reins runs approve --edit` drives no run, but a Ctrl-C while its editor is open is the
/// editor's all the same: one the editor takes as a key (as vi does) stops nothing, and what
/// it saves is approved, instead of reins ending and leaving the editor on the terminal.
#[test]
fn a_ctrl_c_the_editor_takes_stops_nothing_in_runs_approve_edit() {
    let server = FakeLlm::start(&rules());
    let agent = agent(&server, 300);
    let run = suspended(&agent);
    let editor = typing_editor(&agent, "trap '' INT");
    let file = agent.file.display().to_string();
    let tmux = in_terminal(
        &agent,
        &editor,
        &format!("runs approve '{file}' {run} --edit"),
    );
    tmux.wait_for("new text: ");
    tmux.press("C-c");
    tmux.type_line("kept");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    let (code, stdout, stderr) = outcome(agent.keyed(&["runs", "resume", "AGENT", &run]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("note: kept"), "{stdout}{stderr}");
}

/// A Ctrl-C that quits the editor of `reins runs fork --edit` leaves the arguments unchanged
/// and says so; reins is not ended by it.
#[test]
fn ctrl_c_that_quits_the_editor_of_runs_fork_edit_leaves_the_arguments_unchanged() {
    let server = FakeLlm::start(&rules());
    let agent = agent(&server, 300);
    let run = suspended(&agent);
    let editor = typing_editor(&agent, "");
    let file = agent.file.display().to_string();
    let tmux = in_terminal(&agent, &editor, &format!("runs fork '{file}' {run} --edit"));
    tmux.wait_for("new text: ");
    tmux.press("C-c");
    let screen = tmux.wait_for("EXIT=");
    assert!(
        screen.contains("the editor was quit with Ctrl-C: the arguments are unchanged"),
        "{screen}"
    );
    assert!(screen.contains("EXIT=1"), "{screen}");
}
