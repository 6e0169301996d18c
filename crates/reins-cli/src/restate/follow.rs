//! Runs on Restate from the terminal: start one, follow it until it answers or waits for a
//! person, show where it is, and decide about a waiting call. The same exit codes and JSON
//! events as runs on an embedded store.

use super::{client, explain, unknown};
use crate::approve::{parse_args, waiting_line};
use crate::command_editor::edit_in_editor;
use crate::config::LoadedAgent;
use crate::decide::ArgsChange;
use crate::interrupt::StopSignal;
use crate::run::Ending;
use reins::agent::ToolDecision;
use reins::text::printable;
use reins_restate::{
    ClientError, PendingDecision, RestateRuns, RunFailure, RunOutput, RunProgress,
};
use serde_json::{Value, json};
use std::time::Duration;

/// How often a followed run's status is read.
const POLL: Duration = Duration::from_millis(100);

/// How long a run id may stay unknown to the ingress while it is followed: the first reads
/// after a start may come before Restate has recorded the invocation.
const UNKNOWN_GRACE: Duration = Duration::from_secs(5);

/// Where a run is, read from the ingress.
enum Where {
    /// No invocation under this id (yet).
    Unknown,
    Running(Vec<String>),
    Waiting(Vec<String>, Vec<PendingDecision>),
    Done(Vec<String>, RunOutput),
    Failed(Vec<String>, String, Option<RunFailure>),
}

/// The message of a failed run's terminal error (the ingress answers with a JSON body).
fn failure_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|value| value["message"].as_str().map(str::to_owned))
        .unwrap_or_else(|| body.to_owned())
}

/// Where `run` is. Its output is read first and its progress last: a follower prints the
/// steps of the last read, so a step the run journals between the two reads is printed
/// in this poll, not in the next one (its steps read first would miss it, and a run still
/// going on prints nothing more until the next poll).
async fn locate(runs: &RestateRuns, run: &str) -> Result<Where, ClientError> {
    let output = runs.finished_output(run).await;
    let progress = match runs.status(run).await {
        Ok(progress) => progress,
        Err(ClientError::UnknownRun { .. }) => return Ok(Where::Unknown),
        Err(error) => return Err(error),
    };
    if !progress.pending.is_empty() {
        return Ok(Where::Waiting(progress.steps, progress.pending));
    }
    match output {
        Ok(Some(output)) => Ok(Where::Done(
            last_progress(runs, run, progress).await.steps,
            output,
        )),
        Ok(None) => Ok(Where::Running(progress.steps)),
        // `status` found the run: its invocation may just have been recorded.
        Err(ClientError::UnknownRun { .. }) => Ok(Where::Running(progress.steps)),
        Err(ClientError::Http { status, body }) if status >= 500 || status == 400 => {
            let read_first = progress.failure;
            let last = last_progress(runs, run, progress).await;
            Ok(Where::Failed(
                last.steps,
                failure_message(&body),
                last.failure.or(read_first),
            ))
        }
        Err(error) => Err(error),
    }
}

/// The progress of a run that has ended, read again: the ingress answers the two reads of
/// [`locate`] apart, and `progress` may lag behind the ending the output read saw (without
/// the last steps or, when it failed, why), while who follows the run must see every step
/// before its answer or error. When that read fails, `progress`.
async fn last_progress(runs: &RestateRuns, run: &str, progress: RunProgress) -> RunProgress {
    runs.status(run).await.unwrap_or(progress)
}

fn pending_json(pending: &[PendingDecision]) -> Vec<Value> {
    pending
        .iter()
        .map(|call| {
            let mut shown = json!({
                "call": call.call,
                "tool": call.tool,
                "args": call.arguments,
                "reason": call.reason,
            });
            // Only when so: a call a crash cut off, which approve runs again.
            if call.in_doubt {
                shown["in_doubt"] = json!(true);
            }
            shown
        })
        .collect()
}

