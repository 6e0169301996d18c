//! `reins chat`: a conversation in the terminal. Each message is one durable run in the
//! agent's store that starts from the previous run's history, so `--resume RUN` picks a
//! conversation up where it stopped, in another process. Every run of a conversation names
//! it (`conversation_id`: the first run's id), so traces group them as one session.

mod history;

use crate::assemble::Assembled;
use crate::interrupt;
use crate::lease_keeper::{self, LeaseKeeper};
use crate::run::{Ending, Output, new_run_id};
use reins::agent::{RunState, RunStatus};
use reins::store::BoxedStore;
use reins::store::RunStore;
use std::process::ExitCode;

/// Whether a conversation can go on from `state`: not from a run that has not finished (it
/// would be copied with its unanswered calls, and the run itself left waiting). A run that
/// ended with calls unanswered can: they are answered as having no result
/// ([`history::carried_on`]), as when the conversation goes on in the same process.
fn continuable(state: &RunState, agent_file: &std::path::Path) -> Result<(), String> {
    let run = &state.run_id;
    let resume = || {
        format!(
            "`reins runs resume {} {}`",
            crate::shell_word::path(agent_file),
            crate::shell_word::quoted(run)
        )
    };
    match state.status {
        RunStatus::Suspended => Err(format!(
            "run `{run}` waits for a decision: decide its call (`reins runs show` lists it), \
             finish it with {}, then chat on from it",
            resume()
        )),
        RunStatus::Running => Err(format!(
            "run `{run}` has not finished: finish it with {}, then chat on from it",
            resume()
        )),
        _ => Ok(()),
    }
}

/// The run `--resume` names, when the conversation can go on from it: a run of this agent
/// (`agent_name`, of `agent_file`) that has finished. Agents beside each other share the
/// default store, and another agent's conversation would go on with this file's model, tools
/// and preamble: refused as `reins runs resume` refuses it (exit 2). Read before the agent
/// is assembled, so that a run that cannot go on is said before MCP servers start or a
/// local model loads. Said on stderr; the exit code.
pub async fn resumed(
    store: &BoxedStore,
    agent_name: &str,
    agent_file: &std::path::Path,
    run: &str,
) -> Result<RunState, ExitCode> {
    let early = crate::early::Early::text();
    let state = store
        .load(run)
        .await
        .map_err(|error| early.fail(error, ExitCode::FAILURE))?;
    if let Some(owner) = &state.agent_name
        && owner != agent_name
    {
        return Err(early.invalid(format!(
            "`{run}` is a run of the agent `{owner}`, not `{agent_name}` ({}): chat on from it \
             with the agent file of `{owner}`",
            agent_file.display()
        )));
    }
    continuable(&state, agent_file).map_err(|error| early.fail(error, ExitCode::FAILURE))?;
    Ok(state)
}

/// Runs the conversation until end of input (or `/quit`), going on from `resumed` (see
/// [`resumed`]) if given. Returns how the last run ended.
pub async fn chat(
    assembled: &Assembled,
    agent_name: &str,
    agent_file: &std::path::Path,
    store: BoxedStore,
    resumed: Option<RunState>,
) -> Ending {
    let (mut history, mut conversation) = match resumed {
        Some(state) => {
            let conversation = state.conversation_id.unwrap_or(state.run_id);
            (state.history, Some(conversation))
        }
        None => (Vec::new(), None),
    };
    let mut ending = Ending::Done;
    errln!(
        "reins: chat with {agent_name} ({}); /quit or end of input to stop",
        assembled.model_label
    );
    loop {
        crate::terminal_lines::open_line("you: ");
        // Once a run has listened for Ctrl-C, it no longer ends the process: here it ends
        // the chat, as end of input does.
        let line = tokio::select! {
            line = reins::hooks::approval::terminal::read_line() => line,
            () = interrupt::stopped() => None,
        };
        let Some(line) = line else {
            crate::terminal_lines::end_open_line();
            break;
        };
        crate::terminal_lines::input_read();
        let line = line.trim();
        if line == "/quit" {
            break;
        }
        if line.is_empty() {
            continue;
        }
        let run_id = new_run_id();
        let conversation_id = conversation.get_or_insert_with(|| run_id.clone()).clone();
        let earlier = history::carried_on(&history);
        let mut output = Output::new(false).agent_file(agent_file);
        output.started(&run_id, agent_name, &assembled.model_label);
        let keeper = LeaseKeeper::new(store.clone());
        assembled.decisions.keep_in(&keeper);
        let stream = assembled
            .agent
            .prompt(line)
            .with_history(earlier)
            .run_id(run_id.clone())
            .conversation_id(conversation_id)
            .max_turns(assembled.max_turns)
            .durable(keeper.clone())
            .worker(lease_keeper::worker_name("chat"))
            .stream();
        ending = interrupt::drive(stream, &mut output, &keeper, &run_id).await;
        if ending == Ending::Interrupted {
            break;
        }
        // The conversation goes on from what the store holds, whatever the run's ending.
        if let Ok(state) = store.load(&run_id).await {
            history = state.history;
        }
        if ending == Ending::Suspended {
            errln!("reins: the chat stops here until the waiting call is decided");
            break;
        }
    }
    ending
}
