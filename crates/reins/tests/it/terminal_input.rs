//! The terminal decider shares the terminal with the program: in a real terminal (tmux), a
//! chat reads its own messages from stdin between the decider's questions, and every message
//! typed after a question was answered, or given up on, reaches the chat (a decider that kept
//! reading stdin took them).

use reins_test_servers::Tmux;
use std::path::PathBuf;

/// The `terminal_chat` example, which `cargo test` builds beside the test binaries.
fn terminal_chat() -> PathBuf {
    let test_binary = std::env::current_exe().expect("the test binary's path");
    let profile = test_binary
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the target profile directory");
    let example = profile.join("examples").join("terminal_chat");
    assert!(
        example.exists(),
        "{} is not built: `cargo test` builds the examples (or `cargo build -p reins --example \
         terminal_chat`)",
        example.display()
    );
    example
}

#[test]
fn a_chat_reads_its_messages_between_the_decider_s_questions() {
    let tmux = Tmux::start(&format!(
        "'{}' 2; echo EXIT=$?; sleep 600",
        terminal_chat().display()
    ));
    tmux.wait_for("you: ");
    tmux.type_line("save a note");
    let screen = tmux.wait_for("allow it? [y/N]");
    assert!(
        screen.contains("the model wants to run save_note"),
        "{screen}"
    );
    tmux.type_line("y");
    tmux.wait_for("assistant: Saved your note.");

    // A question nobody answers within the policy's two seconds is given up on...
    tmux.type_line("save another");
    tmux.wait_for("no answer in time: denied");
    tmux.wait_for("assistant: I did not save that one.");
    // ...and the next message still reaches the chat.
    tmux.type_line("and one more thing");
    tmux.wait_for("(read: and one more thing)");
    tmux.wait_for("assistant: Anything else?");
    tmux.type_line("/quit");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
}
