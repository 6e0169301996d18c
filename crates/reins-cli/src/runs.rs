//! `reins runs list|show` (`approve|deny|edit` are in [`crate::decide`], `checkpoints|fork`
//! in [`crate::fork`]): the runs in an agent's store, their timelines and the calls that wait
//! for a person.

mod list;

pub use list::list;

use crate::approve::waiting_line;
use crate::decide_commands::{Then, Waiting, resume_command, resume_invocation};
use crate::lease_keeper::holder_is_gone;
use reins::agent::{RunState, RunStatus};
use reins::completion::Usage;
use reins::message::{AssistantContent, Message};
use reins::store::BoxedStore;
use reins::store::{LeaseHolder, PendingApproval, RunCursor, RunQuery, RunStore, RunSummary};
use reins::text::printable;
use serde_json::{Value, json};

/// The model a run used: its last model's label, with the agent's own model (registered as
/// `default`) shown as `provider/name`.
pub fn model_shown(state: &RunState, own_model: &str) -> String {
    match state.last_model.as_deref() {
        None => "-".to_owned(),
        Some(crate::config::DEFAULT_LABEL) => own_model.to_owned(),
        Some(label) => label.to_owned(),
    }
}

/// The tokens a run read and wrote, together. Saturating: the counts are what the provider
/// reported, and a hostile one can report any number (an overflow would panic a debug build
/// and wrap to nonsense in a release one).
pub fn tokens(usage: &Usage) -> u64 {
    usage.input_tokens.saturating_add(usage.output_tokens)
}

/// A run as listed: what people look at first, and who drives it (`lease`).
pub fn summary(state: &RunState, lease: Option<&LeaseHolder>, own_model: &str) -> Value {
    json!({
        "run": state.run_id,
        "status": status_name(state.status),
        "agent": state.agent_name,
        "model": model_shown(state, own_model),
        "turns": state.turn,
        "input_tokens": state.usage.input_tokens,
        "output_tokens": state.usage.output_tokens,
        "conversation": state.conversation_id,
        "lease": lease.map(|lease| json!({
            "owner": lease.owner,
            "expires_at": crate::trail::utc_time(lease.expires_at_ms),
            "expires_at_ms": lease.expires_at_ms,
            "owner_gone": holder_is_gone(&lease.owner),
        })),
    })
}

/// Adds when a run was created to its [`summary`].
fn with_creation(summary: &mut Value, created_at_ms: i64) {
    summary["created_at"] = json!(crate::trail::utc_time(created_at_ms));
    summary["created_at_ms"] = json!(created_at_ms);
}

/// Who drives a run, in words: the worker holding its lease and until when; a running run
/// nobody holds was left (stopped, or its process died) and a resume takes it at once.
pub fn lease_shown(status: RunStatus, lease: Option<&LeaseHolder>) -> String {
    match lease {
        Some(lease) => format!(
            "driven by {} until {}",
            lease.owner,
            crate::trail::utc_time(lease.expires_at_ms)
        ),
        None if status == RunStatus::Running => "left (resumable)".to_owned(),
        None => "-".to_owned(),
    }
}

/// Who drives a listed run, as [`lease_shown`] says it; of a holder whose process is gone
/// ([`holder_is_gone`]: its lease holds the run for nobody), also that a resume takes the run
/// over at once, as `runs show` says.
fn listed_lease_shown(
    state: &RunState,
    lease: Option<&LeaseHolder>,
    agent_file: &std::path::Path,
) -> String {
    let shown = lease_shown(state.status, lease);
    match lease {
        Some(held) if holder_is_gone(&held.owner) => format!(
            "{shown}, whose process died: {} takes the run over",
            resume_invocation(agent_file, &state.run_id)
        ),
        _ => shown,
    }
}

/// The word for a status.
pub fn status_name(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Running => "running",
        RunStatus::Suspended => "suspended",
        RunStatus::Completed => "completed",
        RunStatus::Failed => "failed",
    }
}

/// Why `state` failed, when it did: the error it ended with, or what to say about a failed
/// run stored without one.
pub fn failure_shown(state: &RunState) -> Option<&str> {
    (state.status == RunStatus::Failed).then(|| {
        state
            .failure
            .as_deref()
            .unwrap_or("(no reason recorded: the run was stored by a release that did not keep it)")
    })
}

/// A stored run as listed: its state, and who holds its lease as it was listed.
pub struct ListedRun {
    /// The run's state.
    pub state: RunState,
    /// The worker driving it, and until when ([`reins::store::RunSummary::lease`]).
    pub lease: Option<LeaseHolder>,
    /// When it was created, in milliseconds since the Unix epoch
    /// ([`reins::store::RunSummary::created_at_ms`]).
    pub created_at_ms: i64,
}

/// A stored run this release cannot read (a newer release's format, a status it does not
/// know, a state it cannot decode): listed by id with why, never left out.
pub struct UnreadableListed {
    /// The run's id.
    pub run_id: String,
    /// Why it cannot be read.
    pub reason: String,
}

