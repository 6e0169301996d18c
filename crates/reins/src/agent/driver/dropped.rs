//! A run whose future is dropped before its end (a `tokio::time::timeout`, a `select!`, an
//! aborted task, a dropped `PromptStream`): the driver, dropped with it, records on the run's
//! span that it was cancelled, with its usage and turns so far. Its `chat` and
//! `execute_tool` spans cut off mid-way record it themselves (`trace::cancellable`).

use super::{Driver, trace};
use crate::completion::Usage;
use crate::run::RunState;

impl Driver<'_> {
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
            let usage = self.state.usage.since(started_with);
            trace::record_run_cancelled(span, usage, self.state.turn);
        }
    }
}
