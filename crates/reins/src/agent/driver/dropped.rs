//! A run whose future is dropped before its end (a `tokio::time::timeout`, a `select!`, an
//! aborted task, a dropped `PromptStream`): the driver, dropped with it, records on the run's
//! span that it was cancelled, with its usage and turns so far (every model call that
//! answered, the turn's under way included). Its `chat` and `execute_tool` spans cut off
//! mid-way record it themselves (`trace::cancellable`). A new run dropped before its first
//! model call's request records its input too, as its end would have.

use super::{Driver, trace};
use crate::completion::Usage;
use crate::run::RunState;
use std::sync::PoisonError;

impl Driver<'_> {
    /// Counts a model call of the turn under way that answered, for a drop before the turn's
    /// end (which adds to the state's usage what the turn keeps). A run whose span does not
    /// record keeps no count.
    pub(super) fn count_answered(&self, usage: Usage) {
        if self.unsettled.is_some() {
            *self.answered.lock().unwrap_or_else(PoisonError::into_inner) += usage;
        }
    }

    /// Forgets the turn's answered calls once the turn's end has counted them in the state.
    pub(super) fn forget_answered(&mut self) {
        *self
            .answered
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner) = Usage::default();
    }

    /// The run's state once its end is known, which the caller records on the run's span: a
    /// drop from here on is no cancellation. (Taken out of the driver, as a type with a drop
    /// of its own cannot be moved out of.) With it, the usage the state held when the run
    /// started: a resumed run's span records only its own.
    pub(super) fn settle(&mut self) -> (RunState, Usage) {
        let started_with = self.unsettled.take().map(|(_, usage)| usage);
        let state = std::mem::replace(
            &mut self.state,
            RunState::new(String::new(), None, Vec::new()),
        );
        (state, started_with.unwrap_or_default())
    }
}

impl Drop for Driver<'_> {
    /// A run dropped before [`Driver::settle`] was cut off at an await: no code after it ran,
    /// so its outcome was never recorded. Free for an untraced run: `unsettled` is `None`.
    fn drop(&mut self) {
        if let Some((span, started_with)) = self.unsettled.take() {
            let mut usage = self.state.usage;
            usage += *self
                .answered
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner);
            let usage = usage.since(started_with);
            // A new run dropped before its first model call's request was recorded: the prompt
            // is at the end of the history, unless the run-start hooks or a model call had it
            // then (see `Driver::start`; a lent history is empty here) and nothing is recorded.
            if std::mem::take(self.input_unrecorded.get_mut()) && self.new_run {
                trace::record_run_input(span, &self.state.history);
            }
            trace::record_run_cancelled(span, usage, self.state.turn);
        }
    }
}
