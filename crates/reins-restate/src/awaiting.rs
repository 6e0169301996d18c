//! Waiting for the decisions of a suspended run: one awakeable per pending call, listed in the
//! run's `pending` state (read by `status`, checked by `decide`) until its decision is taken.

use crate::args_schema::ArgsSchemas;
use crate::wire::PendingDecision;
use reins::agent::{PendingCall, ToolDecision};
use restate_sdk::prelude::*;

/// The state key holding the calls a suspended run waits on.
pub(crate) const PENDING_STATE: &str = "pending";

/// How many payloads that are no usable decision one wait of a run takes through Restate's
/// awakeable API (which skips `decide`'s checks) before the run ends.
///
/// Why a bound: each such payload re-arms its call on a fresh awakeable, three more journal
/// entries that every later replay of the run reads into a worker's memory. Anyone who
/// reaches the ingress can resolve a listed awakeable, so without a bound they could grow a
/// run's journal, and the memory of each worker replaying it, without end. Ending the run
/// gives them nothing they lack: the same API rejects an awakeable, which ends it too.
pub const MAX_UNUSABLE_DECISIONS: usize = 16;

/// What a call a hook suspended waits on, as listed in the run's status (its awakeable is
/// given by [`decisions`]).
pub(crate) fn pending_decision(call: &PendingCall) -> PendingDecision {
    PendingDecision {
        call: call.internal_call_id.clone(),
        tool: call.call.name.clone(),
        arguments: call.call.arguments.clone(),
        reason: call.suspended.clone().unwrap_or_default(),
        awakeable: String::new(),
        in_doubt: false,
    }
}

/// Why `decision` does not answer `waiting`, a call of `run`, if it does not: `skip` and
/// `supply_result` answer a call in doubt, one a stopped run may have run; a call waiting for
/// approval never started, so it had no effect to skip or report. Refused as on a stored run
/// (`reins runs skip|supply` say it in the same words).
pub(crate) fn not_in_doubt(
    run: &str,
    waiting: &PendingDecision,
    decision: &ToolDecision,
) -> Option<String> {
    let answers_in_doubt = matches!(
        decision,
        ToolDecision::Skip { .. } | ToolDecision::SupplyResult { .. }
    );
    (answers_in_doubt && !waiting.in_doubt).then(|| {
        format!(
            "call `{}` of run `{run}` is not in doubt (it never started, so it had no effect): \
             `skip` and `supply_result` answer a call a stopped run may have run; approve or \
             deny this one",
            waiting.call
        )
    })
}

/// Why `decision` cannot be applied to the call `call` of the tool `tool`, if it cannot: edited
/// arguments must be a JSON object (a tool's arguments always are) that fits the tool's schema
/// (of `schemas`), else the tool would run with arguments it refuses, or fail on them after
/// the approver was told the decision was taken.
pub(crate) fn unusable(
    call: &str,
    tool: &str,
    decision: &ToolDecision,
    schemas: &ArgsSchemas,
) -> Option<String> {
    match decision {
        ToolDecision::ApproveWithArgs { args } if !args.is_object() => Some(format!(
            "the arguments of `approve_with_args` for `{call}` must be a JSON object, not {}",
            reins::text::json_kind(args)
        )),
        ToolDecision::ApproveWithArgs { args } => schemas.misfit(call, tool, args),
        _ => None,
    }
}

/// The decision an awakeable was resolved with, or why it cannot be taken.
fn read_decision(
    call: &str,
    tool: &str,
    payload: &[u8],
    schemas: &ArgsSchemas,
) -> Result<ToolDecision, String> {
    let decision: ToolDecision = serde_json::from_slice(payload)
        .map_err(|error| format!("not a decision about `{call}`: {error}"))?;
    match unusable(call, tool, &decision, schemas) {
        Some(reason) => Err(reason),
        None => Ok(decision),
    }
}

