//! Ctrl-C at the approval question belongs to the question: it leaves the call waiting for a
//! decision by someone else (the run suspends, as a run without a terminal does), instead of
//! stopping the run with the call neither asked nor waiting. While the editor the question
//! started is open, every Ctrl-C is the editor's (it gets the signal too, and quits or not):
//! the run neither stops nor leaves the call. Everywhere else, and any Ctrl-C after the one
//! the question took, it stops the run as [`crate::interrupt`] says.
//!
//! The signal reaches every listener of the process: the question registers here for as long
//! as it is on the terminal ([`Asking::open`], before the call is shown, until the decision),
//! and the listeners that stop the run hand a Ctrl-C to it ([`handed_to_a_question`]) instead
//! of stopping. A listener may run on another thread than the question (the chat's does): a
//! registration that began only once the answer was awaited missed a Ctrl-C pressed between
//! the question being shown and its read, or between two of its answers, and that Ctrl-C
//! stopped the run; an answer read in the same instant as a Ctrl-C was taken, and the Ctrl-C
//! (handed, so not a stop either) was lost.
//!
//! The listeners are told of a signal a moment after it came, and may be told of a Ctrl-C
//! pressed in the editor only once the editor has exited (one Ctrl-C quits it and reaches
//! reins at the same time). So the editor keeps Ctrl-C a moment longer ([`SETTLE`]), or, when
//! a Ctrl-C quit it, until the listeners have handed that one over ([`TOLD_WITHIN`] at most):
//! the question after it never takes the editor's Ctrl-C for its own.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::watch;

/// How long after the editor exits a Ctrl-C is still taken as the editor's: one pressed just
/// before it exited may reach the listeners only now.
const SETTLE: Duration = Duration::from_millis(300);

/// How long, at most, the listeners are waited for to hand over the Ctrl-C that quit the
/// editor (none comes when the editor alone was sent the signal, by `kill -INT`).
const TOLD_WITHIN: Duration = Duration::from_secs(2);

/// What a Ctrl-C does to the question that is on the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// It waits for the person: a Ctrl-C leaves its call waiting.
    Listening,
    /// Its editor is open (or has just exited): a Ctrl-C is the editor's; `told` once one was
    /// handed over.
    Editing {
        /// Whether a Ctrl-C was handed over while the editor had it.
        told: bool,
    },
    /// A Ctrl-C came: the call is left waiting, and the next Ctrl-C stops the run.
    LeftWaiting,
}

/// The question on the terminal, if one is (one at a time: the questions take turns,
/// `reins::hooks::approval::terminal::question`).
static ASKING: Mutex<Option<Arc<watch::Sender<State>>>> = Mutex::new(None);

/// A question on the terminal, told of a Ctrl-C. It stops listening when dropped.
pub struct Asking {
    state: Arc<watch::Sender<State>>,
}

impl Asking {
    /// Listens for a Ctrl-C until dropped.
    pub fn open() -> Asking {
        let state = Arc::new(watch::Sender::new(State::Listening));
        *ASKING.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&state));
        Asking { state }
    }

    /// What `read` gives (a line the person typed), or `None` when a Ctrl-C came before it
    /// did, or while it was read: a Ctrl-C handed to the question is never lost to an answer
    /// read in the same instant.
    pub async fn answer<T>(&self, read: impl Future<Output = T>) -> Option<T> {
        let mut state = self.state.subscribe();
        let answer = tokio::select! {
            biased;
            _ = state.wait_for(|state| *state == State::LeftWaiting) => None,
            answer = read => Some(answer),
        };
        answer.filter(|_| !self.left_waiting())
    }

    /// What `editing` gives (an editor run to its end), every Ctrl-C meanwhile the editor's,
    /// and for a moment after ([`SETTLE`]; when `quit_with_ctrl_c` says that a Ctrl-C quit
    /// it, until that one was handed over); `None`, without starting it, when a Ctrl-C came
    /// first.
    pub async fn editor<T>(
        &self,
        editing: impl Future<Output = T>,
        quit_with_ctrl_c: impl FnOnce(&T) -> bool,
    ) -> Option<T> {
        let opened = self.state.send_if_modified(|state| match state {
            State::Listening => {
                *state = State::Editing { told: false };
                true
            }
            State::Editing { .. } | State::LeftWaiting => false,
        });
        if !opened {
            return None;
        }
        let edited = editing.await;
        let mut state = self.state.subscribe();
        let told = |state: &State| *state == State::Editing { told: true };
        if quit_with_ctrl_c(&edited) {
            let _ = tokio::time::timeout(TOLD_WITHIN, state.wait_for(told)).await;
        } else {
            tokio::time::sleep(SETTLE).await;
        }
        self.state.send_replace(State::Listening);
        Some(edited)
    }

    /// Whether a Ctrl-C left the call waiting.
    pub fn left_waiting(&self) -> bool {
        *self.state.borrow() == State::LeftWaiting
    }

    /// Stops listening (a Ctrl-C from now on stops the run): whether a Ctrl-C left the call
    /// waiting before it did, so that none is lost to a decision made in the same instant.
    pub fn close(self) -> bool {
        self.unregister();
        self.left_waiting()
    }

    fn unregister(&self) {
        let mut asking = ASKING.lock().unwrap_or_else(PoisonError::into_inner);
        if asking
            .as_ref()
            .is_some_and(|state| Arc::ptr_eq(state, &self.state))
        {
            *asking = None;
        }
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        self.unregister();
    }
}

