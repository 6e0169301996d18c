//! Ctrl-C at the approval question belongs to the question: it leaves the call waiting for a
//! decision by someone else (the run suspends, as a run without a terminal does), instead of
//! stopping the run with the call neither asked nor waiting. Everywhere else, and any Ctrl-C
//! after that one, it stops the run as [`crate::interrupt`] says.
//!
//! The signal reaches every listener of the process: the question registers here while it
//! waits for an answer ([`Asking::open`]), and the listeners that stop the run hand a Ctrl-C
//! to it ([`handed_to_a_question`]) instead of stopping.

use std::sync::{Mutex, PoisonError};
use tokio::sync::oneshot;

/// Where a Ctrl-C goes while a question waits for its answer (one at a time: the questions
/// take turns, `reins::hooks::approval::terminal::question`).
static ASKING: Mutex<Option<oneshot::Sender<()>>> = Mutex::new(None);

/// A question waiting for its answer, told of a Ctrl-C. It stops listening when dropped.
pub struct Asking {
    ctrl_c: oneshot::Receiver<()>,
}

impl Asking {
    /// Listens for a Ctrl-C until dropped.
    pub fn open() -> Asking {
        let (tell, ctrl_c) = oneshot::channel();
        *ASKING.lock().unwrap_or_else(PoisonError::into_inner) = Some(tell);
        Asking { ctrl_c }
    }

    /// Once a Ctrl-C came while it listened.
    pub async fn ctrl_c(&mut self) {
        if (&mut self.ctrl_c).await.is_err() {
            // Its sender is gone without a Ctrl-C: never, while it listens.
            std::future::pending::<()>().await;
        }
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        // Only its own (closed now): one handed a Ctrl-C already left nothing to take.
        self.ctrl_c.close();
        let mut asking = ASKING.lock().unwrap_or_else(PoisonError::into_inner);
        if asking.as_ref().is_some_and(|tell| tell.is_closed()) {
            *asking = None;
        }
    }
}

/// Hands the Ctrl-C that just came to the question waiting, if one is: `true` when it took
/// it (the caller goes on listening), `false` when none waits (the Ctrl-C stops the run).
pub fn handed_to_a_question() -> bool {
    let waiting = ASKING.lock().unwrap_or_else(PoisonError::into_inner).take();
    waiting.is_some_and(|tell| tell.send(()).is_ok())
}
