//! How a turn's model calls are traced ([`ChatSpans`]): not at all when nothing records, else
//! one `chat` span per model call. Generic rather than a span checked at each step, so that the
//! untraced path, every run's without a subscriber, is compiled with no span handling at all:
//! the checks and the instrumented futures cost the untraced tool loop some 200 instructions a
//! turn.

use super::Halt;
use super::trace;
use crate::completion::CompletionResponse;
use std::future::Future;
use tracing::{Instrument, Span};

/// The spans of a turn's model calls.
pub(super) trait ChatSpans {
    /// `future`, run inside the current call's span.
    fn within<F: Future>(&self, future: F) -> impl Future<Output = F::Output>;

    /// Records the current call's response: the model's, before the outcome hooks judge it,
    /// or the one a hook served in place of a failed call.
    fn record_response(&self, response: &CompletionResponse);

    /// Records why the current call (with its hooks) failed.
    fn record_failure(&self, halt: &Halt);

    /// Opens the span of the turn's next call (a retry an outcome hook asked for).
    fn next_call(&mut self, run_id: &str, turn: usize);
}

/// Nothing records: no span.
pub(super) struct Untraced;

impl ChatSpans for Untraced {
    #[inline]
    fn within<F: Future>(&self, future: F) -> impl Future<Output = F::Output> {
        future
    }

    #[inline]
    fn record_response(&self, _response: &CompletionResponse) {}

    #[inline]
    fn record_failure(&self, _halt: &Halt) {}

    #[inline]
    fn next_call(&mut self, _run_id: &str, _turn: usize) {}
}

/// A `chat` span for each call, the first opened before the turn's hooks.
pub(super) struct Traced(pub Span);

impl ChatSpans for Traced {
    fn within<F: Future>(&self, future: F) -> impl Future<Output = F::Output> {
        future.instrument(self.0.clone())
    }

    fn record_response(&self, response: &CompletionResponse) {
        trace::record_chat_response(&self.0, response);
    }

    fn record_failure(&self, halt: &Halt) {
        trace::record_chat_failure(&self.0, halt);
    }

    fn next_call(&mut self, run_id: &str, turn: usize) {
        self.0 = trace::chat_span(run_id, turn);
    }
}