/// Every run of the store: those it can read, the last written last, then those it cannot,
/// in the order of their ids. Read a page at a time ([`RunStore::list_runs`]), so one record
/// that cannot be read is listed with its reason instead of failing the whole listing.
pub async fn listed_runs(
    store: &BoxedStore,
) -> Result<Vec<Result<ListedRun, UnreadableListed>>, String> {
    let failed = |error: reins::store::StoreError| error.to_string();
    let mut read = Vec::new();
    let mut unreadable = Vec::new();
    let mut query = RunQuery::new();
    loop {
        let page = store.list_runs(&query).await.map_err(failed)?;
        unreadable.extend(page.unreadable.into_iter().map(|run| UnreadableListed {
            reason: run.error.to_string(),
            run_id: run.run_id,
        }));
        for run in page.runs {
            match store.load(&run.run_id).await {
                // The stores list by id; people read runs in the order they were written.
                Ok(state) => read.push((
                    run.updated_at_ms,
                    ListedRun {
                        state,
                        lease: run.lease,
                        created_at_ms: run.created_at_ms,
                    },
                )),
                Err(error) => unreadable.push(UnreadableListed {
                    run_id: run.run_id,
                    reason: error.to_string(),
                }),
            }
        }
        match page.next {
            Some(next) => query = query.after(next),
            None => break,
        }
    }
    // Stable: runs written in the same millisecond stay in id order.
    read.sort_by_key(|(written_ms, _)| *written_ms);
    unreadable.sort_by(|a, b| a.run_id.cmp(&b.run_id));
    Ok(read
        .into_iter()
        .map(|(_, run)| Ok(run))
        .chain(unreadable.into_iter().map(Err))
        .collect())
}

/// Who holds the lease of `run_id` now (`None`: nobody, or no such run).
pub async fn lease_of(store: &BoxedStore, run_id: &str) -> Result<Option<LeaseHolder>, String> {
    Ok(summary_of(store, run_id).await?.and_then(|run| run.lease))
}

/// The summary of `run_id` as listed now (`None`: no such run, or one this release cannot
/// read). Read from the pages of runs in id order that start just before it (after its id
/// less its last character), so another run whose record cannot be read does not hide it.
pub async fn summary_of(store: &BoxedStore, run_id: &str) -> Result<Option<RunSummary>, String> {
    let mut before = run_id.to_owned();
    before.pop();
    let mut query = RunQuery::new().after(RunCursor::new(before));
    loop {
        let page = store
            .list_runs(&query)
            .await
            .map_err(|error| error.to_string())?;
        if let Some(run) = page.runs.into_iter().find(|run| run.run_id == run_id) {
            return Ok(Some(run));
        }
        match page.next {
            // Ids are listed in byte order, as `str` compares them.
            Some(next) if next.as_str() < run_id => query = query.after(next),
            _ => return Ok(None),
        }
    }
}

/// One step of a run's timeline, for `runs show` and the web inbox.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A message from the user (or the system prompt).
    User(String),
    /// The model's text.
    Assistant(String),
    /// A tool call the model made.
    Call {
        /// The tool.
        tool: String,
        /// Its arguments.
        args: Value,
    },
    /// A record a hook kept (an approval verdict, the budget's counts, ...).
    Hook {
        /// The record's kind.
        kind: String,
        /// Its value.
        value: Value,
    },
    /// A tool's result.
    Result {
        /// The tool.
        tool: String,
        /// What the model saw.
        output: String,
    },
}

/// The history of a run as timeline steps (the system prompt left out).
pub fn timeline(state: &RunState) -> Vec<Step> {
    let mut steps = Vec::new();
    for message in &state.history {
        match message {
            Message::System { .. } => {}
            Message::User { content } => steps.push(Step::User(content.clone())),
            Message::Assistant { content } => {
                for part in content.iter() {
                    match part {
                        AssistantContent::Text(text) if !text.text.is_empty() => {
                            steps.push(Step::Assistant(text.text.clone()));
                        }
                        AssistantContent::ToolCall(call) => steps.push(Step::Call {
                            tool: call.name.clone(),
                            args: call.arguments.clone(),
                        }),
                        _ => {}
                    }
                }
            }
            Message::Tool(result) => steps.push(Step::Result {
                tool: result.tool_name.clone(),
                output: result.content.clone(),
            }),
        }
    }
    // Entries carry no position in the history: they follow it, oldest first.
    steps.extend(state.entries.iter().map(|entry| Step::Hook {
        kind: entry.kind.clone(),
        value: entry.value.clone(),
    }));
    steps
}

