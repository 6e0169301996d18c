//! Generated from the table: for every row, how a stack calls the method of a member hook
//! and what a stack answers as one hook, through its own `AgentHook` methods (its rule over
//! its members in [`Direct`] mode; a chained or merged event's answer is written out in
//! `as_hook.rs`).

use super::as_hook;
use super::compose;
use super::erased::{ErasedHook, HookFuture};
use super::events::{
    CompletionCallEvent, DispatchEvent, InvalidToolCallContext, ModelSelectEvent,
    ModelTurnFinished, OutcomeEvent, ReasoningDeltaEvent, RunSettledEvent, RunStartEvent,
    TextDeltaEvent, ToolCallDeltaEvent,
};
use super::mode::{AsyncMethod, Direct, SyncMethod};
use super::stack::HookStack;
use super::step::{Flow, StepEvent};
use super::table::{self, Method, hook_methods};
use super::{
    CompletionCallAction, DispatchAction, HookContext, InvalidToolCallAction, ModelSelectionAction,
    ModelTurnAction, ObservationAction, OutcomeAction, RunStartAction,
};
use futures::FutureExt;
use std::future::Future;

/// A stack's answer as one hook: its rule over its members, in [`Direct`] mode. A chained or
/// merged event's answer is written out in `as_hook.rs`.
macro_rules! stacked {
    (async first_decision, $method:ident, $stack:expr, $ctx:expr, $event:expr) => {
        compose::first_decision::<table::$method, Direct>(
            $stack.observers(<table::$method as Method>::kind(&$event)),
            $ctx,
            $event,
        )
        .map(|answer| match answer {
            Ok(action) => action,
        })
    };
    (async everyone_observes, $method:ident, $stack:expr, $ctx:expr, $event:expr) => {
        compose::everyone_observes::<table::$method>(
            $stack.observers(<table::$method as Method>::kind(&$event)),
            $ctx,
            $event,
        )
    };
    (async chained, $method:ident, $stack:expr, $ctx:expr, $event:expr) => {
        as_hook::$method($stack, $ctx, $event).map(|answer| match answer {
            Ok(action) => action,
        })
    };
    (async merged, $method:ident, $stack:expr, $ctx:expr, $event:expr) => {
        as_hook::$method($stack, $ctx, $event).map(|answer| match answer {
            Ok(action) => action,
        })
    };
    (sync chained, $method:ident, $stack:expr, $ctx:expr, $event:expr) => {
        match as_hook::$method($stack, $ctx, $event) {
            Ok(action) => action,
        }
    };
}

/// A row's marker type: how to call the method of a hook, and of a stack.
macro_rules! method {
    // Called at once by the hook's erased form, awaited like any other here.
    (per_token $rule:ident, $method:ident, $event:ty, $action:ty) => {
        method!(async $rule, $method, $event, $action);
    };
    (async $rule:ident, $method:ident, $event:ty, $action:ty) => {
        impl AsyncMethod for table::$method {
            #[inline(always)]
            fn call<'s, 'e: 's>(
                hook: &'s dyn ErasedHook,
                ctx: &'s HookContext,
                event: &'s $event,
            ) -> HookFuture<'s, $action> {
                hook.$method(ctx, event)
            }
            fn stack<'e>(
                stack: &'e HookStack,
                ctx: &'e HookContext,
                event: $event,
            ) -> impl Future<Output = $action> + Send + 'e {
                stacked!(async $rule, $method, stack, ctx, event)
            }
        }
    };
    (sync $rule:ident, $method:ident, $event:ty, $action:ty) => {
        impl SyncMethod for table::$method {
            #[inline(always)]
            fn call<'e>(hook: &dyn ErasedHook, ctx: &HookContext, event: $event) -> $action {
                hook.$method(ctx, event)
            }
            fn stack<'e>(stack: &HookStack, ctx: &HookContext, event: $event) -> $action {
                stacked!(sync $rule, $method, stack, ctx, event)
            }
        }
    };
}

/// Generates each row's [`AsyncMethod`] or [`SyncMethod`].
macro_rules! member_calls {
    ($(
        $run:tt $method:ident($event:ty) -> $action:ty = $rule:ident,
            kind |$kind_event:pat_param| $kind:expr
            $(, step |$step_event:pat_param| $step:expr,
                flow |$flow:pat_param, $flow_event:pat_param| $answer:expr)?;
    )*) => {
        $(method!($run $rule, $method, $event, $action);)*
    };
}

hook_methods!(member_calls);