/// Starts a run of `prompt` under `run_id`; says so like an embedded run does.
pub async fn start(
    agent: &LoadedAgent,
    url: &str,
    run_id: &str,
    prompt: &str,
    json_out: bool,
) -> Result<(), String> {
    let runs = client(agent, url)?;
    runs.start(run_id, prompt)
        .await
        .map_err(|error| explain(agent, url, &error))?;
    let model = crate::assemble::model_label(agent.file.model.get_ref());
    if json_out {
        outln!(
            "{}",
            json!({"event": "started", "run": run_id, "agent": agent.name(), "model": model})
        );
    } else {
        errln!(
            "reins: {run_id} ({}, {model}, on Restate at {})",
            agent.name(),
            super::shown(url)
        );
    }
    Ok(())
}

/// Follows `run_id` until it answers (exit 0), fails (1) or waits for a decision (3), printing
/// each journaled step as it appears; or until `stop` (Ctrl-C, SIGTERM: exit 130), which
/// stops only the following: the run goes on on its worker, and [`interrupted`] says how to
/// pick it up.
pub async fn follow(
    agent: &LoadedAgent,
    url: &str,
    run_id: &str,
    json_out: bool,
    stop: &StopSignal,
) -> Ending {
    match stop
        .unless_stopped(follow_to_end(agent, url, run_id, json_out))
        .await
    {
        Some(ending) => ending,
        None => interrupted(agent, url, run_id, json_out, true),
    }
}

/// Says that Ctrl-C or SIGTERM stopped this process, not the run on Restate: it goes on on
/// its worker (or, when the signal came while it was `started`, may have been started: the
/// call was sent), and who follows or decides it picks it up by its id. Like an embedded
/// run's interruption, the `interrupted` event with a `message`; the ending (exit 130).
pub fn interrupted(
    agent: &LoadedAgent,
    url: &str,
    run_id: &str,
    json_out: bool,
    started: bool,
) -> Ending {
    let file = crate::shell_word::path(&agent.path);
    let run = crate::shell_word::quoted(run_id);
    let url = super::shown(url);
    let message = if started {
        format!(
            "goes on on the Restate server at {url} (this process only followed it): follow it \
             again with `reins runs resume {file} {run}`, see where it is with `reins runs show \
             {file} {run}`"
        )
    } else {
        format!(
            "may have been started on the Restate server at {url} (the call was sent): `reins \
             runs show {file} {run}` says whether, and `reins runs resume {file} {run}` follows it"
        )
    };
    if json_out {
        outln!(
            "{}",
            json!({"event": "interrupted", "run": run_id, "message": format!("the run {message}")})
        );
    } else {
        errln!("reins: interrupted; run {run_id} {message}");
    }
    Ending::Interrupted
}

