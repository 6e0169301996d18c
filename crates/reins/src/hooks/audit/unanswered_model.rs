//! The model call the log wrote a dispatch line for and no outcome line yet.
//!
//! A hook registered before the log can end a model call's outcome chain before the log sees
//! it: a fallback's `retry_on`, a response served in place of a failed call, a stop. The
//! spec's composition rules say so (the first such answer decides), so the log does not ask
//! to see the outcome; it writes the missing line once it learns what became of the call: at
//! the next model call's dispatch, or when the run ends. This is how the budget's ledger
//! counts such a call too.

use crate::agent::HookContext;
use std::collections::HashMap;

/// Per log (two logs in one run keep their own), the model call awaiting its outcome line,
/// in the run's scratchpad.
#[derive(Default)]
struct Unanswered(HashMap<usize, Call>);

/// A model call with a dispatch line and no outcome line.
pub(super) struct Call {
    /// Its turn ([`HookContext::turn`]).
    pub turn: usize,
    /// Its attempt within the turn ([`HookContext::model_attempt`]).
    pub attempt: usize,
    /// The label of the model called.
    pub model: String,
}

impl Call {
    /// Whether the run made another model call of the same turn after this one: a hook had
    /// the turn sent to a model again ([`OutcomeAction::retry_on`]).
    ///
    /// [`OutcomeAction::retry_on`]: crate::agent::OutcomeAction::retry_on
    pub fn retried_by(&self, turn: usize, attempt: usize) -> bool {
        turn == self.turn && attempt > self.attempt
    }

    /// Whether the run moved past this call: a later call (of this turn or another) was made.
    pub fn superseded_by(&self, turn: usize, attempt: usize) -> bool {
        (turn, attempt) > (self.turn, self.attempt)
    }
}

/// Records the current model call of `model` as dispatched by the log `log`, and returns the
/// call dispatched before it that got no outcome line from this log.
pub(super) fn dispatched(ctx: &HookContext, log: usize, model: &str) -> Option<Call> {
    let call = Call {
        turn: ctx.turn(),
        attempt: ctx.model_attempt(),
        model: model.to_owned(),
    };
    ctx.scratchpad()
        .update(|unanswered: &mut Unanswered| unanswered.0.insert(log, call))
        .filter(|earlier| earlier.superseded_by(ctx.turn(), ctx.model_attempt()))
}

/// Notes that the current model call got its outcome line from the log `log`.
pub(super) fn answered(ctx: &HookContext, log: usize) {
    ctx.scratchpad().update(|unanswered: &mut Unanswered| {
        unanswered.0.remove(&log);
    });
}

/// The model call the log `log` wrote no outcome line for, taken.
pub(super) fn take(ctx: &HookContext, log: usize) -> Option<Call> {
    ctx.scratchpad()
        .update(|unanswered: &mut Unanswered| unanswered.0.remove(&log))
}
