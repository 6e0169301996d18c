//! How a stack calls a member, in either [`Mode`]: in [`Caught`] mode (a run's calls) a
//! hook's panic is caught around its future and comes back as a value: the rule that called it
//! ends with a [`HookFailure`], which the run turns into `PromptError::HookPanicked`. A nested
//! stack runs its rule over its own members in the same mode and hands its failure to the
//! enclosing rule as its answer, which keeps it as it is, so a panic in a nested stack reaches
//! the run classified as if the hook had been registered directly; nothing is re-raised. In
//! [`Direct`] mode (a stack's own [`AgentHook`](super::AgentHook) methods) nothing is caught: a
//! member's panic unwinds to whoever called the stack.
//!
//! [`AsyncMethod`] and [`SyncMethod`] say how to call one row's method of a hook and of a
//! nested stack; their implementations are generated in `nested.rs`.

use super::HookContext;
use super::StepEventKind;
use super::defaults::{Learning, Row, call_watched, poll_watched};
use super::erased::{ErasedHook, HookFuture};
use super::stack::{Held, HookStack, Member};
use super::table::Method;
use crate::tool::panic_message;
use futures::FutureExt;
use futures::future::{BoxFuture, CatchUnwind};
use pin_project_lite::pin_project;
use std::any::Any;
use std::convert::Infallible;
use std::future::Future;
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
    /// A member's answer to an awaited method.
    type Answer<'e, A: Send + 'e>: Future<Output = Result<A, Self::Panic>> + Send + 'e;
    /// Calls the awaited method `M` of `member`.
    fn call<'e, M: AsyncMethod>(
        member: &'e Member,
        ctx: &'e HookContext,
        event: M::Event<'e>,
    ) -> Self::Answer<'e, M::Action>;
    /// Calls the synchronous method `M` of `member`.
    fn call_now<M: SyncMethod>(
        member: &Member,
        ctx: &HookContext,
        event: M::Event<'_>,
    ) -> Result<M::Action, Self::Panic>;
    /// A member's panic on an event of `kind`, classified.
    fn failure(kind: StepEventKind, panic: Self::Panic) -> Self::Error;
    /// A nested stack's failure, as its answer carries it to the enclosing stack.
    fn forward(error: Self::Error) -> Self::Panic;
}

/// A run's calls: a member's panic is caught around its future, its payload carried as it is
/// (no conversion on the way of an answer), and classified as a [`HookFailure`] when the rule
/// ends with it. A nested stack's failure is carried as its payload and kept as it is.
pub(crate) enum Caught {}

/// The calls of a stack's own [`AgentHook`] methods: a member's panic unwinds to whoever
/// called the stack.
pub(crate) enum Direct {}

impl Mode for Caught {
    type Panic = Box<dyn Any + Send>;
    type Error = HookFailure;
    type Answer<'e, A: Send + 'e> = CaughtAnswer<'e, A>;
    #[inline(always)]
    fn call<'e, M: AsyncMethod>(
        member: &'e Member,
        ctx: &'e HookContext,
        event: M::Event<'e>,
    ) -> CaughtAnswer<'e, M::Action> {
        match member {
            Member::Hook(held) => CaughtAnswer::Hook {
                learning: learning::<M>(held, &event),
                answer: AssertUnwindSafe(M::call(&held.hook, ctx, event)).catch_unwind(),
            },
            Member::Stack(stack) => CaughtAnswer::Stack {
                answer: M::stack::<Caught>(stack, ctx, event),
            },
        }
    }
    #[inline(always)]
    fn call_now<M: SyncMethod>(
        member: &Member,
        ctx: &HookContext,
        event: M::Event<'_>,
    ) -> Result<M::Action, Box<dyn Any + Send>> {
        match member {
            Member::Hook(held) => call_watched(learning::<M>(held, &event), || {
                std::panic::catch_unwind(AssertUnwindSafe(|| M::call(&held.hook, ctx, event)))
            }),
            Member::Stack(stack) => M::stack::<Caught>(stack, ctx, event),
        }
    }
    #[cold]
    fn failure(kind: StepEventKind, panic: Box<dyn Any + Send>) -> HookFailure {
        match panic.downcast::<HookFailure>() {
            Ok(forwarded) => *forwarded,
            Err(panic) => HookFailure {
                kind,
                message: panic_message(panic.as_ref()),
            },
        }
    }
    #[cold]
    fn forward(error: HookFailure) -> Box<dyn Any + Send> {
        Box::new(error)
    }
}

