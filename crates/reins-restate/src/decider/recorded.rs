//! What a [`JournaledDecider`](super::JournaledDecider) journals: the decider's decision, or
//! why it gave none, so a replay ends the same way as the first execution.

use reins::hooks::approval::{DeciderFailure, Decision};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;

/// One outcome as journaled. Steps journaled before failures were kept hold a decision only
/// (a panic or a timeout then journaled a denial), and read as that decision.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub(super) enum RecordedOutcome {
    Approve,
    ApproveWithArgs {
        args: Value,
    },
    Deny {
        message: String,
    },
    Suspend {
        reason: String,
    },
    /// The decider said it could not decide, and why ([`DeciderFailure::NoDecision`]).
    NoDecision {
        why: String,
    },
    /// The decider did not answer within the journaled decider's timeout.
    TimedOut {
        after: Duration,
    },
    /// The decider panicked.
    Panicked,
}

impl From<Result<Decision, DeciderFailure>> for RecordedOutcome {
    fn from(outcome: Result<Decision, DeciderFailure>) -> Self {
        match outcome {
            Ok(Decision::Approve) => RecordedOutcome::Approve,
            Ok(Decision::ApproveWithArgs(args)) => RecordedOutcome::ApproveWithArgs { args },
            Ok(Decision::Deny(message)) => RecordedOutcome::Deny { message },
            Ok(Decision::Suspend(reason)) => RecordedOutcome::Suspend { reason },
            Err(DeciderFailure::NoDecision(why)) => RecordedOutcome::NoDecision { why },
            Err(DeciderFailure::TimedOut(after)) => RecordedOutcome::TimedOut { after },
            Err(DeciderFailure::Panicked) => RecordedOutcome::Panicked,
            // A kind of failure this crate does not know yet is kept as the words it shows.
            Err(other) => RecordedOutcome::NoDecision {
                why: other.to_string(),
            },
        }
    }
}

impl From<RecordedOutcome> for Result<Decision, DeciderFailure> {
    fn from(recorded: RecordedOutcome) -> Self {
        match recorded {
            RecordedOutcome::Approve => Ok(Decision::Approve),
            RecordedOutcome::ApproveWithArgs { args } => Ok(Decision::ApproveWithArgs(args)),
            RecordedOutcome::Deny { message } => Ok(Decision::Deny(message)),
            RecordedOutcome::Suspend { reason } => Ok(Decision::Suspend(reason)),
            RecordedOutcome::NoDecision { why } => Err(DeciderFailure::NoDecision(why)),
            RecordedOutcome::TimedOut { after } => Err(DeciderFailure::TimedOut(after)),
            RecordedOutcome::Panicked => Err(DeciderFailure::Panicked),
        }
    }
}
