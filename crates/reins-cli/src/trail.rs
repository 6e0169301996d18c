//! A run's decision trail, for `reins runs show` and the inbox's timeline: every decision
//! recorded about its calls (replaced ones included), who made it, when, why, and the
//! tool and arguments it was bound to.

use crate::approve::DENIED_BY_THE_USER;
use reins::agent::{RunState, RunStatus, ToolDecision};
use reins::message::{AssistantContent, Message};
use reins::store::{RecordedDecision, call_binding};
use serde_json::{Value, json};

/// One decision as shown.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionView {
    /// The call's internal id.
    pub call: String,
    /// The call's tool, when the run still holds the call the decision is bound to.
    pub tool: Option<String>,
    /// What was decided, in words (`approved`, `approved with edited arguments`, `denied: ...`).
    pub verdict: String,
    /// Who decided.
    pub decided_by: String,
    /// When, as `YYYY-MM-DD HH:MM:SS UTC`.
    pub decided_at: String,
    /// When, in milliseconds since the Unix epoch.
    pub decided_at_ms: i64,
    /// Why, if they said.
    pub reason: Option<String>,
    /// The digest the decision is bound to (for the JSON listing and a tooltip: a person
    /// reads the arguments instead).
    pub binding: String,
    /// The arguments that digest is of, when the run still holds the call they belong to
    /// (waiting, or in its history once the run went on).
    pub bound_arguments: Option<Value>,
    /// The arguments the decision replaced them with, if any.
    pub new_arguments: Option<Value>,
    /// Whether a later decision about the call, bound alike, replaced this one before the run
    /// acted on it (`runs approve|deny --change`): the run goes on with the later one.
    pub replaced: bool,
}

impl DecisionView {
    /// As JSON for `runs show --json`.
    pub fn to_json(&self) -> Value {
        json!({
            "call": self.call,
            "tool": self.tool,
            "verdict": self.verdict,
            "decided_by": self.decided_by,
            "decided_at": self.decided_at,
            "decided_at_ms": self.decided_at_ms,
            "reason": self.reason,
            "binding": self.binding,
            "bound_arguments": self.bound_arguments,
            "new_arguments": self.new_arguments,
            "replaced": self.replaced,
        })
    }
}

/// Which call a decision is about: `call t1c0 (save_note)`, or without the tool when the run
/// no longer holds the call.
pub fn about(decision: &DecisionView) -> String {
    match &decision.tool {
        Some(tool) => format!("call {} ({tool})", decision.call),
        None => format!("call {}", decision.call),
    }
}

/// The decisions about `state`'s calls, oldest first, as shown.
pub fn views(state: &RunState, decisions: &[RecordedDecision]) -> Vec<DecisionView> {
    decisions
        .iter()
        .enumerate()
        .map(|(index, recorded)| {
            let decision = &recorded.decision;
            let replaced = decisions[index + 1..].iter().any(|later| {
                later.decision.internal_call_id == decision.internal_call_id
                    && later.decision.binding == decision.binding
            });
            let (verdict, new_arguments) = match &decision.decision {
                ToolDecision::Approve => ("approved".to_owned(), None),
                ToolDecision::ApproveWithArgs { args } => (
                    "approved with edited arguments".to_owned(),
                    Some(args.clone()),
                ),
                ToolDecision::Deny { message } => (denied(message), None),
                ToolDecision::Rerun => ("run again".to_owned(), None),
                ToolDecision::Skip { message } => (format!("skipped: {message}"), None),
                ToolDecision::SupplyResult { output } => {
                    (format!("result supplied: {output}"), None)
                }
            };
            let bound = bound_call(state, recorded);
            DecisionView {
                call: decision.internal_call_id.clone(),
                tool: bound.as_ref().map(|(tool, _)| tool.clone()),
                verdict,
                decided_by: decision.decided_by.clone(),
                decided_at: utc_time(recorded.decided_at_ms),
                decided_at_ms: recorded.decided_at_ms,
                reason: decision.reason.clone(),
                binding: decision.binding.clone(),
                bound_arguments: bound.map(|(_, arguments)| arguments),
                new_arguments,
                replaced,
            }
        })
        .collect()
}

