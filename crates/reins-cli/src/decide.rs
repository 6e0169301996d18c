//! `reins runs approve|deny|edit|skip|supply`: decisions about the calls of a run that wait
//! for a person (`skip` and `supply` only about a call in doubt, see [`crate::in_doubt`]).
//! They go through [`RunStore::decide`], as the web inbox's do; a call that does not wait is
//! refused with why (decided already, not a call of the run, a run that is not suspended).

use crate::approve::{denial, parse_args};
use crate::config::LoadedAgent;
use crate::decided_by::decided_by;
use crate::runs::{pending_of, status_name};
use reins::agent::RunState;
use reins::agent::ToolDecision;
use reins::store::BoxedStore;
use reins::store::{Decision, PendingApproval, RecordedDecision, RunStore, StoreError};

/// What a decision about a call decided already (and waiting for the run to resume) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decided {
    /// It is refused, saying what was decided and how the run continues.
    Refuse,
    /// It is refused as with [`Refuse`](Decided::Refuse), naming `--change`.
    RefuseNamingChange,
    /// It replaces the decision: until the run resumes, a person may change their mind (the
    /// trail keeps both decisions).
    Replace,
}

impl Decided {
    /// [`Replace`](Decided::Replace) with `--change`, else
    /// [`RefuseNamingChange`](Decided::RefuseNamingChange).
    pub fn from_flag(change: bool) -> Decided {
        match change {
            true => Decided::Replace,
            false => Decided::RefuseNamingChange,
        }
    }
}