/// Creates one awakeable per call in `calls` (their `awakeable` is filled in here), lists them as the run's pending calls and waits
/// until each is decided, in whatever order the decisions come; a decided call leaves the list
/// at once. Returns the decisions by internal call id, or the terminal error of an awakeable
/// rejected through Restate's API (the list is then cleared) or of a cancelled invocation.
///
/// The payloads are read here rather than by the SDK: an awakeable resolved directly (the
/// awakeable API skips `decide`'s checks) with something that is not a usable decision would
/// otherwise fail every replay of the invocation, and Restate would retry it without end.
/// Such a call keeps waiting on a fresh awakeable instead; the payload is journaled, so a
/// replay re-arms it the same way. Past [`MAX_UNUSABLE_DECISIONS`] such payloads the wait
/// ends with a terminal error (the list is then cleared).
pub(crate) async fn decisions(
    ctx: &WorkflowContext<'_>,
    calls: Vec<PendingDecision>,
    schemas: &ArgsSchemas,
) -> Result<Vec<(String, ToolDecision)>, TerminalError> {
    let mut waiting = Vec::new();
    let mut awaited = DurableFuturesUnordered::new();
    // The call (and its tool) each awaited awakeable decides, at the index `awaited` gave it.
    let mut deciding = Vec::new();
    for mut call in calls {
        let (awakeable, decided) = ctx.awakeable::<Vec<u8>>();
        call.awakeable = awakeable;
        deciding.push((call.call.clone(), call.tool.clone()));
        waiting.push(call);
        awaited.push(decided);
    }
    ctx.set(PENDING_STATE, Json(waiting.clone()));
    let mut taken = Vec::new();
    let mut unusable_payloads = 0;
    while let Some((index, outcome)) = awaited.next().await? {
        let Some((call, tool)) = deciding.get(index).cloned() else {
            continue;
        };
        let payload = match outcome {
            Ok(payload) => payload,
            Err(rejected) => {
                // The run ends here: it waits on nothing any more.
                ctx.clear(PENDING_STATE);
                return Err(TerminalError::new(format!(
                    "the decision on `{call}` was rejected: {}",
                    rejected.message()
                )));
            }
        };
        match read_decision(&call, &tool, &payload, schemas) {
            Ok(decision) => {
                waiting.retain(|pending| pending.call != call);
                taken.push((call, decision));
            }
            Err(reason) => {
                unusable_payloads += 1;
                if unusable_payloads > MAX_UNUSABLE_DECISIONS {
                    ctx.clear(PENDING_STATE);
                    return Err(TerminalError::new(format!(
                        "more than {MAX_UNUSABLE_DECISIONS} payloads that are no usable \
                         decision were sent to the run's awakeables (the last, about `{call}`: \
                         {reason}); the run ends rather than let its journal grow without end"
                    )));
                }
                tracing::warn!(
                    run_id = %ctx.key(),
                    call = %call,
                    reason = %reason,
                    "an unusable decision was ignored; the call waits on a fresh awakeable"
                );
                let (awakeable, decided) = ctx.awakeable::<Vec<u8>>();
                if let Some(pending) = waiting.iter_mut().find(|pending| pending.call == call) {
                    pending.awakeable = awakeable;
                }
                deciding.push((call, tool));
                awaited.push(decided);
            }
        }
        ctx.set(PENDING_STATE, Json(waiting.clone()));
    }
    Ok(taken)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_that_is_no_usable_decision_says_why() {
        let schemas = ArgsSchemas::default();
        let read = |payload: &str| read_decision("t1c0", "transfer", payload.as_bytes(), &schemas);
        assert_eq!(
            read(r#"{"decision": "approve"}"#),
            Ok(ToolDecision::approve())
        );
        let Err(reason) = read(r#"{"decision": "bogus"}"#) else {
            panic!("a bogus decision is refused")
        };
        assert!(
            reason.starts_with("not a decision about `t1c0`"),
            "{reason}"
        );
        assert_eq!(
            read(r#"{"decision": "approve_with_args", "args": [1]}"#),
            Err(
                "the arguments of `approve_with_args` for `t1c0` must be a JSON object, not an \
                 array"
                    .to_owned()
            )
        );
        assert!(read("not json").is_err());
    }
}
