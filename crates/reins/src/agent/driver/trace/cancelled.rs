//! What a span records when its run is dropped before the span's outcome. Dropping a run's
//! future (a `tokio::time::timeout`, a `select!`, an aborted task, a dropped `PromptStream`)
//! stops it at an await, and the code after that await, which records the outcome, never
//! runs: the span would end with no status and no `error.type`, and read as a success.
//!
//! Each traced future is wrapped in a guard that records `cancelled` when it is dropped
//! before it finishes ([`cancellable`]); the run's span is recorded from the driver's drop
//! (`driver/dropped.rs`), which still holds the run's usage and turns. An untraced run has no
//! guard: its spans are disabled and nothing is wrapped.

use super::{int, record_error, record_usage};
use crate::completion::Usage;
use std::future::Future;
use tracing::{Instrument, Span};

/// The `error.type` and `reins.run.status` of a span whose run was dropped before its
/// outcome. Not a hook's stop (`stopped_by_hook`, a [`PromptError::Cancelled`]): nothing in
/// the run chose to end it, its caller stopped waiting for it.
///
/// [`PromptError::Cancelled`]: crate::agent::PromptError::Cancelled
const CANCELLED: &str = "cancelled";

/// Records on a run's span that the run was dropped before it ended: `cancelled` as its
/// `error.type` and `reins.run.status`, the `Error` status, and the tokens and turns of the
/// model calls it made so far (a call cut off mid-answer reported none).
pub(in crate::agent::driver) fn record_run_cancelled(span: &Span, usage: Usage, turns: usize) {
    if span.is_disabled() {
        return;
    }
    record_error(span, CANCELLED);
    span.record("reins.run.status", CANCELLED);
    record_usage(span, usage);
    span.record("reins.turn", int(turns as u64));
}

/// `future` inside `span` (a `chat` or `execute_tool` span); dropped before it finishes, the
/// span records `cancelled` as its `error.type`, with the `Error` status. A future that
/// finishes records nothing here: its caller records its outcome, with no await between.
pub(in crate::agent::driver) async fn cancellable<F: Future>(span: Span, future: F) -> F::Output {
    let mut cut_off = CutOff {
        span: &span,
        finished: false,
    };
    let output = future.instrument(span.clone()).await;
    cut_off.finished = true;
    output
}

/// Records `cancelled` on its span when dropped unless the future it guards finished.
struct CutOff<'s> {
    span: &'s Span,
    finished: bool,
}

impl Drop for CutOff<'_> {
    fn drop(&mut self) {
        if !self.finished && !self.span.is_disabled() {
            record_error(self.span, CANCELLED);
        }
    }
}