/// The call a decision is about: `call` if given, else the run's only waiting call.
/// `continues` says how the run goes on once its calls are decided (the command that
/// resumes it, or the inbox's button): a call decided already is refused with what was
/// decided, and that, unless `decided` is [`Decided::Replace`].
pub async fn target_call(
    store: &BoxedStore,
    run_id: &str,
    call: Option<String>,
    continues: &str,
    decided: Decided,
) -> Result<PendingApproval, String> {
    let mut pending = pending_of(store, run_id).await?;
    let waiting = pending.len();
    if decided == Decided::Replace {
        pending.extend(decided_calls(store, run_id).await?);
    }
    let index = match &call {
        Some(id) => pending.iter().position(|p| p.internal_call_id == *id),
        None if pending.len() == 1 => Some(0),
        None if pending.is_empty() => None,
        None => {
            return Err(format!(
                "run `{run_id}` has {} calls {}: name one ({})",
                pending.len(),
                if pending.len() == waiting {
                    "waiting"
                } else {
                    "waiting or decided"
                },
                pending
                    .iter()
                    .map(|p| p.internal_call_id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    };
    match index {
        Some(index) => Ok(pending.swap_remove(index)),
        None => {
            let change = decided == Decided::RefuseNamingChange;
            let waiting = &pending[..waiting];
            Err(not_waiting(store, run_id, call.as_deref(), waiting, continues, change).await?)
        }
    }
}

/// The stored state of `run_id` and every decision recorded about it.
async fn state_and_decisions(
    store: &BoxedStore,
    run_id: &str,
) -> Result<(RunState, Vec<RecordedDecision>), String> {
    let state = store
        .load(run_id)
        .await
        .map_err(|error| error.to_string())?;
    let recorded = store
        .decisions(run_id)
        .await
        .map_err(|error| error.to_string())?;
    Ok((state, recorded))
}

/// The calls of `run_id` decided already and waiting for the run to resume, each bound as its
/// decision is: a new decision bound so replaces it, as long as the call stands as it did.
async fn decided_calls(store: &BoxedStore, run_id: &str) -> Result<Vec<PendingApproval>, String> {
    let (state, recorded) = state_and_decisions(store, run_id).await?;
    Ok(crate::trail::awaiting_resume(&state, &recorded)
        .into_iter()
        .filter_map(|decided| {
            let id = &decided.decision.internal_call_id;
            let call = state
                .pending_calls
                .iter()
                .find(|call| call.internal_call_id == *id)?;
            Some(PendingApproval {
                run_id: run_id.to_owned(),
                internal_call_id: id.clone(),
                tool_name: call.call.name.clone(),
                arguments: call.arguments().clone(),
                reason: call.suspended.clone().unwrap_or_default(),
                binding: decided.decision.binding.clone(),
                in_doubt: call.is_in_doubt(),
            })
        })
        .collect())
}

/// `bound`, with `--change` ([`Decided::Replace`]) naming the decision that stands about its
/// call as the one it replaces: the store replaces only a decision a new one names, and
/// refuses it once another replaced that one meanwhile.
async fn replacing_standing(
    store: &BoxedStore,
    run_id: &str,
    who: &Who,
    bound: Decision,
) -> Result<Decision, String> {
    if who.decided != Decided::Replace {
        return Ok(bound);
    }
    let (state, recorded) = state_and_decisions(store, run_id).await?;
    let standing = crate::trail::awaiting_resume(&state, &recorded)
        .into_iter()
        .find(|decided| decided.decision.internal_call_id == bound.internal_call_id);
    Ok(match standing {
        Some(standing) => bound.replacing(standing),
        None => bound,
    })
}

/// Why no waiting call of `run_id` is `call` (or, without one, why none waits). A call
/// decided already is a different mistake from a call id or a run id that is wrong, or a run
/// that is not suspended: each is said as it is (with `--change`, which replaces a decision,
/// when `change`).
async fn not_waiting(
    store: &BoxedStore,
    run_id: &str,
    call: Option<&str>,
    pending: &[PendingApproval],
    continues: &str,
    change: bool,
) -> Result<String, String> {
    let (state, recorded) = state_and_decisions(store, run_id).await?;
    let decided = crate::trail::awaiting_resume(&state, &recorded);
    let about = decided
        .iter()
        .filter(|d| call.is_none_or(|id| d.decision.internal_call_id == id))
        .map(|d| crate::trail::decided_already(&state, d))
        .collect::<Vec<_>>();
    // Calls of the run still waiting: it goes on once they are decided, not yet.
    let then = match pending {
        [] => continues.to_owned(),
        _ => format!(
            "{} still wait(s) for a decision",
            pending
                .iter()
                .map(|p| format!("`{}`", p.internal_call_id))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let then = match change {
        true => format!("{then} (`--change` replaces a decision until then)"),
        false => then,
    };
    Ok(match (call, about.as_slice()) {
        (_, [one]) => format!("{one}; {then}"),
        (None, [_, ..]) => format!(
            "every waiting call of run `{run_id}` is already decided ({}); {then}",
            decided
                .iter()
                .map(|d| format!("`{}`", d.decision.internal_call_id))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        (Some(id), _) => format!(
            "run `{run_id}` has no call `{id}` waiting for a decision; {}",
            crate::waiting_calls::waiting_instead(
                pending
                    .iter()
                    .map(|p| (p.internal_call_id.as_str(), p.tool_name.as_str()))
            )
        ),
        (None, []) => format!(
            "run `{run_id}` has no call waiting for a decision (its status: {})",
            status_name(state.status)
        ),
    })
}

/// How `reins runs approve` changes the arguments, if at all.
pub enum ArgsChange {
    /// Run the call as the model made it.
    None,
    /// These arguments (JSON text).
    Given(String),
    /// Edit them in `$EDITOR`.
    Editor,
}

impl ArgsChange {
    /// From `--args JSON` and `--edit` (clap makes them exclusive).
    pub fn from_flags(args: Option<String>, edit: bool) -> ArgsChange {
        match (args, edit) {
            (Some(args), _) => ArgsChange::Given(args),
            (None, true) => ArgsChange::Editor,
            (None, false) => ArgsChange::None,
        }
    }
}

/// `reins runs approve`: records the decision (run it with `runs resume`, which `continues`
/// names, see [`target_call`]). Changed arguments must fit the tool's schema where `agent`'s
/// file gives it.
pub async fn approve(
    store: &BoxedStore,
    agent: &LoadedAgent,
    target: (&str, Option<String>),
    change: ArgsChange,
    who: &Who,
    continues: &str,
) -> Result<ToolDecision, String> {
    let (run_id, call) = target;
    let target = target_call(store, run_id, call, continues, who.decided).await?;
    let args = match change {
        ArgsChange::None => None,
        ArgsChange::Given(text) => Some(parse_args(&text)?),
        ArgsChange::Editor => Some(crate::command_editor::edit_in_editor(&target.arguments).await?),
    };
    let decision = match args {
        None => ToolDecision::approve(),
        Some(args) => {
            crate::edited_args::check(agent, &target.tool_name, &args).await?;
            ToolDecision::approve_with_args(args)
        }
    };
    let bound = who.decision(&target, decision.clone(), "reins runs approve");
    let bound = replacing_standing(store, run_id, who, bound).await?;
    store
        .decide(run_id, &bound)
        .await
        .map_err(|error| error.to_string())?;
    Ok(decision)
}

/// `reins runs deny` (`continues` as for [`approve`]).
pub async fn deny(
    store: &BoxedStore,
    run_id: &str,
    call: Option<String>,
    message: Option<String>,
    who: &Who,
    continues: &str,
) -> Result<(), String> {
    let target = target_call(store, run_id, call, continues, who.decided).await?;
    let decision = ToolDecision::deny(denial(message.as_deref()));
    let bound = who.decision(&target, decision, "reins runs deny");
    let bound = replacing_standing(store, run_id, who, bound).await?;
    store
        .decide(run_id, &bound)
        .await
        .map(drop)
        .map_err(|error| error.to_string())
}

/// `reins runs skip|supply` (`continues` as for [`approve`]): answers a call in doubt without
/// running it again; a call that waits and is not in doubt is refused, nothing recorded.
pub async fn answer_in_doubt(
    store: &BoxedStore,
    target: (&str, Option<String>),
    answer: &crate::in_doubt::Answer,
    who: &Who,
    continues: &str,
) -> Result<(), String> {
    let (run_id, call) = target;
    let target = target_call(store, run_id, call, continues, who.decided).await?;
    let bound = who.decision(&target, answer.decision(), answer.via());
    let bound = replacing_standing(store, run_id, who, bound).await?;
    // The store refuses a call that is not in doubt (the library's rule); said in the
    // words `reins runs skip|supply` use everywhere.
    store
        .decide(run_id, &bound)
        .await
        .map(drop)
        .map_err(|error| match error {
            StoreError::NotInDoubt {
                run_id,
                internal_call_id,
            } => crate::in_doubt::not_in_doubt(&run_id, &internal_call_id),
            other => other.to_string(),
        })
}

/// Who makes a decision and why: `--as NAME` (default: the user, see [`decided_by`]) and
/// `--reason TEXT`; and whether it may replace one made already (`--change`).
pub struct Who {
    /// `--as`.
    pub name: Option<String>,
    /// `--reason`.
    pub reason: Option<String>,
    /// [`Decided::Replace`] with `--change`, else [`Decided::RefuseNamingChange`].
    pub decided: Decided,
}

impl Who {
    /// `decision` about `target` bound to it as listed, by this person, made `via` a command.
    pub fn decision(
        &self,
        target: &PendingApproval,
        decision: ToolDecision,
        via: &str,
    ) -> Decision {
        let by = match self
            .name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
        {
            Some(name) => format!("{name} via {via}"),
            None => decided_by(via),
        };
        let bound = Decision::new(target, decision, by);
        match self
            .reason
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty())
        {
            Some(reason) => bound.because(reason),
            None => bound,
        }
    }
}

/// What `reins runs approve|deny|edit` print once a decision is recorded (`done`:
/// "approved", "denied"): the calls of the run still waiting, or how the run goes on.
pub async fn recorded(store: &BoxedStore, run_id: &str, done: &str, continues: &str) -> String {
    match crate::runs::pending_of(store, run_id).await {
        Ok(waiting) if !waiting.is_empty() => format!(
            "reins: {done}; {} more call(s) of the run wait for a decision ({}), then {continues}",
            waiting.len(),
            waiting
                .iter()
                .map(|call| call.internal_call_id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => format!("reins: {done}; {continues}"),
    }
}
