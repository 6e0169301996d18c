//! Which hooks answer a kind of event with [`AgentHook`](super::AgentHook)'s defaults alone,
//! learned on the first call, so a stack stops calling them for it.
//!
//! A hook observes every kind by default, and a typed method's default asks `on_event`, so a
//! hook that implements only `on_dispatch` would still be called about eight times a turn and
//! answer `Continue` to all but one. Whether a method is overridden cannot be read from the
//! type, so the defaults say so when they answer: the default `on_event` and
//! `on_model_select` record [`Reached`] (this hook's type, this kind, this row), and a typed
//! method's default (`via_on_event`) upgrades the record of its own type's `on_event` to its
//! row.
//! A stack calls a hook whose answer for a kind it has not learned yet inside a watch
//! ([`Learning`]): the record is cleared before each poll and restored after it, so only what
//! this hook's own future ran is seen. When the future finishes having reached the defaults of
//! the very row the stack called, of this very type, no code of the user's ran and the answer
//! is `Continue` every time: the kind is marked [`DefaultAnswers::proven`] and later calls are
//! skipped (and an event only such hooks observe is not even built). Any other finish marks
//! the kind as the user's, and it is never watched again.
//!
//! A record names the hook by its type and the row by its name, and a type's method that the
//! user wrote cannot reach the default body it overrides, on any value of the type: calling
//! another type's defaults (a wrapper delegating to the hook it wraps) or another row's from
//! user code never passes for this row's.

use crate::agent::event_kind::StepEventKind;
use std::any::TypeId;
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::Poll;

// One bit per kind in each mask.
const _: () = assert!(StepEventKind::ALL.len() <= 32);

/// What a hook's defaults reached, recorded on the thread that polled them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reached {
    /// The hook's type.
    hook: TypeId,
    kind: StepEventKind,
    /// The row whose default answered: `on_event`, or the typed method that asked it.
    row: &'static str,
}

thread_local! {
    static REACHED: Cell<Option<Reached>> = const { Cell::new(None) };
}

/// The type of a hook, by one of its values.
#[inline]
pub(crate) fn type_of<H: ?Sized + 'static>(_: &H) -> TypeId {
    TypeId::of::<H>()
}

/// Recorded by a default body that answers without asking anything else: the default
/// `on_event` (row `on_event`), the default `on_model_select`, or a typed default whose event
/// the step view does not show.
#[inline]
pub(crate) fn answered(hook: TypeId, kind: StepEventKind, row: &'static str) {
    REACHED.set(Some(Reached { hook, kind, row }));
}

/// Recorded by a typed method's default after `on_event` answered `step_kind`: when that was
/// the default `on_event` of the same hook, the typed row answered by defaults alone.
#[inline]
pub(crate) fn answered_via_on_event(
    hook: TypeId,
    step_kind: StepEventKind,
    kind: StepEventKind,
    row: &'static str,
) {
    let from_on_event = Some(Reached {
        hook,
        kind: step_kind,
        row: ON_EVENT,
    });
    if REACHED.get() == from_on_event {
        answered(hook, kind, row);
    }
}

/// The row name of `on_event`.
pub(crate) const ON_EVENT: &str = "on_event";

/// Per hook: the kinds it answers with defaults alone, and the kinds its own code answers.
#[derive(Debug)]
pub(crate) struct DefaultAnswers {
    hook: TypeId,
    proven: AtomicU32,
    users: AtomicU32,
}

impl DefaultAnswers {
    /// Nothing known yet of a hook of type `H`.
    pub fn of<H: ?Sized + 'static>() -> Self {
        DefaultAnswers {
            hook: TypeId::of::<H>(),
            proven: AtomicU32::new(0),
            users: AtomicU32::new(0),
        }
    }

    /// Whether the hook is known to answer `kind` with its defaults alone.
    #[inline]
    pub fn proven(&self, kind: StepEventKind) -> bool {
        self.proven.load(Ordering::Relaxed) & bit(kind) != 0
    }

    /// Whether nothing is known yet of how the hook answers `kind`.
    #[inline]
    pub fn unknown(&self, kind: StepEventKind) -> bool {
        (self.proven.load(Ordering::Relaxed) | self.users.load(Ordering::Relaxed)) & bit(kind) == 0
    }

    fn learn(&self, kind: StepEventKind, by_defaults: bool) {
        let mask = if by_defaults {
            &self.proven
        } else {
            &self.users
        };
        mask.fetch_or(bit(kind), Ordering::Relaxed);
    }
}

#[inline]
fn bit(kind: StepEventKind) -> u32 {
    1 << kind.index()
}

