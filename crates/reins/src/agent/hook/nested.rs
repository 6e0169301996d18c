//! Generated from the table: for every row, how a stack calls the method of a member hook
//! and what a nested stack answers as one hook (its rule over its own members; a chained or
//! merged event's answer is written out in `as_hook.rs`).

use super::as_hook;
use super::compose;
use super::erased::{ErasedHook, HookFuture};
use super::events::{
    CompletionCallEvent, DispatchEvent, InvalidToolCallContext, ModelSelectEvent,
    ModelTurnFinished, OutcomeEvent, ReasoningDeltaEvent, RunSettledEvent, RunStartEvent,
    TextDeltaEvent, ToolCallDeltaEvent,
};
use super::mode::{AsyncMethod, Mode, SyncMethod};
use super::stack::HookStack;
use super::step::{Flow, StepEvent};
use super::table::{self, Method, hook_methods};
use super::{
    CompletionCallAction, DispatchAction, HookContext, InvalidToolCallAction, ModelSelectionAction,
    ModelTurnAction, ObservationAction, OutcomeAction, RunStartAction,
};
use futures::FutureExt;
use futures::future::BoxFuture;

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
