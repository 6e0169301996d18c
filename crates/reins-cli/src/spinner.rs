//! The "thinking" spinner shown on a terminal while the model works. One per process, since
//! there is one terminal: whoever asks the person something there (the approval prompt) stops
//! it first, or its next tick would write over the question.

use indicatif::{ProgressBar, ProgressStyle};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

static SPINNER: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Starts the spinner, unless it turns already.
pub fn start() {
    let mut spinner = SPINNER.lock().unwrap_or_else(PoisonError::into_inner);
    if spinner.is_some() {
        return;
    }
    let shown = ProgressBar::new_spinner();
    shown.set_style(
        ProgressStyle::with_template("{spinner} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    shown.set_message("thinking");
    shown.enable_steady_tick(Duration::from_millis(100));
    *spinner = Some(shown);
}

/// Stops the spinner and clears its line, if it turns.
pub fn stop() {
    let stopped = SPINNER
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(spinner) = stopped {
        spinner.finish_and_clear();
    }
}

/// Runs `write` (which writes a line on stderr) with the spinner's line cleared, drawing the
/// spinner again after it, so the two never share a line: the warnings libraries log while
/// the model thinks (`warnings`).
pub fn suspend<R>(write: impl FnOnce() -> R) -> R {
    let spinner = SPINNER.lock().unwrap_or_else(PoisonError::into_inner);
    match spinner.as_ref() {
        Some(shown) => shown.suspend(write),
        None => write(),
    }
}