/// Hands the Ctrl-C that just came to the question on the terminal, if one is: `true` when
/// it took it (the caller goes on listening), `false` when none is, or its call was already
/// left waiting (the Ctrl-C stops the run).
pub fn handed_to_a_question() -> bool {
    let asking = ASKING.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(state) = asking.as_ref() else {
        return false;
    };
    let mut taken = false;
    state.send_if_modified(|state| match state {
        State::Listening => {
            *state = State::LeftWaiting;
            taken = true;
            true
        }
        State::Editing { told } => {
            taken = true;
            !std::mem::replace(told, true)
        }
        State::LeftWaiting => false,
    });
    taken
}

#[cfg(test)]
mod tests {
    use super::{Asking, handed_to_a_question};
    use tokio::sync::{Mutex, MutexGuard};

    /// The question is the process's: these tests take turns with it.
    async fn one_at_a_time() -> MutexGuard<'static, ()> {
        static TURN: Mutex<()> = Mutex::const_new(());
        TURN.lock().await
    }

    /// A Ctrl-C pressed once the question is shown, before its answer is read (or between
    /// two answers), is the question's: it leaves the call waiting, not the run stopped.
    #[tokio::test]
    async fn a_ctrl_c_before_the_answer_is_read_is_the_questions() {
        let _turn = one_at_a_time().await;
        let asking = Asking::open();
        assert!(handed_to_a_question(), "the question takes it");
        assert_eq!(asking.answer(std::future::pending::<()>()).await, None);
        assert!(asking.left_waiting());
    }

    /// An answer read in the same instant as a Ctrl-C does not win over it: the Ctrl-C was
    /// handed (it stopped nothing), so taking the answer would lose it.
    #[tokio::test]
    async fn a_ctrl_c_with_an_answer_leaves_the_call_waiting() {
        let _turn = one_at_a_time().await;
        for _ in 0..64 {
            let asking = Asking::open();
            let answer = asking.answer(async {
                assert!(handed_to_a_question());
                "a"
            });
            assert_eq!(answer.await, None);
        }
    }

    #[tokio::test]
    async fn an_answer_without_a_ctrl_c_is_the_answer() {
        let _turn = one_at_a_time().await;
        let asking = Asking::open();
        assert_eq!(asking.answer(async { "a" }).await, Some("a"));
        assert!(!asking.left_waiting());
    }

    /// A second Ctrl-C stops the run; so does one with no question on the terminal.
    #[tokio::test]
    async fn only_the_first_ctrl_c_is_the_questions() {
        let _turn = one_at_a_time().await;
        let asking = Asking::open();
        assert!(handed_to_a_question());
        assert!(!handed_to_a_question(), "the second stops the run");
        drop(asking);
        assert!(!handed_to_a_question(), "no question is on the terminal");
    }

    /// While the editor is open every Ctrl-C is the editor's: the call is not left waiting,
    /// the run not stopped, and the question goes on once the editor is closed.
    #[tokio::test]
    async fn every_ctrl_c_while_the_editor_is_open_is_the_editors() {
        let _turn = one_at_a_time().await;
        let asking = Asking::open();
        let edited = asking.editor(
            async {
                assert!(handed_to_a_question());
                assert!(handed_to_a_question());
                "edited"
            },
            |_| true,
        );
        assert_eq!(edited.await, Some("edited"));
        assert!(!asking.left_waiting());
        assert!(
            handed_to_a_question(),
            "back at the question, it is the question's"
        );
        assert!(asking.left_waiting());
        let reopened = asking.editor(async { "edited" }, |_| false).await;
        assert_eq!(reopened, None, "not opened");
    }

    /// The Ctrl-C that quit the editor may reach the listeners once it has exited: it is
    /// the editor's still, not the question's after it.
    #[tokio::test(flavor = "multi_thread")]
    async fn the_ctrl_c_that_quit_the_editor_told_late_is_the_editors() {
        let _turn = one_at_a_time().await;
        let asking = Asking::open();
        let (told, late) = tokio::sync::oneshot::channel::<()>();
        let listener = tokio::spawn(async move {
            let _ = late.await;
            handed_to_a_question()
        });
        let edited = asking.editor(async { told.send(()) }, |_| true).await;
        assert_eq!(edited, Some(Ok(())));
        assert!(listener.await.expect("the listener"), "it took it");
        assert!(!asking.left_waiting());
    }
}