/// [`follow`], without a stop of its own.
async fn follow_to_end(agent: &LoadedAgent, url: &str, run_id: &str, json_out: bool) -> Ending {
    let runs = match client(agent, url) {
        Ok(runs) => runs,
        Err(error) => return report_error(run_id, &error, None, json_out),
    };
    let mut shown = 0;
    let started = std::time::Instant::now();
    loop {
        let place = match locate(&runs, run_id).await {
            Ok(place) => place,
            Err(error) => {
                return report_error(run_id, &explain(agent, url, &error), None, json_out);
            }
        };
        if matches!(place, Where::Unknown) {
            if started.elapsed() > UNKNOWN_GRACE {
                return report_error(run_id, &unknown(run_id, url), None, json_out);
            }
            tokio::time::sleep(POLL).await;
            continue;
        }
        let steps = match &place {
            Where::Unknown => &Vec::new(),
            Where::Running(steps)
            | Where::Waiting(steps, _)
            | Where::Done(steps, _)
            | Where::Failed(steps, ..) => steps,
        };
        for step in steps.iter().skip(shown) {
            if json_out {
                outln!("{}", json!({"event": "step", "run": run_id, "step": step}));
            } else {
                errln!("[step] {}", printable(&step.to_string()));
            }
        }
        shown = shown.max(steps.len());
        match place {
            Where::Unknown | Where::Running(_) => tokio::time::sleep(POLL).await,
            Where::Waiting(_, pending) => {
                if json_out {
                    let pending = pending_json(&pending);
                    outln!(
                        "{}",
                        json!({"event": "suspended", "run": run_id, "pending": pending})
                    );
                } else {
                    errln!(
                        "[suspended] run {run_id} waits for {} decision(s):",
                        pending.len()
                    );
                    let file = crate::shell_word::path(&agent.path);
                    for line in decide_lines(&file, run_id, &pending) {
                        errln!("{line}");
                    }
                    errln!("{}", crate::decide_commands::shown_in_full(&file, run_id));
                }
                return Ending::Suspended;
            }
            Where::Done(_, output) => {
                if json_out {
                    outln!(
                        "{}",
                        json!({
                            "event": "done",
                            "run": output.run_id,
                            "answer": output.answer,
                            "turns": output.turns,
                            "input_tokens": output.usage.input_tokens,
                            "output_tokens": output.usage.output_tokens,
                        })
                    );
                } else {
                    let mut answer = crate::run::AnswerText::for_stdout();
                    answer.print(&output.answer);
                    answer.end_line();
                    errln!(
                        "{}",
                        crate::run::done_line(&output.run_id, output.turns, &output.usage)
                    );
                }
                return Ending::Done;
            }
            Where::Failed(_, message, failure) => {
                return report_error(run_id, &message, failure, json_out);
            }
        }
    }
}

/// Reports a run that ended without an answer; a limit (turns, budget) exits as one, as an
/// embedded run does.
fn report_error(
    run_id: &str,
    message: &str,
    failure: Option<RunFailure>,
    json_out: bool,
) -> Ending {
    let (ending, kind) = match failure {
        Some(RunFailure::MaxTurns) => (Ending::Limit, "max_turns"),
        Some(RunFailure::Budget) => (Ending::Limit, "budget"),
        Some(RunFailure::Cancelled) => (Ending::Error, "cancelled"),
        _ => (Ending::Error, "error"),
    };
    if json_out {
        outln!(
            "{}",
            json!({"event": kind, "run": run_id, "message": message})
        );
    } else {
        errln!("reins: {}", printable(message));
    }
    ending
}

/// `reins runs show` on Restate: the run's state, journaled steps, waiting calls and answer.
pub async fn show(
    agent: &LoadedAgent,
    url: &str,
    run_id: &str,
    json_out: bool,
) -> Result<(), String> {
    let runs = client(agent, url)?;
    let place = locate(&runs, run_id)
        .await
        .map_err(|error| explain(agent, url, &error))?;
    let (status, steps, pending, answer, error) = match place {
        Where::Unknown => return Err(unknown(run_id, url)),
        Where::Running(steps) => ("running", steps, Vec::new(), None, None),
        Where::Waiting(steps, pending) => ("suspended", steps, pending, None, None),
        Where::Done(steps, output) => ("completed", steps, Vec::new(), Some(output), None),
        Where::Failed(steps, message, _) => ("failed", steps, Vec::new(), None, Some(message)),
    };
    if json_out {
        let mut value = json!({
            "run": run_id,
            "status": status,
            "agent": agent.name(),
            "steps": steps,
            "pending": pending_json(&pending),
        });
        if let Some(output) = &answer {
            value["answer"] = json!(output.answer);
            value["turns"] = json!(output.turns);
            value["input_tokens"] = json!(output.usage.input_tokens);
            value["output_tokens"] = json!(output.usage.output_tokens);
        }
        if let Some(message) = &error {
            value["error"] = json!(message);
        }
        outln!("{value}");
        return Ok(());
    }
    outln!(
        "run {run_id} — {status} on Restate, {} journaled step(s)",
        steps.len()
    );
    for step in &steps {
        outln!("step: {}", printable(&step.to_string()));
    }
    for call in &pending {
        outln!(
            "{}",
            waiting_line(
                &call.call,
                &call.tool,
                &call.arguments,
                crate::decide_commands::reason_above_commands(&call.reason),
                call.in_doubt
            )
        );
    }
    if !pending.is_empty() {
        let file = crate::shell_word::path(&agent.path);
        for line in decide_lines(&file, run_id, &pending) {
            outln!("{line}");
        }
    }
    if let Some(output) = answer {
        outln!("answer: {}", printable(&output.answer));
    }
    if let Some(message) = error {
        outln!("error: {}", printable(&message));
    }
    Ok(())
}