/// The decisions a suspended run holds until it is resumed: for each call it waits on, the
/// newest decision bound to the call as it stands. Such a call no longer waits for a person
/// (the store lists it no more), but for `runs resume`.
pub fn awaiting_resume<'d>(
    state: &RunState,
    decisions: &'d [RecordedDecision],
) -> Vec<&'d RecordedDecision> {
    if state.status != RunStatus::Suspended {
        return Vec::new();
    }
    state
        .pending_calls
        .iter()
        .filter(|call| call.awaits_decision())
        .filter_map(|call| {
            decisions
                .iter()
                .rev()
                .find(|recorded| recorded.binds(&state.run_id, call))
        })
        .collect()
}

/// A decided call as a refused second decision names it: `call `t1c0` of run `r` is already
/// approved (by ana via reins runs approve, at 2026-01-01 10:00:00 UTC)`.
pub fn decided_already(state: &RunState, recorded: &RecordedDecision) -> String {
    let view = views(state, std::slice::from_ref(recorded))
        .into_iter()
        .next();
    let (verdict, by, at) = view.map_or_else(
        || ("decided".to_owned(), String::new(), String::new()),
        |view| (view.verdict, view.decided_by, view.decided_at),
    );
    format!(
        "call `{}` of run `{}` is already {verdict} (by {by}, at {at})",
        recorded.decision.internal_call_id, state.run_id
    )
}

/// A denial in words, saying "denied" once. A person's denial tells the model
/// [`DENIED_BY_THE_USER`] and then their message, if any ([`crate::approve::denial`]): only
/// that message follows; another message that already says so is shown as it is.
fn denied(message: &str) -> String {
    match message.strip_prefix(DENIED_BY_THE_USER) {
        Some("") => "denied".to_owned(),
        Some(rest) if rest.starts_with(": ") => format!("denied{rest}"),
        _ if message.starts_with("denied") => message.to_owned(),
        _ => format!("denied: {message}"),
    }
}

/// The call `recorded` is bound to, as its tool's name and arguments: a call of the run (as
/// the model made it, or as it started) whose digest is the decision's binding. A waiting
/// call is looked for among the waiting ones, then every call in the history: once the run
/// went on, the person still sees what they decided about rather than the digest. `None`
/// when no call of the run has that digest (a call in doubt, bound with how often it started).
fn bound_call(state: &RunState, recorded: &RecordedDecision) -> Option<(String, Value)> {
    let id = &recorded.decision.internal_call_id;
    let binds = |tool: &str, arguments: &Value| {
        call_binding(&recorded.run_id, id, tool, arguments) == recorded.decision.binding
    };
    let waiting = state
        .pending_calls
        .iter()
        .filter(|pending| &pending.internal_call_id == id)
        .flat_map(|pending| {
            [Some(&pending.call.arguments), pending.started.as_ref()]
                .into_iter()
                .flatten()
                .map(|arguments| (&pending.call.name, arguments))
        });
    let made = state.history.iter().flat_map(|message| match message {
        Message::Assistant { content } => content
            .iter()
            .filter_map(|part| match part {
                AssistantContent::ToolCall(call) => Some((&call.name, &call.arguments)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    });
    waiting
        .chain(made)
        .find(|(tool, arguments)| binds(tool, arguments))
        .map(|(tool, arguments)| (tool.clone(), arguments.clone()))
}

/// `ms` since the Unix epoch as `YYYY-MM-DD HH:MM:SS UTC` (the proleptic Gregorian calendar).
pub fn utc_time(ms: i64) -> String {
    let seconds = ms.div_euclid(1000);
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    // Days to a civil date, after Howard Hinnant's `civil_from_days`.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::{denied, utc_time};
    use crate::approve::denial;

    #[test]
    fn a_denial_says_denied_once() {
        assert_eq!(denied(&denial(None)), "denied");
        assert_eq!(denied(&denial(Some("not today"))), "denied: not today");
        assert_eq!(denied("denied: no answer"), "denied: no answer");
        assert_eq!(denied("deleting is off"), "denied: deleting is off");
    }

    #[test]
    fn times_are_shown_as_utc_dates() {
        assert_eq!(utc_time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc_time(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc_time(1_796_113_245_000), "2026-12-01 08:20:45 UTC");
    }
}
