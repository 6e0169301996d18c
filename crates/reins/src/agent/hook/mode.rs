//! How a stack calls a member hook, in either [`Mode`]: in [`Caught`] mode (a run's calls) a
//! hook's panic is caught around each poll of its answer and comes back as a value: the rule
//! that called it ends with a [`HookFailure`], which the run turns into
//! `PromptError::HookPanicked`; nothing is re-raised. In [`Direct`] mode (a stack's own
//! [`AgentHook`](super::AgentHook) methods) nothing is caught: a member's panic unwinds to
//! whoever called the stack.
//!
//! [`AsyncMethod`] and [`SyncMethod`] say how to call one row's method of a hook, and what a
//! stack answers to it as one hook; their implementations are generated in `rows.rs`. A rule
//! awaits a member hook's answer where it keeps it ([`HookAnswer`], see `member_answer!` in
//! `compose.rs`).

use super::HookContext;
use super::StepEventKind;
use super::defaults::{Learning, Row, call_watched, poll_watched};
use super::erased::{ErasedHook, HookFuture};
use super::stack::{Held, HookStack};
use super::table::Method;
use crate::panics::panic_message;
use std::any::Any;
use std::convert::Infallible;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A hook panicked; the run ends with
/// [`PromptError::HookPanicked`](crate::agent::PromptError::HookPanicked).
#[derive(Debug, Clone)]
pub(crate) struct HookFailure {
    pub kind: StepEventKind,
    pub message: String,
}

/// How a stack calls its members: [`Caught`] or [`Direct`].
pub(crate) trait Mode: 'static {
    /// A member's panic, as its answer carries it.
    type Panic: Send + 'static;
    /// What a rule ends with when a member panicked.
    type Error: Send;
    /// Polls a member hook's answer once, its panic caught or not.
    fn poll_hook<A>(
        answer: Pin<&mut HookFuture<'_, A>>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<A, Self::Panic>>;
    /// Calls the synchronous method `M` of `held`.
    fn call_now<M: SyncMethod>(
        held: &Held,
        ctx: &HookContext,
        event: M::Event<'_>,
    ) -> Result<M::Action, Self::Panic>;
    /// A member's panic on an event of `kind`, classified.
    fn failure(kind: StepEventKind, panic: Self::Panic) -> Self::Error;
}

/// A run's calls: a member's panic is caught around each poll of its answer, its payload
/// carried as it is (no conversion on the way of an answer), and classified as a
/// [`HookFailure`] when the rule ends with it.
pub(crate) enum Caught {}

/// The calls of a stack's own [`AgentHook`] methods: a member's panic unwinds to whoever
/// called the stack.
pub(crate) enum Direct {}

impl Mode for Caught {
    type Panic = Box<dyn Any + Send>;
    type Error = HookFailure;
    #[inline(always)]
    fn poll_hook<A>(
        answer: Pin<&mut HookFuture<'_, A>>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<A, Box<dyn Any + Send>>> {
        match std::panic::catch_unwind(AssertUnwindSafe(|| answer.poll(cx))) {
            Ok(polled) => polled.map(Ok),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
    #[inline(always)]
    fn call_now<M: SyncMethod>(
        held: &Held,
        ctx: &HookContext,
        event: M::Event<'_>,
    ) -> Result<M::Action, Box<dyn Any + Send>> {
        call_watched(learning::<M>(held, M::kind(&event)), || {
            std::panic::catch_unwind(AssertUnwindSafe(|| M::call(&*held.hook, ctx, event)))
        })
    }
    #[cold]
    fn failure(kind: StepEventKind, panic: Box<dyn Any + Send>) -> HookFailure {
        HookFailure {
            kind,
            message: panic_message(panic.as_ref()),
        }
    }
}

impl Mode for Direct {
    type Panic = Infallible;
    type Error = Infallible;
    #[inline(always)]
    fn poll_hook<A>(
        answer: Pin<&mut HookFuture<'_, A>>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<A, Infallible>> {
        answer.poll(cx).map(Ok)
    }
    #[inline(always)]
    fn call_now<M: SyncMethod>(
        held: &Held,
        ctx: &HookContext,
        event: M::Event<'_>,
    ) -> Result<M::Action, Infallible> {
        call_watched(learning::<M>(held, M::kind(&event)), || {
            Ok(M::call(&*held.hook, ctx, event))
        })
    }
    fn failure(_kind: StepEventKind, panic: Infallible) -> Infallible {
        panic
    }
}

/// One poll of a member hook's answer, pinned where the rule awaiting it keeps it, inside the
/// hook's watch while one is on (see `defaults.rs`).
pub(crate) struct HookAnswer<'a, 'e, A, G> {
    answer: Pin<&'a mut HookFuture<'e, A>>,
    learning: &'a mut Option<Learning<'e>>,
    mode: PhantomData<fn() -> G>,
}

impl<'a, 'e, A, G: Mode> HookAnswer<'a, 'e, A, G> {
    /// Awaits `answer`, watched by `learning`.
    #[inline(always)]
    pub(crate) fn new(
        answer: Pin<&'a mut HookFuture<'e, A>>,
        learning: &'a mut Option<Learning<'e>>,
    ) -> Self {
        HookAnswer {
            answer,
            learning,
            mode: PhantomData,
        }
    }
}

impl<A, G: Mode> Future for HookAnswer<'_, '_, A, G> {
    type Output = Result<A, G::Panic>;
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let answer = this.answer.as_mut();
        poll_watched(this.learning, || G::poll_hook(answer, cx))
    }
}

/// The watch of a call of `held` for an event of `kind`, while how it answers the kind is not
/// known (see `defaults.rs`).
#[inline(always)]
pub(crate) fn learning<'h, M: Method>(held: &'h Held, kind: StepEventKind) -> Option<Learning<'h>> {
    Learning::start(&held.answers, kind, const { Row::named(M::NAME) })
}

/// A row whose method is awaited.
pub(crate) trait AsyncMethod: Method {
    /// The method of a hook of any type, answering the event `event` lends.
    fn call<'s, 'e: 's>(
        hook: &'s dyn ErasedHook,
        ctx: &'s HookContext,
        event: &'s Self::Event<'e>,
    ) -> HookFuture<'s, Self::Action>;
    /// A stack's answer as one hook (its own `AgentHook` method): its rule over its members,
    /// called in [`Direct`] mode.
    fn stack<'e>(
        stack: &'e HookStack,
        ctx: &'e HookContext,
        event: Self::Event<'e>,
    ) -> impl Future<Output = Self::Action> + Send + 'e;
}

/// A row whose method is synchronous.
pub(crate) trait SyncMethod: Method {
    /// The method of a hook of any type.
    fn call(hook: &dyn ErasedHook, ctx: &HookContext, event: Self::Event<'_>) -> Self::Action;
    /// A stack's answer as one hook (its own `AgentHook` method): its rule over its members,
    /// called in [`Direct`] mode.
    fn stack(stack: &HookStack, ctx: &HookContext, event: Self::Event<'_>) -> Self::Action;
}