/// `reins runs show`.
pub async fn show(
    store: &BoxedStore,
    agent_file: &std::path::Path,
    run_id: &str,
    json_out: bool,
    own_model: &str,
) -> Result<(), String> {
    let state = store
        .load(run_id)
        .await
        .map_err(|error| error.to_string())?;
    let pending = pending_of(store, run_id).await?;
    let decisions = store
        .decisions(run_id)
        .await
        .map_err(|error| error.to_string())?;
    let listed = summary_of(store, run_id).await?;
    let lease = listed.as_ref().and_then(|run| run.lease.clone());
    let trail = crate::trail::views(&state, &decisions);
    if json_out {
        let mut value = summary(&state, lease.as_ref(), own_model);
        if let Some(run) = &listed {
            with_creation(&mut value, run.created_at_ms);
        }
        if let Some(failure) = &state.failure {
            value["failure"] = json!(failure);
        }
        value["history"] = serde_json::to_value(&state.history).unwrap_or(Value::Null);
        value["pending"] = pending
            .iter()
            .map(|p| {
                let mut shown = json!({"call": p.internal_call_id, "tool": p.tool_name, "args": p.arguments, "reason": p.reason});
                // Only when so, as on Restate: a call a stopped run may have run.
                if p.in_doubt {
                    shown["in_doubt"] = json!(true);
                }
                shown
            })
            .collect();
        value["decisions"] = trail
            .iter()
            .map(crate::trail::DecisionView::to_json)
            .collect();
        outln!("{value}");
        return Ok(());
    }
    outln!(
        "run {} — {}, {} turn(s), model {}",
        state.run_id,
        status_name(state.status),
        state.turn,
        model_shown(&state, own_model)
    );
    // A run's text is the model's, its tools' and its servers': shown, never acted on.
    let show = |line: String| outln!("{}", printable(&line));
    if let Some(failure) = failure_shown(&state) {
        show(format!("failed: {failure}"));
    }
    for step in timeline(&state) {
        show(match step {
            Step::User(text) => format!("user: {text}"),
            Step::Assistant(text) => format!("assistant: {text}"),
            Step::Call { tool, args } => format!("call: {tool} {args}"),
            Step::Result { tool, output } => format!("result of {tool}: {output}"),
            Step::Hook { kind, value } => format!("hook record {kind}: {value}"),
        });
    }
    for decision in &trail {
        show(format!(
            "decision: {} {} by {} at {}{}",
            crate::trail::about(decision),
            decision.verdict,
            decision.decided_by,
            decision.decided_at,
            decision
                .reason
                .as_deref()
                .map_or_else(String::new, |reason| format!(" — because {reason}")),
        ));
        // The digest alone tells a person nothing (`--json` has it): the arguments, when the
        // run still holds the call.
        if let Some(bound) = &decision.bound_arguments {
            show(format!("  bound to the arguments {bound}"));
        }
        if let Some(new) = &decision.new_arguments {
            show(format!("  ran with {new}"));
        }
        if decision.replaced {
            outln!("  replaced by a later decision about the call");
        }
    }
    for call in &pending {
        outln!(
            "{}",
            waiting_line(
                &call.internal_call_id,
                &call.tool_name,
                &call.arguments,
                crate::decide_commands::reason_above_commands(&call.reason),
                call.in_doubt
            )
        );
    }
    if !pending.is_empty() {
        let waiting: Vec<Waiting<'_>> = pending
            .iter()
            .map(|call| Waiting {
                call: &call.internal_call_id,
                tool: &call.tool_name,
                in_doubt: call.in_doubt,
            })
            .collect();
        let agent = crate::shell_word::path(agent_file);
        for line in crate::decide_commands::lines(&agent, run_id, &waiting, Then::Resume) {
            outln!("{line}");
        }
    }
    if pending.is_empty() && state.status == RunStatus::Suspended {
        // Every call is decided, nothing runs them until the run is resumed.
        outln!(
            "every waiting call is decided: {}",
            resume_command(agent_file, run_id)
        );
    }
    match &lease {
        Some(held) if holder_is_gone(&held.owner) => show(format!(
            "{}, which is no longer running: {} (taking it over)",
            lease_shown(state.status, lease.as_ref()),
            resume_command(agent_file, run_id)
        )),
        // A worker's name is whatever the program that claimed the run called it.
        Some(_) => show(format!(
            "{}: a resume before then is refused as busy; if that process died, {} once its \
             lease runs out (at once, if it ran on this machine, in this container, since the \
             machine last started)",
            lease_shown(state.status, lease.as_ref()),
            resume_command(agent_file, run_id)
        )),
        None if state.status == RunStatus::Running => outln!(
            "left: no process drives it (it was stopped, or its process died and its lease \
             ran out); {}",
            resume_command(agent_file, run_id)
        ),
        None => {}
    }
    Ok(())
}

/// The calls of `run_id` that wait for a decision.
pub async fn pending_of(store: &BoxedStore, run_id: &str) -> Result<Vec<PendingApproval>, String> {
    let listing = store
        .pending_approvals()
        .await
        .map_err(|error| error.to_string())?;
    Ok(listing
        .approvals
        .into_iter()
        .filter(|call| call.run_id == run_id)
        .collect())
}

#[cfg(test)]
mod tests;
