//! A run whose future is dropped before its end (a `tokio::time::timeout`, a `select!`, an
//! aborted task, a dropped `PromptStream`): the driver, dropped with it, records on the run's
//! span that it was cancelled, with its usage and turns so far. Its `chat` and
//! `execute_tool` spans cut off mid-way record it themselves (`trace::cancellable`).

use super::{Driver, trace};
use crate::run::RunState;

impl Driver<'_> {
    /// The run's state once its end is known, which the caller records on the run's span: a
    /// drop from here on is no cancellation. (Taken out of the driver, as a type with a drop
    /// of its own cannot be moved out of.)
    pub(super) fn settle(&mut self) -> RunState {
        self.unsettled = None;
        std::mem::replace(
            &mut self.state,
            RunState::new(String::new(), None, Vec::new()),
        )
    }
}

impl Drop for Driver<'_> {
    /// A run dropped before [`Driver::settle`] was cut off at an await: no code after it ran,
    /// so its outcome was never recorded. Free for an untraced run: `unsettled` is `None`.
    fn drop(&mut self) {
        if let Some(span) = self.unsettled.take() {
            trace::record_run_cancelled(span, self.state.usage, self.state.turn);
        }
    }
}
