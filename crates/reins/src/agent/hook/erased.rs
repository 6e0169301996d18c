//! How a [`HookStack`] holds hooks of any type, generated from the table: [`ErasedHook`], the
//! object-safe form of the hook methods, and how a stack calls a member in either [`Mode`].
//!
//! An awaited method's answer is a [`HookFuture`]: the hook's future stored inline, in
//! [`HOOK_FUTURE_BYTES`] returned by value, so a hook that fits (every hook that does little
//! before it answers) costs no allocation per call; a larger future is boxed.
//!
//! A stack's member is a [`Member`]: a hook of a user's type, or a stack registered as a hook,
//! held as itself. In [`Caught`] mode (a run's calls) a hook's panic is caught around its
//! future and comes back as a value: the rule that called it ends with a [`HookFailure`],
//! which the run turns into `PromptError::HookPanicked`. A nested stack runs its rule over its
//! own members in the same mode and hands its failure to the enclosing rule as its answer,
//! which keeps it as it is, so a panic in a nested stack reaches the run classified as if the
//! hook had been registered directly; nothing is re-raised. In [`Direct`] mode (a stack's own
//! [`AgentHook`] methods) nothing is caught: a member's panic unwinds to whoever called the
//! stack.

use super::StepEventKind;
use super::as_hook;
use super::compose;
use super::events::{
    CompletionCallEvent, DispatchEvent, InvalidToolCallContext, ModelSelectEvent,
    ModelTurnFinished, OutcomeEvent, ReasoningDeltaEvent, RunSettledEvent, RunStartEvent,
    TextDeltaEvent, ToolCallDeltaEvent,
};
use super::stack::HookStack;
use super::step::{Flow, StepEvent};
use super::table::{self, Method, hook_methods};
use super::{
    AgentHook, CompletionCallAction, DispatchAction, HookContext, InvalidToolCallAction,
    ModelSelectionAction, ModelTurnAction, ObservationAction, OutcomeAction, RunStartAction,
};
use crate::tool::panic_message;
use futures::FutureExt;
use futures::future::{BoxFuture, CatchUnwind};
use pin_project_lite::pin_project;
use stackfuture::StackFuture;
use std::any::Any;
use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// The room a hook's future gets inline in a [`HookFuture`]; a larger one is boxed. Large
/// enough for a typed method's future that awaits little (the event, the hook and the context
/// are borrowed), small enough that moving the answer stays cheap.
pub(crate) const HOOK_FUTURE_BYTES: usize = 128;

/// A hook's answer to an awaited method, its future held inline when it fits.
pub(crate) type HookFuture<'e, A> = StackFuture<'e, A, HOOK_FUTURE_BYTES>;

/// A hook panicked; the run ends with
/// [`PromptError::HookPanicked`](crate::agent::PromptError::HookPanicked).
#[derive(Debug, Clone)]
pub(crate) struct HookFailure {
    pub kind: StepEventKind,
    pub message: String,
}

/// A member of a stack.
#[derive(Clone)]
pub(crate) enum Member {
    /// A hook of a user's type.
    Hook(Arc<dyn ErasedHook>),
    /// A stack registered as a hook: its members' failures pass through it as values.
    Stack(Arc<HookStack>),
}

impl Member {
    /// `hook` as a stack holds it.
    pub(crate) fn new<H: AgentHook>(hook: H) -> Member {
        let mut slot = Some(hook);
        let stack = (&mut slot as &mut dyn Any)
            .downcast_mut::<Option<HookStack>>()
            .and_then(Option::take);
        match (stack, slot) {
            (Some(stack), _) => Member::Stack(Arc::new(stack)),
            (None, Some(hook)) => Member::Hook(Arc::new(hook)),
            // The slot is emptied only when it held a stack.
            (None, None) => Member::Stack(Arc::default()),
        }
    }

    /// [`AgentHook::observes`], read once when the member is pushed.
    pub(crate) fn observes(&self, kind: StepEventKind) -> bool {
        match self {
            Member::Hook(hook) => hook.observes(kind),
            Member::Stack(stack) => stack.observes(kind),
        }
    }
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
            Member::Hook(hook) => CaughtAnswer::Hook {
                answer: AssertUnwindSafe(M::call(&**hook, ctx, event)).catch_unwind(),
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
            Member::Hook(hook) => {
                std::panic::catch_unwind(AssertUnwindSafe(|| M::call(&**hook, ctx, event)))
            }
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
            Member::Hook(hook) => DirectAnswer::Hook {
                answer: M::call(&**hook, ctx, event),
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
            Member::Hook(hook) => Ok(M::call(&**hook, ctx, event)),
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
        Hook { #[pin] answer: CatchUnwind<AssertUnwindSafe<HookFuture<'e, A>>> },
        Stack { answer: BoxFuture<'e, Result<A, Box<dyn Any + Send>>> },
    }
}

impl<A> Future for CaughtAnswer<'_, A> {
    type Output = Result<A, Box<dyn Any + Send>>;
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            CaughtAnswerProjection::Hook { answer } => answer.poll(cx),
            CaughtAnswerProjection::Stack { answer } => answer.poll_unpin(cx),
        }
    }
}