/// The commands that decide the calls `pending` of `run_id` (of the agent file `file`, one
/// shell word), which then continues on its worker.
fn decide_lines(file: &str, run_id: &str, pending: &[PendingDecision]) -> Vec<String> {
    use crate::decide_commands::{Then, Waiting, lines};
    let waiting: Vec<Waiting<'_>> = pending
        .iter()
        .map(|call| Waiting {
            call: &call.call,
            tool: &call.tool,
            in_doubt: call.in_doubt,
        })
        .collect();
    lines(file, run_id, &waiting, Then::OnItsWorker)
}

/// What `reins runs approve|deny|skip|supply` decides on Restate.
pub enum Verdict {
    /// Approve, with the arguments as the model made them or changed.
    Approve(ArgsChange),
    /// Deny; the model is told this message.
    Deny(Option<String>),
    /// Answer a call in doubt without running it again (refused for any other call).
    InDoubt(crate::in_doubt::Answer),
}

/// Decides about `call` (default: the run's only waiting call); the run then continues on
/// its worker by itself.
pub async fn decide(
    agent: &LoadedAgent,
    url: &str,
    run_id: &str,
    call: Option<String>,
    verdict: Verdict,
) -> Result<(), String> {
    let runs = client(agent, url)?;
    let mut pending = runs
        .status(run_id)
        .await
        .map_err(|error| explain(agent, url, &error))?
        .pending;
    let target = match call {
        Some(id) => match pending.iter().position(|waiting| waiting.call == id) {
            Some(index) => pending.swap_remove(index),
            None => {
                return Err(format!(
                    "run `{run_id}` has no call `{id}` waiting for a decision; {}",
                    crate::waiting_calls::waiting_instead(
                        pending.iter().map(|p| (p.call.as_str(), p.tool.as_str()))
                    )
                ));
            }
        },
        None => match pending.len() {
            0 => return Err(format!("run `{run_id}` has no call waiting for a decision")),
            1 => pending
                .into_iter()
                .next()
                .ok_or_else(|| "no waiting call".to_owned())?,
            n => {
                let ids: Vec<&str> = pending.iter().map(|p| p.call.as_str()).collect();
                return Err(format!(
                    "run `{run_id}` has {n} calls waiting: name one ({})",
                    ids.join(", ")
                ));
            }
        },
    };
    if matches!(verdict, Verdict::InDoubt(_)) && !target.in_doubt {
        return Err(crate::in_doubt::not_in_doubt(run_id, &target.call));
    }
    let edited = match &verdict {
        Verdict::Approve(ArgsChange::Given(text)) => Some(parse_args(text)?),
        Verdict::Approve(ArgsChange::Editor) => Some(edit_in_editor(&target.arguments).await?),
        Verdict::Approve(ArgsChange::None) | Verdict::Deny(_) | Verdict::InDoubt(_) => None,
    };
    let decision = match (verdict, edited) {
        (Verdict::InDoubt(answer), _) => answer.decision(),
        (Verdict::Deny(message), _) => {
            ToolDecision::deny(crate::approve::denial(message.as_deref()))
        }
        (Verdict::Approve(_), Some(args)) => {
            crate::edited_args::check(agent, &target.tool, &args).await?;
            ToolDecision::approve_with_args(args)
        }
        (Verdict::Approve(_), None) => ToolDecision::approve(),
    };
    runs.decide(run_id, &target.call, decision)
        .await
        .map_err(|error| explain(agent, url, &error))
}