impl Mode for Direct {
    type Panic = Infallible;
    type Error = Infallible;
    type Answer<'e, A: Send + 'e> = DirectAnswer<'e, A>;
    #[inline(always)]
    fn call<'e, M: AsyncMethod>(
        member: &'e Member,
        ctx: &'e HookContext,
        event: M::Event<'e>,
    ) -> DirectAnswer<'e, M::Action> {
        match member {
            Member::Hook(held) => DirectAnswer::Hook {
                learning: learning::<M>(held, &event),
                answer: M::call(&held.hook, ctx, event),
            },
            Member::Stack(stack) => DirectAnswer::Stack {
                answer: M::stack::<Direct>(stack, ctx, event),
            },
        }
    }
    #[inline(always)]
    fn call_now<M: SyncMethod>(
        member: &Member,
        ctx: &HookContext,
        event: M::Event<'_>,
    ) -> Result<M::Action, Infallible> {
        match member {
            Member::Hook(held) => call_watched(learning::<M>(held, &event), || {
                Ok(M::call(&held.hook, ctx, event))
            }),
            Member::Stack(stack) => M::stack::<Direct>(stack, ctx, event),
        }
    }
    fn failure(_kind: StepEventKind, panic: Infallible) -> Infallible {
        panic
    }
    fn forward(error: Infallible) -> Infallible {
        error
    }
}

pin_project! {
    /// A member's answer in [`Caught`] mode: a hook's future, its panic caught, or a nested
    /// stack's.
    #[project = CaughtAnswerProjection]
    pub(crate) enum CaughtAnswer<'e, A> {
        Hook {
            #[pin] answer: CatchUnwind<AssertUnwindSafe<HookFuture<'e, A>>>,
            learning: Option<Learning<'e>>,
        },
        Stack { answer: BoxFuture<'e, Result<A, Box<dyn Any + Send>>> },
    }
}

impl<A> Future for CaughtAnswer<'_, A> {
    type Output = Result<A, Box<dyn Any + Send>>;
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            CaughtAnswerProjection::Hook { answer, learning } => {
                poll_watched(learning, || answer.poll(cx))
            }
            CaughtAnswerProjection::Stack { answer } => answer.poll_unpin(cx),
        }
    }
}

pin_project! {
    /// A member's answer in [`Direct`] mode.
    #[project = DirectAnswerProjection]
    pub(crate) enum DirectAnswer<'e, A> {
        Hook { #[pin] answer: HookFuture<'e, A>, learning: Option<Learning<'e>> },
        Stack { answer: BoxFuture<'e, Result<A, Infallible>> },
    }
}

impl<A> Future for DirectAnswer<'_, A> {
    type Output = Result<A, Infallible>;
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            DirectAnswerProjection::Hook { answer, learning } => {
                poll_watched(learning, || answer.poll(cx).map(Ok::<_, Infallible>))
            }
            DirectAnswerProjection::Stack { answer } => answer.poll_unpin(cx),
        }
    }
}

/// The watch of a call of `held` for `event`, while how it answers the event's kind is not
/// known (see `defaults.rs`).
#[inline(always)]
fn learning<'h, M: Method>(
    held: &'h Held<dyn ErasedHook>,
    event: &M::Event<'_>,
) -> Option<Learning<'h>> {
    Learning::start(&held.answers, M::kind(event), const { Row::named(M::NAME) })
}

/// A row whose method is awaited.
pub(crate) trait AsyncMethod: Method {
    /// The method of a hook of any type.
    fn call<'e>(
        hook: &'e dyn ErasedHook,
        ctx: &'e HookContext,
        event: Self::Event<'e>,
    ) -> HookFuture<'e, Self::Action>;
    /// A stack's answer as one hook: its rule over its members, called in mode `G`; a
    /// failure is carried as a member's panic, to the enclosing stack.
    fn stack<'e, G: Mode>(
        stack: &'e HookStack,
        ctx: &'e HookContext,
        event: Self::Event<'e>,
    ) -> BoxFuture<'e, Result<Self::Action, G::Panic>>;
}

/// A row whose method is synchronous.
pub(crate) trait SyncMethod: Method {
    /// The method of a hook of any type.
    fn call(hook: &dyn ErasedHook, ctx: &HookContext, event: Self::Event<'_>) -> Self::Action;
    /// A stack's answer as one hook: its rule over its members, called in mode `G`; a
    /// failure is carried as a member's panic, to the enclosing stack.
    fn stack<G: Mode>(
        stack: &HookStack,
        ctx: &HookContext,
        event: Self::Event<'_>,
    ) -> Result<Self::Action, G::Panic>;
}
