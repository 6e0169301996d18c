//! The four composition rules of the hooks guide, as functions every event shares.
//!
//! Each rule calls the members that observe an event in registration order, in a [`Mode`]:
//! [`Caught`] for a run, where a member's panic ends the rule with a
//! [`HookFailure`](super::mode::HookFailure) value, or [`Direct`](super::mode::Direct) for
//! a stack's own `AgentHook` methods. How a chained event passes one hook's answer to the next
//! is its [`Link`] (in `links.rs`); how answers merge or decide is the action type's [`Merge`]
//! or [`Decision`].

use super::mode::{self, AsyncMethod, Caught, Mode, SyncMethod};
use super::stack::{Held, Observers};
use super::step::Flow;
use super::table::{Continued, Method};
use super::{
    CompletionCallAction, HookContext, InvalidToolCallAction, ModelTurnAction, ObservationAction,
    RequestPatch,
};
use crate::agent::StopReason;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::pin;

// The awaited rules are plain functions returning an `async move` block over their
// arguments, rather than `async fn`s (hence `allow(clippy::manual_async_fn)`): an `async fn`
// keeps each argument twice in its state machine (the argument, and the binding its body
// uses), and a run's futures hold these.

/// A member hook's answer to the awaited method `$method` in mode `$mode`, for the event
/// `$event` lends, of `$kind`, awaited inside the rule that asks it. A hook's erased method
/// writes its answer (a `HookFuture`, a few hundred bytes) straight into the rule's own
/// state, where it is polled and dropped: a helper returning a future around it would have
/// it copied three times on the way, once per call of every hook. The event is lent from
/// where the rule keeps it, and read where the hook's method is called (on the answer's
/// first poll, see `erased.rs`), so the answer keeps no second copy of it.
macro_rules! member_answer {
    ($method:ty, $mode:ty, $held:expr, $kind:expr, $ctx:expr, $event:expr) => {{
        let held: &Held = $held;
        let mut learning = mode::learning::<$method>(held, $kind);
        let answer = pin!(<$method as AsyncMethod>::call(&*held.hook, $ctx, $event));
        mode::HookAnswer::<_, $mode>::new(answer, &mut learning).await
    }};
}

/// **Chained**: each hook sees the value the earlier ones left in `link`; an answer may end
/// the chain.
#[allow(clippy::manual_async_fn)]
#[inline]
pub(crate) fn chained<M, G, L>(
    mut hooks: Observers<'_>,
    ctx: &HookContext,
    mut link: L,
) -> impl Future<Output = Result<L::Done, G::Error>>
where
    M: AsyncMethod + Chained,
    G: Mode,
    L: Link<M>,
{
    async move {
        let kind = hooks.kind();
        for hook in &mut hooks {
            // The answer is matched where it lands: an action can be large (a `RequestPatch`).
            // (The view and the event borrow `link`, which takes the answer once the call is
            // over.)
            let view = link.view();
            let event = M::event(&view);
            match member_answer!(M, G, hook, kind, ctx, &event) {
                Ok(action) => {
                    if let ControlFlow::Break(done) = link.take(action) {
                        return Ok(done);
                    }
                }
                Err(panic) => return Err(G::failure(kind, panic)),
            }
        }
        Ok(link.finish())
    }
}

/// **Chained**, for the synchronous `on_model_select`.
pub(crate) fn chained_now<M: SyncMethod + Chained, G: Mode, L: Link<M>>(
    hooks: Observers<'_>,
    ctx: &HookContext,
    mut link: L,
) -> Result<L::Done, G::Error> {
    let kind = hooks.kind();
    for hook in hooks {
        let view = link.view();
        let answer = G::call_now::<M>(hook, ctx, M::event(&view));
        match answer {
            Ok(action) => {
                if let ControlFlow::Break(done) = link.take(action) {
                    return Ok(done);
                }
            }
            Err(panic) => return Err(G::failure(kind, panic)),
        }
    }
    Ok(link.finish())
}

/// **Merged**: every hook sees the same event and their changes merge in order; an answer
/// may end it with a stop.
#[allow(clippy::manual_async_fn)]
#[inline]
pub(crate) fn merged<'e, M, G>(
    mut hooks: Observers<'e>,
    ctx: &'e HookContext,
    event: M::Event<'e>,
) -> impl Future<Output = Result<Merged<M::Action>, G::Error>>
where
    M: AsyncMethod,
    M::Action: Merge,
    G: Mode,
{
    async move {
        let kind = hooks.kind();
        let mut merged = None;
        for hook in &mut hooks {
            match member_answer!(M, G, hook, kind, ctx, &event) {
                Ok(action) => {
                    if let ControlFlow::Break(reason) = action.merge(&mut merged) {
                        return Ok(Stacked::Stop(reason));
                    }
                }
                Err(panic) => return Err(G::failure(kind, panic)),
            }
        }
        Ok(Stacked::Go(merged))
    }
}

