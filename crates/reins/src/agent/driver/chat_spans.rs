//! How a turn's model calls are traced ([`ChatSpans`]): not at all when nothing records, else
//! one `chat` span per model call. Generic rather than a span checked at each step, so that the
//! untraced path, every run's without a subscriber, is compiled with no span handling at all:
//! the checks and the instrumented futures cost the untraced tool loop some 200 instructions a
//! turn.

use super::Halt;
use super::trace;
use crate::completion::{CompletionRequest, CompletionResponse, DynCompletionModel};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use tracing::Span;

/// The spans of a turn's model calls.
pub(super) trait ChatSpans {
    /// `future`, run inside the current call's span; dropped before it finishes (the run
    /// was dropped), the span records that the call was cut off.
    fn within<F: Future>(&self, future: F) -> impl Future<Output = F::Output>;

    /// Records the current call's model and request (`streamed`: its answer is asked for as
    /// a stream), as its dispatch hooks left it.
    fn record_request(
        &self,
        model: &dyn DynCompletionModel,
        label: &str,
        request: &CompletionRequest,
        streamed: bool,
    );

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
    fn record_request(
        &self,
        _model: &dyn DynCompletionModel,
        _label: &str,
        _request: &CompletionRequest,
        _streamed: bool,
    ) {
    }

    #[inline]
    fn record_response(&self, _response: &CompletionResponse) {}

    #[inline]
    fn record_failure(&self, _halt: &Halt) {}

    #[inline]
    fn next_call(&mut self, _run_id: &str, _turn: usize) {}
}

/// A `chat` span for each call, the first opened before the turn's hooks.
pub(super) struct Traced<'d> {
    /// The current call's span.
    pub chat: Span,
    /// The run's span, when the turn's first call's request is the run's input (a new run's
    /// first turn), with the driver's note that the input is not recorded yet: the request
    /// records it there and clears the note, so that a run that ends before knows to record
    /// its input itself. Not a retried call's.
    pub run: Option<(Span, &'d AtomicBool)>,
}

impl ChatSpans for Traced<'_> {
    fn within<F: Future>(&self, future: F) -> impl Future<Output = F::Output> {
        trace::cancellable(self.chat.clone(), future)
    }

    fn record_request(
        &self,
        model: &dyn DynCompletionModel,
        label: &str,
        request: &CompletionRequest,
        streamed: bool,
    ) {
        trace::record_chat_request(model, label, request, streamed);
        if let Some((run, unrecorded)) = &self.run {
            if unrecorded.swap(false, Ordering::Relaxed) {
                trace::record_run_input(run, &request.history);
            }
        }
    }

    fn record_response(&self, response: &CompletionResponse) {
        trace::record_chat_response(&self.chat, response);
    }

    fn record_failure(&self, halt: &Halt) {
        trace::record_chat_failure(&self.chat, halt);
    }

    fn next_call(&mut self, run_id: &str, turn: usize) {
        self.chat = trace::chat_span(run_id, turn);
        self.run = None;
    }
}
