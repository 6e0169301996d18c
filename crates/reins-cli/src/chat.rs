//! `reins chat`: a conversation in the terminal. Each message is one durable run in the
//! agent's store that starts from the previous run's history, so `--resume RUN` picks a
//! conversation up where it stopped, in another process.

use crate::assemble::Assembled;
use crate::run::{Ending, Output, drive, new_run_id};
use reins::message::Message;
use reins::store::BoxedStore;
use reins::store::RunStore;
use std::io::Write;

/// Runs the conversation until end of input (or `/quit`). Returns how the last run ended.
pub async fn chat(
    assembled: &Assembled,
    agent_name: &str,
    store: BoxedStore,
    resume: Option<String>,
) -> Result<Ending, String> {
    let mut history = match &resume {
        Some(run) => {
            store
                .load(run)
                .await
                .map_err(|error| error.to_string())?
                .history
        }
        None => Vec::new(),
    };
    let mut ending = Ending::Done;
    eprintln!(
        "reins: chat with {agent_name} ({}); /quit or end of input to stop",
        assembled.model_label
    );
    loop {
        eprint!("you: ");
        let _ = std::io::stderr().flush();
        let Some(line) = crate::approve::read_line().await else {
            eprintln!();
            break;
        };
        let line = line.trim();
        if line == "/quit" {
            break;
        }
        if line.is_empty() {
            continue;
        }
        let run_id = new_run_id();
        let earlier: Vec<Message> = history
            .iter()
            .filter(|message| !matches!(message, Message::System { .. }))
            .cloned()
            .collect();
        let mut output = Output::new(false);
        output.started(&run_id, agent_name, &assembled.model_label);
        let stream = assembled
            .agent
            .prompt(line)
            .with_history(earlier)
            .run_id(run_id.clone())
            .max_turns(assembled.max_turns)
            .durable(store.clone())
            .stream();
        ending = drive(stream, &mut output).await;
        // The conversation goes on from what the store holds, whatever the run's ending.
        if let Ok(state) = store.load(&run_id).await {
            history = state.history;
        }
        if ending == Ending::Suspended {
            eprintln!("reins: the chat stops here until the waiting call is decided");
            break;
        }
    }
    Ok(ending)
}
