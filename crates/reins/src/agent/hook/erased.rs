//! Hooks of any type held together: [`ErasedHook`], the object-safe form of the hook methods,
//! generated from the table and implemented for every [`AgentHook`].
//!
//! An awaited method's answer is a [`HookFuture`]: the hook's future stored inline, in
//! [`HOOK_FUTURE_BYTES`] returned by value, so a hook that fits (every hook that does little
//! before it answers) costs no allocation per call; a larger future is boxed.

use super::StepEventKind;
use super::events::{
    CompletionCallEvent, DispatchEvent, InvalidToolCallContext, ModelSelectEvent,
    ModelTurnFinished, OutcomeEvent, ReasoningDeltaEvent, RunSettledEvent, RunStartEvent,
    TextDeltaEvent, ToolCallDeltaEvent,
};
use super::step::{Flow, StepEvent};
use super::table::hook_methods;
use super::{
    AgentHook, CompletionCallAction, DispatchAction, HookContext, InvalidToolCallAction,
    ModelSelectionAction, ModelTurnAction, ObservationAction, OutcomeAction, RunStartAction,
};
use stackfuture::StackFuture;
use std::future::Future;

/// The room a hook's future gets inline in a [`HookFuture`]; a larger one is boxed. Large
/// enough for a typed method's default, which holds its event and the future of the
/// `on_event` it asks (a hook written against the step view: up to 256 bytes with what
/// [`called_on_first_poll`] keeps until it calls the method, `on_model_turn_finished`'s in a
/// debug build), for a typed method's future that awaits little (the event, the hook and
/// the context are borrowed), or for one timer (tokio's `Sleep`, about 120 bytes: a hook that
/// paces or delays calls). The answer is built in place, so the size costs no instructions
/// on the hot path, only room in the run's future.
pub(crate) const HOOK_FUTURE_BYTES: usize = 320;

/// A hook's answer to an awaited method, its future held inline when it fits.
pub(crate) type HookFuture<'e, A> = StackFuture<'e, A, HOOK_FUTURE_BYTES>;

/// A row's method in its object-safe form, declared. An awaited method's event is lent: the
/// answer reads it from where the rule keeps it.
macro_rules! erased_declaration {
    (per_token, $method:ident, $event:ty, $action:ty) => {
        erased_declaration!(async, $method, $event, $action);
    };
    (async, $method:ident, $event:ty, $action:ty) => {
        fn $method<'s, 'e: 's>(
            &'s self,
            ctx: &'s HookContext,
            event: &'s $event,
        ) -> HookFuture<'s, $action>;
    };
    (sync, $method:ident, $event:ty, $action:ty) => {
        fn $method<'e>(&'e self, ctx: &'e HookContext, event: $event) -> $action;
    };
}

/// A row's method in its object-safe form, for a hook of type `H`: an `async` row's method
/// called on the answer's first poll ([`called_on_first_poll`]), a `per_token` row's at once.
///
/// A `per_token` row (a delta of a streamed turn) is called for every token, and a call made
/// on the first poll reads the event just after the run wrote it: the read's wide loads
/// cannot take the narrow stores' data before it reaches the cache, which cost a streamed
/// delta 2.5 ns (about 5%). Its method is called here instead; such a hook runs only inside
/// a streamed turn, which catches a panic anywhere in its polls, so code a delta method runs
/// before it returns its future still cannot unwind into the caller (its panic fails the
/// turn as the model's would).
macro_rules! erased_method {
    (per_token, $method:ident, $event:ty, $action:ty) => {
        erased_method!(@answer called_at_once, $method, $event, $action);
    };
    (async, $method:ident, $event:ty, $action:ty) => {
        erased_method!(@answer called_on_first_poll, $method, $event, $action);
    };
    (@answer $called:ident, $method:ident, $event:ty, $action:ty) => {
        fn $method<'s, 'e: 's>(
            &'s self,
            ctx: &'s HookContext,
            event: &'s $event,
        ) -> HookFuture<'s, $action> {
            StackFuture::from_or_box($called(move || AgentHook::$method(self, ctx, *event)))
        }
    };
    (sync, $method:ident, $event:ty, $action:ty) => {
        fn $method<'e>(&'e self, ctx: &'e HookContext, event: $event) -> $action {
            AgentHook::$method(self, ctx, event)
        }
    };
}

/// A hook's answer to a `per_token` method: the method called now.
#[inline(always)]
fn called_at_once<F: Future>(call: impl FnOnce() -> F) -> F {
    call()
}

/// A hook's answer to an awaited method, the method called on the answer's first poll.
///
/// A method written as a plain `fn` returning a future runs code of the user's before it
/// returns; a stack catches a hook's panic (and watches what its defaults reach) around each
/// poll of its answer, so that code is caught and watched like the rest. (Catching the call
/// where the rule makes it would copy the answer once more on its way into the rule's
/// state: 48–71 more instructions a call, measured on a streamed delta, where this cost
/// about 13; see docs/PERFORMANCE.md, "Seventeenth session". Not an `async fn`, which would
/// keep `call` twice in its state.)
#[allow(clippy::manual_async_fn)]
#[inline(always)]
pub(crate) fn called_on_first_poll<F: Future>(
    call: impl FnOnce() -> F,
) -> impl Future<Output = F::Output> {
    async move { call().await }
}

/// Generates [`ErasedHook`] and its implementation for every [`AgentHook`].
macro_rules! object_safe_forms {
    ($(
        $run:tt $method:ident($event:ty) -> $action:ty = $rule:ident,
            kind |$kind_event:pat_param| $kind:expr
            $(, step |$step_event:pat_param| $step:expr,
                flow |$flow:pat_param, $flow_event:pat_param| $answer:expr)?;
    )*) => {
        /// The object-safe form of [`AgentHook`], so hooks of any type are held together.
        pub(crate) trait ErasedHook: Send + Sync {
            fn observes(&self, kind: StepEventKind) -> bool;
            $(erased_declaration!($run, $method, $event, $action);)*
        }

        impl<H: AgentHook> ErasedHook for H {
            fn observes(&self, kind: StepEventKind) -> bool {
                AgentHook::observes(self, kind)
            }
            $(erased_method!($run, $method, $event, $action);)*
        }
    };
}

hook_methods!(object_safe_forms);
