//! Decisions bound to what runs: who decided what about which call, and a digest of the call
//! as it will execute, so a decision is never applied to anything else.

use super::error::StandingDecision;
use super::{Lease, PendingApproval, StoreError, check_unleased};
use crate::hex::push_lower_hex;
use crate::run::{PendingCall, RunState, ToolDecision};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// A decision about one waiting call, as a person (or a program acting for one) makes it: what
/// to do, who decided and why, bound to the call as it was shown
/// ([`PendingApproval::binding`]). (What a live decider answers during a run, without a
/// store, is a [`crate::hooks::approval::Decision`] instead.)
///
/// ```
/// use reins::agent::ToolDecision;
/// use reins::store::{Decision, PendingApproval};
///
/// # fn decide(pending: &PendingApproval) -> Decision {
/// Decision::new(pending, ToolDecision::approve(), "alice@example.com")
///     .because("the invoice matches the order")
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The call's internal id.
    pub internal_call_id: String,
    /// What to do with it.
    pub decision: ToolDecision,
    /// The digest of the run, the call, the tool and the arguments the call executes with if
    /// approved, as [`call_binding`] computes it. The store refuses the decision, and resume
    /// ignores it, when the call no longer has this digest.
    pub binding: String,
    /// Who decided.
    pub decided_by: String,
    /// Why, if they said.
    #[serde(default)]
    pub reason: Option<String>,
    /// The decision about the call this one replaces, by the time it was recorded
    /// ([`RecordedDecision::decided_at_ms`]); set with [`replacing`](Self::replacing). A call
    /// decided already is decided again only by a decision that names the one standing:
    /// any other is refused with [`StoreError::AlreadyDecided`], so nobody overrules a
    /// decision they did not see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<i64>,
}

impl Decision {
    /// `decision` about the waiting call `pending`, by `decided_by`, bound to the call as it
    /// was listed.
    pub fn new(
        pending: &PendingApproval,
        decision: ToolDecision,
        decided_by: impl Into<String>,
    ) -> Self {
        Decision {
            internal_call_id: pending.internal_call_id.clone(),
            decision,
            binding: pending.binding.clone(),
            decided_by: decided_by.into(),
            reason: None,
            replaces: None,
        }
    }

    /// Records why.
    pub fn because(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// Replaces `earlier`, the call's decision as recorded (a person changing their mind
    /// before the run resumes): [`RunStore::decide`](super::RunStore::decide) records this
    /// one only while `earlier` is still the call's decision, and refuses it with
    /// [`StoreError::AlreadyDecided`] (naming the decision that stands) once another replaced
    /// it. The trail keeps both.
    pub fn replacing(mut self, earlier: &RecordedDecision) -> Self {
        self.replaces = Some(earlier.decided_at_ms);
        self
    }
}

/// A decision as a store recorded it: one entry of a run's audit trail
/// ([`RunStore::decisions`](super::RunStore::decisions)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedDecision {
    /// The run.
    pub run_id: String,
    /// The decision, with who made it and its binding.
    #[serde(flatten)]
    pub decision: Decision,
    /// When the store recorded it, in milliseconds since the Unix epoch. A call's
    /// decisions are recorded at times that only grow (a replacement recorded within the
    /// millisecond of the decision it replaces gets the next one), so this names the decision
    /// for [`Decision::replacing`].
    pub decided_at_ms: i64,
    /// Made while the run held its lease, by the decider the run asked itself (a person at
    /// the worker's terminal, a webhook) and applied by the run then
    /// ([`RunStore::log_decision`](super::RunStore::log_decision)): kept for the trail only,
    /// it binds no call, and no claim applies it again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub during_run: bool,
}

impl RecordedDecision {
    /// Whether this decision is bound to `call` of `run_id` as it stands: never for one
    /// made [`during_run`](Self::during_run), which the run applied already.
    pub fn binds(&self, run_id: &str, call: &PendingCall) -> bool {
        !self.during_run
            && self.decision.internal_call_id == call.internal_call_id
            && !self.decision.binding.is_empty()
            && self.decision.binding == binding_of(run_id, call)
    }
}

