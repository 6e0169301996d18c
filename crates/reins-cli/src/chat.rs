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
use reins::hooks::approval::terminal;
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
    let run = crate::run_id::resolve(store, run, agent_file)
        .await
        .map_err(|error| early.fail(error, ExitCode::FAILURE))?;
    let state =
        crate::runs_command::own_run(store, agent_name, agent_file, &run, "chat on from", early)
            .await?;
    continuable(&state, agent_file).map_err(|error| early.fail(error, ExitCode::FAILURE))?;
    Ok(state)
}

/// `reins chat FILE --resume RUN`: the command that goes on with the conversation from `run`.
fn chat_on(agent_file: &std::path::Path, run: &str) -> String {
    format!(
        "`reins chat {} --resume {}`",
        crate::shell_word::path(agent_file),
        crate::shell_word::quoted(run)
    )
}

/// Runs the conversation until end of input, `/quit` or Ctrl-C (or SIGTERM), going on from
/// `resumed` (see [`resumed`]) if given. A line longer than 1 MiB is refused, nothing of it
/// sent, and the chat goes on with the next. Returns how the chat ended, for its exit code: done
/// at end of input or `/quit`, whatever the runs before did (each said how it ended);
/// interrupted by Ctrl-C, at the prompt as during a run; suspended when a run waits for a
/// decision (the chat stops there).
pub async fn chat(
    assembled: &Assembled,
    agent_name: &str,
    agent_file: &std::path::Path,
    store: BoxedStore,
    resumed: Option<RunState>,
) -> Ending {
    // The conversation's last run: the one to go on from in another process.
    let (mut history, mut conversation, mut last_run) = match resumed {
        Some(state) => {
            let conversation = state.conversation_id.unwrap_or(state.run_id.clone());
            (state.history, Some(conversation), Some(state.run_id))
        }
        None => (Vec::new(), None, None),
    };
    // One listener for the whole chat: a Ctrl-C between a run's end and the next prompt is
    // seen at that prompt, not lost while nothing listened.
    let stop = interrupt::StopSignal::listen();
    errln!(
        "reins: chat with {agent_name} ({}); /quit or end of input to stop",
        assembled.model_label
    );
    loop {
        crate::terminal_lines::open_line("you: ");
        // Ctrl-C no longer ends the process: here it ends the chat, as a shell expects of it
        // (exit 130).
        let line = tokio::select! {
            line = terminal::read_line_at_most(terminal::MAX_LINE_BYTES) => Some(line),
            () = stop.stopped() => None,
        };
        let Some(line) = line else {
            crate::terminal_lines::end_open_line();
            match &last_run {
                Some(run) => errln!(
                    "reins: interrupted; go on with the conversation with {}",
                    chat_on(agent_file, run)
                ),
                None => errln!("reins: interrupted"),
            }
            return Ending::Interrupted;
        };
        let Some(line) = line else {
            crate::terminal_lines::end_open_line();
            return Ending::Done;
        };
        crate::terminal_lines::input_read();
        let line = match line {
            terminal::Line::Text(line) => line,
            // Never held whole, so never sent in part: the person says it again, shorter.
            terminal::Line::TooLong { bytes } => {
                errln!(
                    "reins: nothing was sent: that message is {bytes} bytes, over the limit of \
                     {} bytes (1 MiB) for a message",
                    terminal::MAX_LINE_BYTES
                );
                continue;
            }
        };
        let line = line.trim();
        if line == "/quit" {
            return Ending::Done;
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
        let ending =
            interrupt::drive_until(stream, &mut output, &keeper, &run_id, stop.stopped()).await;
        if ending == Ending::Interrupted {
            errln!(
                "reins: once it has finished, go on with the conversation with {}",
                chat_on(agent_file, &run_id)
            );
            return ending;
        }
        // The conversation goes on from what the store holds, whatever the run's ending.
        match store.load(&run_id).await {
            Ok(state) => history = state.history,
            // Going on as if nothing happened would drop this exchange from the next
            // message's history without a word.
            Err(error) => errln!(
                "reins: warning: run {run_id} could not be read back from the store ({}): the \
                 next message goes on without this exchange",
                reins::text::printable(&error.to_string())
            ),
        }
        if ending == Ending::Suspended {
            errln!(
                "reins: the chat stops here until the waiting call is decided; then finish the \
                 run with `reins runs resume {} {}` and go on with the conversation with {}",
                crate::shell_word::path(agent_file),
                crate::shell_word::quoted(&run_id),
                chat_on(agent_file, &run_id)
            );
            return ending;
        }
        last_run = Some(run_id);
    }
}