/// A call of a hook whose answer to its kind is being learned.
#[derive(Debug)]
pub(crate) struct Learning<'h> {
    answers: &'h DefaultAnswers,
    expected: Reached,
    by_defaults: bool,
}

impl<'h> Learning<'h> {
    /// Watches a call of `row` for `kind` on the hook `answers` are of, when its answer is
    /// unknown.
    #[inline]
    pub fn start(
        answers: &'h DefaultAnswers,
        kind: StepEventKind,
        row: &'static str,
    ) -> Option<Self> {
        answers.unknown(kind).then_some(Learning {
            answers,
            expected: Reached {
                hook: answers.hook,
                kind,
                row,
            },
            by_defaults: false,
        })
    }

    /// Runs one poll of the watched hook's answer; the poll that answers teaches how the
    /// kind is answered. A panic (`Err`) teaches nothing.
    pub fn watch_poll<T, E>(
        &mut self,
        poll: impl FnOnce() -> Poll<Result<T, E>>,
    ) -> Poll<Result<T, E>> {
        let polled = self.watch(poll);
        if let Poll::Ready(Ok(_)) = polled {
            self.finish();
        }
        polled
    }

    /// Runs the watched hook's synchronous call; its answer teaches how the kind is answered.
    /// A panic (`Err`) teaches nothing.
    pub fn watch_call<T, E>(mut self, call: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        let answer = self.watch(call);
        if answer.is_ok() {
            self.finish();
        }
        answer
    }

    fn watch<R>(&mut self, run: impl FnOnce() -> R) -> R {
        let outer = REACHED.take();
        let ran = run();
        let reached = REACHED.replace(outer);
        self.by_defaults |= reached == Some(self.expected);
        ran
    }

    fn finish(&self) {
        self.answers.learn(self.expected.kind, self.by_defaults);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Mine;
    struct Other;

    fn mine() -> TypeId {
        TypeId::of::<Mine>()
    }

    #[test]
    fn a_watch_sees_only_what_ran_inside_it_and_restores_the_outer_record() {
        let answers = DefaultAnswers::of::<Mine>();
        let kind = StepEventKind::ToolDispatch;
        answered(mine(), StepEventKind::RunStart, "on_run_start");
        let Some(mut learning) = Learning::start(&answers, kind, "on_dispatch") else {
            panic!("nothing is known yet")
        };
        // Another type's defaults inside the watch do not pass for this one's.
        let _ = learning.watch_poll(|| {
            answered(TypeId::of::<Other>(), kind, "on_dispatch");
            Poll::Ready(Ok::<_, ()>(()))
        });
        assert!(!answers.proven(kind));
        assert!(!answers.unknown(kind), "the user's answer is learned");
        assert_eq!(
            REACHED.get(),
            Some(Reached {
                hook: mine(),
                kind: StepEventKind::RunStart,
                row: "on_run_start"
            })
        );
    }

    #[test]
    fn a_typed_default_counts_only_after_its_own_types_default_on_event() {
        let answers = DefaultAnswers::of::<Mine>();
        let kind = StepEventKind::TextDelta;
        let Some(mut learning) = Learning::start(&answers, kind, "on_text_delta") else {
            panic!("nothing is known yet")
        };
        // A pending poll that reached the defaults, then the finish.
        let _ = learning.watch_poll(|| {
            answered(mine(), kind, ON_EVENT);
            answered_via_on_event(mine(), kind, kind, "on_text_delta");
            Poll::<Result<(), ()>>::Pending
        });
        assert!(answers.unknown(kind));
        let _ = learning.watch_poll(|| Poll::Ready(Ok::<_, ()>(())));
        assert!(answers.proven(kind));

        // Another type's `on_event` does not upgrade, nor does the default `on_event` alone.
        for reached in [(TypeId::of::<Other>(), true), (mine(), false)] {
            let other = DefaultAnswers::of::<Mine>();
            let Some(mut learning) = Learning::start(&other, kind, "on_text_delta") else {
                panic!("nothing is known yet")
            };
            let _ = learning.watch_poll(|| {
                answered(reached.0, kind, ON_EVENT);
                if reached.1 {
                    answered_via_on_event(mine(), kind, kind, "on_text_delta");
                }
                Poll::Ready(Ok::<_, ()>(()))
            });
            assert!(!other.proven(kind));
        }
    }

    #[test]
    fn a_panic_teaches_nothing() {
        let answers = DefaultAnswers::of::<Mine>();
        let kind = StepEventKind::RunStart;
        let Some(learning) = Learning::start(&answers, kind, "on_run_start") else {
            panic!("nothing is known yet")
        };
        let _ = learning.watch_call(|| Err::<(), _>("panicked"));
        assert!(answers.unknown(kind));
    }
}