/// The digest a decision about a call is bound to: SHA-256 over the canonical JSON (keys
/// sorted, no whitespace) of the run id, the call's internal id, the tool's name and the
/// arguments, as `sha256:<hex>`: the binding of a call that never started. A call that
/// started and waits again (in doubt after a crash) is bound with how many times it started
/// too ([`PendingCall::starts`], as `"starts"`), so the decision a start used never runs it
/// again; [`PendingApproval::binding`](super::PendingApproval::binding) gives any waiting
/// call's binding.
pub fn call_binding(
    run_id: &str,
    internal_call_id: &str,
    tool_name: &str,
    arguments: &Value,
) -> String {
    binding(run_id, internal_call_id, tool_name, arguments, 0)
}

/// [`call_binding`], with `"starts"` beside the others for a call that already started.
fn binding(
    run_id: &str,
    internal_call_id: &str,
    tool_name: &str,
    arguments: &Value,
    starts: u32,
) -> String {
    let mut text = String::new();
    let mut bound = serde_json::json!({
        "run_id": run_id,
        "internal_call_id": internal_call_id,
        "tool": tool_name,
        "arguments": arguments,
    });
    if starts > 0 {
        if let Some(fields) = bound.as_object_mut() {
            fields.insert("starts".to_owned(), Value::from(starts));
        }
    }
    canonical_json(&bound, &mut text);
    let digest = Sha256::digest(text.as_bytes());
    let mut binding = String::with_capacity(7 + digest.len() * 2);
    binding.push_str("sha256:");
    push_lower_hex(&mut binding, &digest);
    binding
}

/// The binding of a waiting call of `run_id`: over the arguments it executes with if approved,
/// and, for a call that already started, how many times it did ([`PendingCall::starts`]).
pub(crate) fn binding_of(run_id: &str, call: &PendingCall) -> String {
    binding(
        run_id,
        &call.internal_call_id,
        &call.call.name,
        call.arguments(),
        call.starts,
    )
}