pin_project! {
    /// A member's answer in [`Direct`] mode.
    #[project = DirectAnswerProjection]
    pub(crate) enum DirectAnswer<'e, A> {
        Hook { #[pin] answer: HookFuture<'e, A> },
        Stack { answer: BoxFuture<'e, Result<A, Infallible>> },
    }
}

impl<A> Future for DirectAnswer<'_, A> {
    type Output = Result<A, Infallible>;
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            DirectAnswerProjection::Hook { answer } => answer.poll(cx).map(Ok),
            DirectAnswerProjection::Stack { answer } => answer.poll_unpin(cx),
        }
    }
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

/// The answer type of a row's object-safe form.
macro_rules! answer {
    (async, $lifetime:lifetime, $output:ty) => { HookFuture<$lifetime, $output> };
    (sync, $lifetime:lifetime, $output:ty) => { $output };
}

/// A typed hook's answer in its object-safe form.
macro_rules! boxed {
    (async, $answer:expr) => {
        StackFuture::from_or_box($answer)
    };
    (sync, $answer:expr) => {
        $answer
    };
}

/// A stack's answer as one hook: its rule over its members, in mode `$mode`. A chained or
/// merged event's answer is written out in `as_hook.rs`.
macro_rules! stacked {
    (async first_decision, $method:ident, $mode:ty, $stack:expr, $ctx:expr, $event:expr) => {
        Box::pin(
            compose::first_decision::<table::$method, $mode>(
                $stack.observers(<table::$method as Method>::kind(&$event)),
                $ctx,
                $event,
            )
            .map(|answer| answer.map_err(<$mode>::forward)),
        )
    };
    (async everyone_observes, $method:ident, $mode:ty, $stack:expr, $ctx:expr, $event:expr) => {
        Box::pin(
            compose::everyone_observes::<table::$method>(
                $stack.observers(<table::$method as Method>::kind(&$event)),
                $ctx,
                $event,
            )
            .map(Ok),
        )
    };
    (async chained, $method:ident, $mode:ty, $stack:expr, $ctx:expr, $event:expr) => {
        Box::pin(
            as_hook::$method::<$mode>($stack, $ctx, $event)
                .map(|answer| answer.map_err(<$mode>::forward)),
        )
    };
    (async merged, $method:ident, $mode:ty, $stack:expr, $ctx:expr, $event:expr) => {
        Box::pin(
            as_hook::$method::<$mode>($stack, $ctx, $event)
                .map(|answer| answer.map_err(<$mode>::forward)),
        )
    };
    (sync chained, $method:ident, $mode:ty, $stack:expr, $ctx:expr, $event:expr) => {
        as_hook::$method::<$mode>($stack, $ctx, $event).map_err(<$mode>::forward)
    };
}

/// A row's marker type: how to call the method of a hook, and of a stack.
macro_rules! method {
    (async $rule:ident, $method:ident, $event:ty, $action:ty) => {
        impl AsyncMethod for table::$method {
            #[inline(always)]
            fn call<'e>(
                hook: &'e dyn ErasedHook,
                ctx: &'e HookContext,
                event: $event,
            ) -> HookFuture<'e, $action> {
                hook.$method(ctx, event)
            }
            fn stack<'e, G: Mode>(
                stack: &'e HookStack,
                ctx: &'e HookContext,
                event: $event,
            ) -> BoxFuture<'e, Result<$action, G::Panic>> {
                stacked!(async $rule, $method, G, stack, ctx, event)
            }
        }
    };
    (sync $rule:ident, $method:ident, $event:ty, $action:ty) => {
        impl SyncMethod for table::$method {
            #[inline(always)]
            fn call<'e>(hook: &dyn ErasedHook, ctx: &HookContext, event: $event) -> $action {
                hook.$method(ctx, event)
            }
            fn stack<'e, G: Mode>(
                stack: &HookStack,
                ctx: &HookContext,
                event: $event,
            ) -> Result<$action, G::Panic> {
                stacked!(sync $rule, $method, G, stack, ctx, event)
            }
        }
    };
}

/// Generates [`ErasedHook`], its implementation for every [`AgentHook`], and each row's
/// [`AsyncMethod`] or [`SyncMethod`].
macro_rules! object_safe_forms {
    ($(
        $run:tt $method:ident($event:ty) -> $action:ty = $rule:ident,
            kind |$kind_event:pat_param| $kind:expr
            $(, step |$step_event:pat_param, $scratch:pat_param| $step:expr,
                flow |$flow:pat_param, $flow_event:pat_param| $answer:expr)?;
    )*) => {
        /// The object-safe form of [`AgentHook`], so hooks of any type are held together.
        pub(crate) trait ErasedHook: Send + Sync {
            fn observes(&self, kind: StepEventKind) -> bool;
            $(fn $method<'e>(
                &'e self,
                ctx: &'e HookContext,
                event: $event,
            ) -> answer!($run, 'e, $action);)*
        }

        impl<H: AgentHook> ErasedHook for H {
            fn observes(&self, kind: StepEventKind) -> bool {
                AgentHook::observes(self, kind)
            }
            $(fn $method<'e>(
                &'e self,
                ctx: &'e HookContext,
                event: $event,
            ) -> answer!($run, 'e, $action) {
                boxed!($run, AgentHook::$method(self, ctx, event))
            })*
        }

        $(method!($run $rule, $method, $event, $action);)*
    };
}

hook_methods!(object_safe_forms);
