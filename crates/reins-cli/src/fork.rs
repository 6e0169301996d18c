//! `reins runs checkpoints|fork`: a run's checkpoints, and a new run forked from one of them
//! (through [`reins::store::fork`]), optionally with a waiting call's arguments changed. The
//! web inbox's fork button goes through [`fork_run`] too.

use crate::approve::parse_args;
use crate::config::LoadedAgent;
use crate::decide::ArgsChange;
use crate::runs::status_name;
use reins::agent::RunState;
use reins::message::{AssistantContent, Message, OneOrMany};
use reins::store::BoxedStore;
use reins::store::{Checkpoint, RunStore};
use serde_json::{Value, json};

/// How long ago `ms` (milliseconds since the Unix epoch) was, in its largest unit: `42s`,
/// `5m`, `3h`, `2d`.
pub fn age(ms: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let seconds = now.saturating_sub(ms).max(0) / 1000;
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

/// A checkpoint as listed.
pub fn checkpoint_json(checkpoint: &Checkpoint) -> Value {
    json!({
        "version": checkpoint.version,
        "status": status_name(checkpoint.status),
        "journal_len": checkpoint.journal_len,
        "created_at_ms": checkpoint.created_at_ms,
    })
}

/// `reins runs checkpoints`: every checkpoint of the run, oldest first.
pub async fn checkpoints(store: &BoxedStore, run_id: &str, json_lines: bool) -> Result<(), String> {
    let checkpoints = store
        .checkpoints(run_id)
        .await
        .map_err(|error| error.to_string())?;
    if !json_lines {
        outln!(
            "{:>7}  {:<10} {:>7}  WRITTEN",
            "VERSION",
            "STATUS",
            "JOURNAL"
        );
    }
    for checkpoint in &checkpoints {
        if json_lines {
            outln!("{}", checkpoint_json(checkpoint));
        } else {
            outln!(
                "{:>7}  {:<10} {:>7}  {} ago",
                checkpoint.version,
                status_name(checkpoint.status),
                checkpoint.journal_len,
                age(checkpoint.created_at_ms)
            );
        }
    }
    Ok(())
}

/// What a fork changes in the checkpoint's state.
pub struct ForkEdit {
    /// The waiting call to change (default: the checkpoint's only waiting call).
    pub call: Option<String>,
    /// Its new arguments.
    pub change: ArgsChange,
}

/// Forks `run_id` at checkpoint `at` (default: its latest) into a new run and returns the
/// new run's state. With an edit, the waiting call runs with the new arguments, and the
/// model's call in the history shows them too, so the two never disagree; as a decision's,
/// they must fit the tool's schema where `agent`'s file gives it (`edited_args`).
pub async fn fork_run(
    store: &BoxedStore,
    agent: &LoadedAgent,
    run_id: &str,
    at: Option<i64>,
    edit: ForkEdit,
) -> Result<RunState, String> {
    let version = match at {
        Some(version) => version,
        None => store
            .checkpoints(run_id)
            .await
            .map_err(|error| error.to_string())?
            .last()
            .map(|checkpoint| checkpoint.version)
            .ok_or_else(|| format!("run `{run_id}` has no checkpoint"))?,
    };
    let new_arguments = match edit.change {
        ArgsChange::None => None,
        change => {
            let state = store
                .load_checkpoint(run_id, version)
                .await
                .map_err(|error| error.to_string())?;
            let (call_id, tool, arguments) = waiting_call(&state, edit.call.as_deref(), version)?;
            let arguments = match change {
                ArgsChange::Given(text) => parse_args(&text)?,
                ArgsChange::Editor => crate::command_editor::edit_in_editor(&arguments).await?,
                ArgsChange::None => arguments,
            };
            crate::edited_args::check(agent, &tool, &arguments).await?;
            Some((call_id, arguments))
        }
    };
    let new_run_id = crate::run::new_run_id();
    reins::store::fork(store, run_id, version, &new_run_id, |state| {
        if let Some((call_id, arguments)) = new_arguments {
            set_arguments(state, &call_id, arguments);
        }
    })
    .await
    .map_err(|error| error.to_string())
}

/// The waiting call `call` (or the only one) of a checkpoint: its id, tool and arguments.
fn waiting_call(
    state: &RunState,
    call: Option<&str>,
    version: i64,
) -> Result<(String, String, Value), String> {
    let waiting: Vec<_> = state
        .pending_calls
        .iter()
        .filter(|pending| pending.awaits_decision())
        .collect();
    let found = match call {
        Some(id) => waiting
            .iter()
            .find(|pending| pending.internal_call_id == id),
        None if waiting.len() == 1 => waiting.first(),
        None if waiting.is_empty() => None,
        None => {
            return Err(format!(
                "checkpoint {version} has {} calls waiting: name one with --call ({})",
                waiting.len(),
                waiting
                    .iter()
                    .map(|p| p.internal_call_id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    };
    found
        .map(|pending| {
            (
                pending.internal_call_id.clone(),
                pending.call.name.clone(),
                pending.arguments().clone(),
            )
        })
        .ok_or_else(|| match call {
            Some(id) => format!(
                "checkpoint {version} has no call `{id}` waiting for a decision; {}",
                crate::waiting_calls::waiting_instead(
                    waiting
                        .iter()
                        .map(|p| (p.internal_call_id.as_str(), p.call.name.as_str()))
                )
            ),
            None => format!(
                "checkpoint {version} has no call waiting for a decision: there are no \
                 arguments to change (fork without --args/--edit, or pick another --at)"
            ),
        })
}

/// Gives the waiting call `call_id` new arguments, in the pending call and in the model's
/// message that made it.
fn set_arguments(state: &mut RunState, call_id: &str, arguments: Value) {
    let Some(pending) = state
        .pending_calls
        .iter_mut()
        .find(|pending| pending.internal_call_id == call_id)
    else {
        return;
    };
    let provider_id = pending.call.id.clone();
    pending.call.arguments = arguments.clone();
    if pending.started.is_some() {
        pending.started = Some(arguments.clone());
    }
    for message in state.history.iter_mut().rev() {
        if let Message::Assistant { content } = message
            && content.iter().any(|part| is_call(part, &provider_id))
        {
            // `OneOrMany` has no `iter_mut`: rebuild the message's parts.
            let parts = content.clone().into_iter().map(|part| match part {
                AssistantContent::ToolCall(mut call) if call.id == provider_id => {
                    call.arguments = arguments.clone();
                    AssistantContent::ToolCall(call)
                }
                other => other,
            });
            if let Some(parts) = OneOrMany::many(parts) {
                *content = parts;
            }
            return;
        }
    }
}

fn is_call(part: &AssistantContent, provider_id: &str) -> bool {
    matches!(part, AssistantContent::ToolCall(call) if call.id == provider_id)
}