/// **First decision wins**: the first hook that decides answers for all, and later hooks are
/// not called.
#[allow(clippy::manual_async_fn)]
#[inline]
pub(crate) fn first_decision<'e, M, G>(
    mut hooks: Observers<'e>,
    ctx: &'e HookContext,
    event: M::Event<'e>,
) -> impl Future<Output = Result<M::Action, G::Error>>
where
    M: AsyncMethod,
    M::Action: Decision,
    G: Mode,
{
    async move {
        let kind = hooks.kind();
        for hook in &mut hooks {
            match member_answer!(M, G, hook, kind, ctx, &event) {
                Ok(action) if action.decides() => return Ok(action),
                Ok(action) => action.set_aside(),
                Err(panic) => return Err(G::failure(kind, panic)),
            }
        }
        Ok(M::Action::continued())
    }
}

/// **Everyone observes**: every hook is called; a panic is logged and the others still run.
#[allow(clippy::manual_async_fn)]
#[inline]
pub(crate) fn everyone_observes<'e, M: AsyncMethod<Action = ()>>(
    mut hooks: Observers<'e>,
    ctx: &'e HookContext,
    event: M::Event<'e>,
) -> impl Future<Output = ()> {
    async move {
        let kind = hooks.kind();
        for hook in &mut hooks {
            if let Err(panic) = member_answer!(M, Caught, hook, kind, ctx, &event) {
                let failure = Caught::failure(kind, panic);
                tracing::error!(message = %failure.message, "a hook panicked in {}", M::NAME);
            }
        }
    }
}

/// The combined answer of a stack to a chained or merged event.
#[derive(Debug)]
pub(crate) enum Stacked<T> {
    /// Go on with this (possibly updated) value.
    Go(T),
    /// A hook ended the run.
    Stop(StopReason),
}

/// A chained method: what a link shows the next hook, and the event over it.
pub(crate) trait Chained: Method {
    /// What an event of the method refers to: what is dispatched or returned (with its kind)
    /// for a dispatch or an outcome, whose event is two words, a reference to it; the event
    /// itself for the others.
    type View<'v>: Copy + Send;
    /// The event over `view`.
    fn event<'v>(view: &'v Self::View<'_>) -> Self::Event<'v>;
}

/// What a chained event passes from hook to hook.
///
/// (The view is the method's, not the link's own associated type: a rule's future keeps the
/// view across each hook's await, and a type projected from the link, which borrows, could
/// not be proven `Send` there.)
pub(crate) trait Link<M: Chained> {
    /// What the chain ends with.
    type Done;
    /// The link as the next hook sees it.
    fn view(&self) -> M::View<'_>;
    /// Takes a hook's answer: go on to the next hook, or end the chain.
    fn take(&mut self, action: M::Action) -> ControlFlow<Self::Done>;
    /// Every hook answered without ending the chain.
    fn finish(self) -> Self::Done;
}

/// What a merged event's answers merge into: `None` when no hook changed anything.
pub(crate) type Merged<A> = Stacked<Option<<A as Merge>::Change>>;

/// An answer to a merged event.
pub(crate) trait Merge {
    /// What the hooks' answers merge into.
    type Change;
    /// Merges this answer into `merged`, or stops with a reason.
    fn merge(self, merged: &mut Option<Self::Change>) -> ControlFlow<StopReason>;
}

impl Merge for CompletionCallAction {
    type Change = RequestPatch;
    #[inline]
    fn merge(self, merged: &mut Option<RequestPatch>) -> ControlFlow<StopReason> {
        match self {
            CompletionCallAction::Continue => {}
            CompletionCallAction::Patch(patch) => match merged {
                Some(merged) => merged.merge(*patch),
                None => *merged = Some(*patch),
            },
            CompletionCallAction::Stop(reason) => return ControlFlow::Break(reason),
        }
        ControlFlow::Continue(())
    }
}

/// An answer to a first-decision event; when no hook decides, the answer is its
/// [`Continued`] one.
pub(crate) trait Decision: Continued {
    /// Whether this answer decides (later hooks are then not called).
    fn decides(&self) -> bool;
    /// Drops an answer that did not decide; one that owns nothing (`Continue`, `None`) is
    /// forgotten, since dropping it would run the type's whole drop glue, out of line, on
    /// every answer of every hook.
    fn set_aside(self);
}

impl Decision for ModelTurnAction {
    #[inline]
    fn decides(&self) -> bool {
        !matches!(self, ModelTurnAction::Continue)
    }
    #[inline]
    fn set_aside(self) {
        if let ModelTurnAction::Continue = self {
            std::mem::forget(self);
        }
    }
}

impl Decision for Option<InvalidToolCallAction> {
    #[inline]
    fn decides(&self) -> bool {
        self.is_some()
    }
    #[inline]
    fn set_aside(self) {
        if self.is_none() {
            std::mem::forget(self);
        }
    }
}

impl Decision for ObservationAction {
    #[inline]
    fn decides(&self) -> bool {
        matches!(self, ObservationAction::Stop(_))
    }
    #[inline]
    fn set_aside(self) {
        if let ObservationAction::Continue = self {
            std::mem::forget(self);
        }
    }
}

/// In the step view, only `Terminate` decides: it is all the step-view-only events honor.
impl Decision for Flow {
    #[inline]
    fn decides(&self) -> bool {
        matches!(self, Flow::Terminate(_))
    }
    #[inline]
    fn set_aside(self) {
        if let Flow::Continue = self {
            std::mem::forget(self);
        }
    }
}
