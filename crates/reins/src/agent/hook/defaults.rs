//! Which hooks answer a kind of event with [`AgentHook`](super::AgentHook)'s defaults alone,
//! learned on the first call, so a stack stops calling them for it.
//!
//! A hook observes every kind by default, and a typed method's default asks `on_event`, so a
//! hook that implements only `on_dispatch` would still be called about eight times a turn and
//! answer `Continue` to all but one. Whether a method is overridden cannot be read from the
//! type, so the defaults say so when they answer: the default `on_event` and
//! `on_model_select` record [`Reached`] (this hook's type, this kind, this [`Row`]), and a
//! typed method's default (`via_on_event`) upgrades the record of its own type's `on_event`
//! to its typed row.
//! A stack calls a hook whose answer for a kind it has not learned yet inside a watch
//! ([`Learning`]): the record is cleared before each poll and restored after it, so only what
//! this hook's own future ran is seen. When the future finishes having reached the defaults of
//! the very row the stack called, of this very type, no code of the user's ran and the answer
//! is `Continue` every time: the kind is marked [`DefaultAnswers::proven`] and later calls are
//! skipped (and an event only such hooks observe is not even built). Any other finish marks
//! the kind as the user's, and it is never watched again.
//!
//! A record names the hook by its type and the row as `on_event` or the kind's typed method
//! (every kind has at most one), and a type's method that the user wrote cannot reach the
//! default body it overrides, on any value of the type: calling another type's defaults (a
//! wrapper delegating to the hook it wraps), another kind's, or its own default `on_event`
//! from user code never passes for this row's.

use crate::agent::event_kind::StepEventKind;
use std::any::TypeId;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
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
    row: Row,
}

/// Which method of a kind answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Row {
    /// `on_event`.
    OnEvent,
    /// The kind's typed method (`on_dispatch` for a dispatch, …).
    Typed,
}

impl Row {
    /// The row of the hook method named `name`.
    pub const fn named(name: &str) -> Row {
        let (name, on_event) = (name.as_bytes(), b"on_event");
        if name.len() != on_event.len() {
            return Row::Typed;
        }
        let mut at = 0;
        while at < name.len() {
            if name[at] != on_event[at] {
                return Row::Typed;
            }
            at += 1;
        }
        Row::OnEvent
    }
}

thread_local! {
    static REACHED: Cell<Option<Reached>> = const { Cell::new(None) };
}

/// The type of a hook. (A constant of the type: a default body computes it where it records,
/// so its future holds nothing more for it.)
#[inline]
pub(crate) fn type_id<H: ?Sized + 'static>() -> TypeId {
    TypeId::of::<H>()
}

/// Recorded by a default body that answers without asking anything else: the default
/// `on_event` (row `on_event`), the default `on_model_select`, or a typed default whose event
/// the step view does not show.
#[inline]
pub(crate) fn answered(hook: TypeId, kind: StepEventKind, row: Row) {
    REACHED.set(Some(Reached { hook, kind, row }));
}

/// Recorded by a typed method's default after `on_event` answered its event of `kind` in the
/// step view: when that was the default `on_event` of the same hook type, the typed row
/// answered by defaults alone.
#[inline]
pub(crate) fn answered_via_on_event(hook: TypeId, kind: StepEventKind) {
    let from_on_event = Some(Reached {
        hook,
        kind,
        row: Row::OnEvent,
    });
    if REACHED.get() == from_on_event {
        answered(hook, kind, Row::Typed);
    }
}

/// Per hook: the kinds it answers with defaults alone (the low 32 bits of `known`, a bit per
/// kind) and the kinds its own code answers (the high 32 bits), read with one load.
#[derive(Debug)]
pub(crate) struct DefaultAnswers {
    hook: TypeId,
    known: AtomicU64,
}

impl DefaultAnswers {
    /// Nothing known yet of a hook of type `H`.
    pub fn of<H: ?Sized + 'static>() -> Self {
        DefaultAnswers {
            hook: TypeId::of::<H>(),
            known: AtomicU64::new(0),
        }
    }

    /// Whether the hook is known to answer `kind` with its defaults alone.
    #[inline]
    pub fn proven(&self, kind: StepEventKind) -> bool {
        self.known.load(Ordering::Relaxed) & bit(kind) != 0
    }

    /// Whether the hook is known to answer `kind` with code of the user's (it will be called
    /// for it on every event).
    #[inline]
    pub fn by_user(&self, kind: StepEventKind) -> bool {
        self.known.load(Ordering::Relaxed) & (bit(kind) << 32) != 0
    }

    /// Whether nothing is known yet of how the hook answers `kind`.
    #[inline]
    pub fn unknown(&self, kind: StepEventKind) -> bool {
        let known = self.known.load(Ordering::Relaxed);
        (known | known >> 32) & bit(kind) == 0
    }

    fn learn(&self, kind: StepEventKind, by_defaults: bool) {
        let bit = if by_defaults {
            bit(kind)
        } else {
            bit(kind) << 32
        };
        self.known.fetch_or(bit, Ordering::Relaxed);
    }
}

