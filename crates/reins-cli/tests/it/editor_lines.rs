//! What reins says after the editor (`runs approve|fork --edit`, the approval question)
//! starts on a line of its own, with no empty line above it: a full-screen editor that
//! restores the screen (as vi and nano do) leaves the cursor at the start of a line, a
//! line-mode editor (as ed) may leave it there or not, and only a line left open is ended.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, outcome, suspended_run_named};
use crate::terminal::{agent, editor_script, in_terminal, rules};

/// An editor as vi is to the terminal: it switches to the alternate screen, edits, and
/// switches back, which puts the screen and the cursor back as they were.
const FULL_SCREEN_EDITOR: &str = "#!/bin/sh\nprintf '\\033[?1049h\\033[H\\033[2Jediting %s' \"$1\"\n\
sed -i 's/draft/edited/' \"$1\"\nprintf '\\033[?1049l'\n";

/// An editor as ed is to the terminal: it prints on the lines where the cursor is, each
/// ended (ed prints the size it read and wrote).
const LINE_MODE_EDITOR: &str = "#!/bin/sh\nwc -c < \"$1\"\nsed -i 's/draft/edited/' \"$1\"\n\
wc -c < \"$1\"\n";

/// A run suspended on its note (no terminal to ask at), and its id.
fn suspended(agent: &AgentDir) -> String {
    let (code, _, stderr) = outcome(agent.keyed(&["run", "AGENT", "Save a note."]));
    assert_eq!(code, 3, "{stderr}");
    suspended_run_named(&stderr)
}

/// The screen's lines up to the `EXIT=` line, trailing spaces cut.
fn lines_before_exit(screen: &str) -> Vec<&str> {
    screen
        .lines()
        .map(str::trim_end)
        .take_while(|line| !line.starts_with("EXIT="))
        .collect()
}

/// Runs `reins runs SUBCOMMAND FILE RUN --edit` on a suspended run with `editor`; the
/// screen once it has ended (exit 0).
fn edited_by(subcommand: &str, editor: &str) -> String {
    let server = FakeLlm::start(&rules());
    let agent = agent(&server, 300);
    let run = suspended(&agent);
    let editor = editor_script(&agent, editor);
    let file = agent.file.display().to_string();
    let tmux = in_terminal(
        &agent,
        &editor,
        &format!("runs {subcommand} '{file}' {run} --edit"),
    );
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    screen
}

#[test]
fn after_a_full_screen_editor_no_empty_line_comes_first() {
    for subcommand in ["approve", "fork"] {
        let screen = edited_by(subcommand, FULL_SCREEN_EDITOR);
        let lines = lines_before_exit(&screen);
        assert!(!lines.is_empty(), "{screen}");
        // The editor's screen is gone, and reins's first line is the screen's first.
        assert!(!screen.contains("editing "), "{screen}");
        assert!(
            !lines.contains(&""),
            "an empty line after `runs {subcommand} --edit`:\n{screen}"
        );
    }
}

#[test]
fn after_a_line_mode_editor_that_ended_its_lines_no_empty_line_comes_first() {
    for subcommand in ["approve", "fork"] {
        let screen = edited_by(subcommand, LINE_MODE_EDITOR);
        let lines = lines_before_exit(&screen);
        // The editor's own lines stay, and reins's follow them at once.
        assert!(lines.len() > 2, "{screen}");
        assert!(lines[0].parse::<u32>().is_ok(), "{screen}");
        assert!(lines[1].parse::<u32>().is_ok(), "{screen}");
        assert!(
            !lines.contains(&""),
            "an empty line after `runs {subcommand} --edit`:\n{screen}"
        );
    }
}

#[test]
fn after_a_full_screen_editor_at_the_question_no_empty_line_comes_first() {
    let server = FakeLlm::start(&rules());
    let agent = agent(&server, 300);
    let editor = editor_script(&agent, FULL_SCREEN_EDITOR);
    let file = agent.file.display().to_string();
    let tmux = in_terminal(&agent, &editor, &format!("run '{file}' 'Save a note.'"));
    tmux.wait_for("(a)pprove, (d)eny, (e)dit arguments?");
    tmux.type_line("e");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("note: edited"), "{screen}");
    let lines = lines_before_exit(&screen);
    let answered = lines
        .iter()
        .position(|line| line.contains("(e)dit arguments?") && line.ends_with(" e"))
        .unwrap_or_else(|| panic!("the answer `e`:\n{screen}"));
    assert_ne!(lines.get(answered + 1), Some(&""), "{screen}");
}