/// Writes `value` as JSON with object keys sorted, whatever order the map keeps them in.
fn canonical_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (position, key) in keys.into_iter().enumerate() {
                if position > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(item) = map.get(key) {
                    canonical_json(item, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (position, item) in items.iter().enumerate() {
                if position > 0 {
                    out.push(',');
                }
                canonical_json(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// What [`record_decision`] makes of a decision.
pub(crate) enum Recording {
    /// A decision to record (and log, and signal).
    New(RecordedDecision),
    /// The very decision the call has already (a request sent again): recorded as it was,
    /// nothing to write.
    Repeated(RecordedDecision),
}

/// `decision` checked against the call it names in `state` ([`check_decision`]) and against
/// the run's `standing` decisions (the one per call a claim would apply), and stamped with
/// the time it is recorded, `now` (the store's clock, milliseconds since the Unix epoch;
/// a millisecond after the call's previous decision if that is later):
/// what a store keeps for `run_id`. Refused while `holder`'s lease on the run lasts (until
/// `lease_until`) at `now`: a worker that claimed the run read its decisions then, and a
/// decision recorded now would be logged but never applied. (A lease that has run out, the
/// store ends in the same transaction, for the same reason.) Refused with
/// [`StoreError::AlreadyDecided`] when the call has a decision bound to it as it stands,
/// unless `decision` is that very one ([`Recording::Repeated`]) or names it as the one it
/// replaces.
pub(crate) fn record_decision(
    run_id: &str,
    state: &RunState,
    (holder, lease_until): (Option<&str>, i64),
    standing: &[RecordedDecision],
    decision: Decision,
    now: i64,
) -> Result<Recording, StoreError> {
    check_unleased(run_id, holder, lease_until, now)?;
    let call = check_decision(state, &decision)?;
    let previous = standing
        .iter()
        .filter(|recorded| recorded.decision.internal_call_id == call.internal_call_id)
        .max_by_key(|recorded| recorded.decided_at_ms);
    // A call's decisions are recorded at times that only grow, also within a millisecond,
    // so the time a replacement names is the standing decision's alone.
    let decided_at_ms = previous.map_or(now, |previous| {
        now.max(previous.decided_at_ms.saturating_add(1))
    });
    if let Some(standing) = previous.filter(|previous| previous.binds(run_id, call)) {
        if standing.decision == decision {
            return Ok(Recording::Repeated(standing.clone()));
        }
        if decision.replaces != Some(standing.decided_at_ms) {
            return Err(StoreError::AlreadyDecided(Box::new(StandingDecision {
                run_id: run_id.to_owned(),
                internal_call_id: decision.internal_call_id,
                decided: verdict(&standing.decision.decision),
                decided_by: standing.decision.decided_by.clone(),
                decided_at_ms: standing.decided_at_ms,
            })));
        }
    }
    Ok(Recording::New(RecordedDecision {
        run_id: run_id.to_owned(),
        decision,
        decided_at_ms,
        during_run: false,
    }))
}

/// How `decision` decided a call, in a word or a few, for [`StoreError::AlreadyDecided`]
/// (never the arguments, a message or a result: they may hold what is not for every reader).
fn verdict(decision: &ToolDecision) -> &'static str {
    match decision {
        ToolDecision::Approve => "approved",
        ToolDecision::ApproveWithArgs { .. } => "approved with edited arguments",
        ToolDecision::Deny { .. } => "denied",
        ToolDecision::Rerun => "to be run again",
        ToolDecision::Skip { .. } => "skipped",
        ToolDecision::SupplyResult { .. } => "answered with a supplied result",
    }
}

/// `decision`, made by the decider a run asked while `lease` holds it, stamped with the time
/// `now` (the store's clock): what a store appends to the run's trail
/// ([`RunStore::log_decision`](super::RunStore::log_decision)), once it has checked that the
/// lease is current.
pub(crate) fn decided_during_run(lease: &Lease, decision: &Decision, now: i64) -> RecordedDecision {
    RecordedDecision {
        run_id: lease.run_id.clone(),
        decision: decision.clone(),
        decided_at_ms: now,
        during_run: true,
    }
}

/// Checks that `decision` is about a call of `state` that waits for one, and is bound to it as
/// it stands; returns that call.
fn check_decision<'a>(
    state: &'a RunState,
    decision: &Decision,
) -> Result<&'a PendingCall, StoreError> {
    let id = decision.internal_call_id.as_str();
    let Some(call) = state
        .pending_calls
        .iter()
        .find(|call| call.internal_call_id == id && call.awaits_decision())
    else {
        return Err(StoreError::NoSuchPendingCall {
            run_id: state.run_id.clone(),
            internal_call_id: id.to_owned(),
        });
    };
    if decision.binding != binding_of(&state.run_id, call) {
        return Err(StoreError::StaleDecision {
            run_id: state.run_id.clone(),
            internal_call_id: id.to_owned(),
        });
    }
    // Skip and SupplyResult say what became of a call that may have run; for one that waits
    // for approval they would put a made-up result in front of the model for a call that
    // never ran (a gate answers approve, edit or deny). The CLI and Restate refuse it too.
    let answers_an_effect = matches!(
        decision.decision,
        ToolDecision::Skip { .. } | ToolDecision::SupplyResult { .. }
    );
    if answers_an_effect && !call.is_in_doubt() {
        return Err(StoreError::NotInDoubt {
            run_id: state.run_id.clone(),
            internal_call_id: id.to_owned(),
        });
    }
    Ok(call)
}

/// Reads a stored decision. A decision stored by a release before bindings (a bare
/// [`ToolDecision`]) is read with an empty binding, which binds to nothing: it never runs a
/// tool, and its call is listed as waiting again.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn decode_decision(
    run_id: &str,
    internal_call_id: &str,
    decided_at_ms: i64,
    json: &str,
) -> Result<RecordedDecision, StoreError> {
    if let Ok(recorded) = serde_json::from_str::<RecordedDecision>(json) {
        return Ok(recorded);
    }
    let decision: ToolDecision =
        serde_json::from_str(json).map_err(|error| StoreError::Corrupt {
            run_id: run_id.to_owned(),
            message: format!("decision for `{internal_call_id}`: {error}"),
        })?;
    Ok(RecordedDecision {
        run_id: run_id.to_owned(),
        decision: Decision {
            internal_call_id: internal_call_id.to_owned(),
            decision,
            binding: String::new(),
            decided_by: String::new(),
            reason: None,
            replaces: None,
        },
        decided_at_ms,
        during_run: false,
    })
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn encode_decision(recorded: &RecordedDecision) -> Result<String, StoreError> {
    serde_json::to_string(recorded).map_err(|error| StoreError::Backend(error.to_string()))
}