#[inline]
fn bit(kind: StepEventKind) -> u64 {
    1 << kind.index()
}

/// A call of a hook whose answer to its kind is being learned.
#[derive(Debug)]
pub(crate) struct Learning<'h> {
    answers: &'h DefaultAnswers,
    kind: StepEventKind,
    row: Row,
    by_defaults: bool,
}

impl<'h> Learning<'h> {
    /// Watches a call of `row` for `kind` on the hook `answers` are of, when its answer is
    /// unknown.
    #[inline]
    pub fn start(answers: &'h DefaultAnswers, kind: StepEventKind, row: Row) -> Option<Self> {
        answers.unknown(kind).then_some(Learning {
            answers,
            kind,
            row,
            by_defaults: false,
        })
    }

    /// Runs one poll of the watched hook's answer; the poll that answers teaches how the
    /// kind is answered. A panic (`Err`) teaches nothing. (Cold and out of line: a hook is
    /// watched only until its answer is known, and this code inlined into every rule spread
    /// the hot paths over more of the instruction cache.)
    #[cold]
    #[inline(never)]
    fn watch_poll<T, E>(
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
    /// A panic (`Err`) teaches nothing. (Cold and out of line, as `watch_poll`.)
    #[cold]
    #[inline(never)]
    fn watch_call<T, E>(mut self, call: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
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
        let expected = Reached {
            hook: self.answers.hook,
            kind: self.kind,
            row: self.row,
        };
        self.by_defaults |= reached == Some(expected);
        ran
    }

    fn finish(&self) {
        self.answers.learn(self.kind, self.by_defaults);
    }
}

/// One poll of a hook's answer, inside its watch while one is on (`learning`).
#[inline(always)]
pub(crate) fn poll_watched<T, E>(
    learning: &mut Option<Learning<'_>>,
    poll: impl FnOnce() -> Poll<Result<T, E>>,
) -> Poll<Result<T, E>> {
    match learning {
        None => poll(),
        Some(learning) => learning.watch_poll(poll),
    }
}

/// A hook's synchronous call, inside its watch while one is on (`learning`).
#[inline(always)]
pub(crate) fn call_watched<T, E>(
    learning: Option<Learning<'_>>,
    call: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    match learning {
        None => call(),
        Some(learning) => learning.watch_call(call),
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
        answered(mine(), StepEventKind::RunStart, Row::Typed);
        let Some(mut learning) = Learning::start(&answers, kind, Row::Typed) else {
            panic!("nothing is known yet")
        };
        // Another type's defaults inside the watch do not pass for this one's.
        let _ = learning.watch_poll(|| {
            answered(TypeId::of::<Other>(), kind, Row::Typed);
            Poll::Ready(Ok::<_, ()>(()))
        });
        assert!(!answers.proven(kind));
        assert!(!answers.unknown(kind), "the user's answer is learned");
        assert_eq!(
            REACHED.get(),
            Some(Reached {
                hook: mine(),
                kind: StepEventKind::RunStart,
                row: Row::Typed
            })
        );
    }

    #[test]
    fn a_typed_default_counts_only_after_its_own_types_default_on_event() {
        let answers = DefaultAnswers::of::<Mine>();
        let kind = StepEventKind::TextDelta;
        let Some(mut learning) = Learning::start(&answers, kind, Row::Typed) else {
            panic!("nothing is known yet")
        };
        // A pending poll that reached the defaults, then the finish.
        let _ = learning.watch_poll(|| {
            answered(mine(), kind, Row::OnEvent);
            answered_via_on_event(mine(), kind);
            Poll::<Result<(), ()>>::Pending
        });
        assert!(answers.unknown(kind));
        let _ = learning.watch_poll(|| Poll::Ready(Ok::<_, ()>(())));
        assert!(answers.proven(kind));

        // Another type's `on_event` does not upgrade, nor does the default `on_event` alone.
        for reached in [(TypeId::of::<Other>(), true), (mine(), false)] {
            let other = DefaultAnswers::of::<Mine>();
            let Some(mut learning) = Learning::start(&other, kind, Row::Typed) else {
                panic!("nothing is known yet")
            };
            let _ = learning.watch_poll(|| {
                answered(reached.0, kind, Row::OnEvent);
                if reached.1 {
                    answered_via_on_event(mine(), kind);
                }
                Poll::Ready(Ok::<_, ()>(()))
            });
            assert!(!other.proven(kind));
        }
    }

    #[test]
    fn the_row_of_on_event_is_told_from_the_typed_ones() {
        assert_eq!(Row::named("on_event"), Row::OnEvent);
        assert_eq!(Row::named("on_events"), Row::Typed);
        assert_eq!(Row::named("on_dispatch"), Row::Typed);
    }

    #[test]
    fn a_panic_teaches_nothing() {
        let answers = DefaultAnswers::of::<Mine>();
        let kind = StepEventKind::RunStart;
        let Some(learning) = Learning::start(&answers, kind, Row::Typed) else {
            panic!("nothing is known yet")
        };
        let _ = learning.watch_call(|| Err::<(), _>("panicked"));
        assert!(answers.unknown(kind));
    }
}
