//! A chat in the terminal whose tool calls a person approves at the same terminal: the
//! program reads its messages from stdin itself, and the [`TerminalDecider`] asks its
//! questions there too. The decider reads a line only while a question waits for it, so
//! every message typed after an answer reaches the program.
//!
//! The scripted model saves a note for the first two messages and answers the others. A
//! question nobody answers within the policy's timeout (the first argument, in seconds; 300 by
//! default) denies the call, and the chat goes on. Runs offline:
//!
//! ```text
//! cargo run -p reins --example terminal_chat -- 10
//! ```

use reins::agent::AgentBuilder;
use reins::hooks::approval::{ApprovalPolicy, Rule, TerminalDecider};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::io::{BufRead, Write};
use std::time::Duration;

/// The arguments of `save_note`.
#[derive(Deserialize, JsonSchema)]
struct Note {
    /// The note's text.
    text: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let timeout = match std::env::args().nth(1) {
        Some(seconds) => Duration::from_secs(seconds.parse()?),
        None => Duration::from_secs(300),
    };
    let model = ScriptedModel::new([
        Turn::tool_call("save_note", json!({"text": "buy milk"})),
        Turn::text("Saved your note."),
        Turn::tool_call("save_note", json!({"text": "buy bread"})),
        Turn::text("I did not save that one."),
        Turn::text("Anything else?"),
        Turn::text("Goodbye."),
    ]);
    let save_note = tool_fn("save_note", "Saves a note.", |note: Note| async move {
        Ok::<_, std::io::Error>(format!("saved: {}", note.text))
    });
    let policy = ApprovalPolicy::new()
        .rule(Rule::ask("save_note").because("notes are shared"))
        .decider(TerminalDecider::new())
        .timeout(timeout);
    let agent = AgentBuilder::new(model)
        .tool(save_note)
        .add_hook(policy)
        .build();

    let stdin = std::io::stdin();
    loop {
        eprint!("you: ");
        std::io::stderr().flush()?;
        // The program's own read of stdin, between the decider's questions.
        let mut message = String::new();
        if stdin.lock().read_line(&mut message)? == 0 {
            break;
        }
        let message = message.trim();
        if message == "/quit" {
            break;
        }
        println!("(read: {message})");
        let answer = agent.prompt(message).max_turns(4).await?;
        println!("assistant: {answer}");
    }
    Ok(())
}
