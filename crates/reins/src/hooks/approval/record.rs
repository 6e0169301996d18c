//! How an [`ApprovalPolicy`](super::ApprovalPolicy) decided each call, kept in the run's
//! scratchpad for the hooks after it (the audit log writes it on the call's outcome line).

use crate::agent::HookContext;
use serde::{Deserialize, Serialize};

/// How the policy decided one tool call, kept in the run's scratchpad.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// The description of the rule that matched; `None` when the default outcome applied.
    pub rule: Option<String>,
    /// Whether the decider was consulted (and answered, failed or timed out).
    pub asked: bool,
    /// What the policy answered.
    pub verdict: Verdict,
}

/// What the policy answered for a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The call ran as the model made it (as far as this policy is concerned).
    Allow,
    /// The decider approved it with replacement arguments.
    AllowWithArgs,
    /// The call was refused.
    Deny,
    /// The run was suspended for a durable decision.
    Suspend,
}

impl Verdict {
    /// The verdict as it is written in JSON (`"allow"`, `"allow_with_args"`, `"deny"`,
    /// `"suspend"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::AllowWithArgs => "allow_with_args",
            Verdict::Deny => "deny",
            Verdict::Suspend => "suspend",
        }
    }
}

/// The policy's records of the run, by reins' call id, oldest first. A list rather than a
/// map: the record asked for is almost always the newest (an audit line written for the call
/// just decided), found first from the end, and a list grows without rehashing.
#[derive(Default)]
pub(super) struct Records(Vec<(String, ApprovalRecord)>);

impl Records {
    /// The newest record of `call_id`.
    pub(super) fn get(&self, call_id: &str) -> Option<&ApprovalRecord> {
        self.0
            .iter()
            .rev()
            .find(|(id, _)| id == call_id)
            .map(|(_, record)| record)
    }

    /// Records how `call_id` was decided. A call decided again (a rare case: its run was
    /// resumed in this process) keeps its earlier record behind the newer one, which `get`
    /// finds first.
    pub(super) fn put(&mut self, call_id: &str, record: ApprovalRecord) {
        self.0.push((call_id.to_owned(), record));
    }
}

/// How an [`ApprovalPolicy`](super::ApprovalPolicy) decided the call `internal_call_id` of
/// this run, if a policy saw it. The records live in the run's memory only: a run resumed in
/// another process has none for the calls decided before the pause.
pub fn approval_record(ctx: &HookContext, internal_call_id: &str) -> Option<ApprovalRecord> {
    ctx.scratchpad()
        .update(|records: &mut Records| records.get(internal_call_id).cloned())
}
