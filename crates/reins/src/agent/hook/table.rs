//! The one table of hook methods, and the step view generated from it.
//!
//! [`hook_methods!`] lists every method of [`AgentHook`] that a [`HookStack`] calls, one row
//! each. Generated from the rows:
//!
//! - here: a marker type per method (`table::on_dispatch`, …) implementing [`Method`] (its event
//!   and action types, and the step kind of an event), and for the typed methods [`StepView`]:
//!   how the event reads as a [`StepEvent`] and how a [`Flow`] answer reads as the action. The
//!   defaults of [`AgentHook`]'s typed methods are [`via_on_event`] of their row;
//! - in `erased.rs`: `ErasedHook`, the object-safe form a [`HookStack`] holds hooks of any type
//!   as; in `rows.rs`, per row, how a stack calls a member's method, and which composition
//!   rule of `compose.rs` a stack's own `AgentHook` method answers it with.
//!
//! Adding an event is one row, its event and action types (with their [`StepEvent`] and
//! [`StepEventKind`] variants), and the documented method of [`AgentHook`] whose default is
//! `via_on_event`. A chained or merged event also says how one hook's answer passes to the
//! next (its `Link` in `links.rs`, or its action's `Merge`), and what a stack registered as a
//! hook answers (`as_hook.rs`).
//!
//! [`HookStack`]: super::HookStack

use super::StepEventKind;
use super::defaults;
use super::events::{
    CompletionCallEvent, DispatchEvent, DispatchTarget, InvalidToolCallContext, ModelSelectEvent,
    ModelTurnFinished, OutcomeEvent, OutcomeTarget, ReasoningDeltaEvent, RunSettledEvent,
    RunStartEvent, TextDeltaEvent, ToolCallDeltaEvent,
};
use super::step::{Flow, StepEvent};
use super::{
    AgentHook, CompletionCallAction, DispatchAction, DispatchKind, HookContext,
    InvalidToolCallAction, ModelSelectionAction, ModelTurnAction, ObservationAction, OutcomeAction,
    RunStartAction,
};
use std::future::Future;

/// Every hook method a stack calls, one row each, handed to the generator `$generate`:
///
/// ```text
/// async|per_token|sync method(Event<'e>) -> Action = rule, kind |event| StepEventKind
///     [, step |event| Option<StepEvent>, flow |flow, event| Action];
/// ```
///
/// - `async`: an awaited method, called on its answer's first poll, where a stack catches
///   and watches it (see `erased.rs`); `per_token`: an awaited method called for every token
///   of a streamed turn, called at once (cheaper by a few nanoseconds a token; a streamed
///   turn catches a panic anywhere in its polls); `sync`: called and answered at once;
/// - `rule`: how a stack combines its hooks' answers: `chained`, `merged`, `first_decision`
///   or `everyone_observes` (the functions of `compose.rs`);
/// - `kind`: the step kind of an event: which hooks observe it, and how a panic is classified;
/// - `step` / `flow`: the row's step view, used by the method's default (which asks
///   `on_event`). `None` answers `Continue` without asking. `on_event` is the step view
///   itself, and the synchronous `on_model_select` has no step view.
macro_rules! hook_methods {
    ($generate:ident) => {
        $generate! {
            async on_event(StepEvent<'e>) -> Flow = first_decision, kind |event| event.kind();

            async on_run_start(RunStartEvent<'e>) -> RunStartAction = chained,
                kind |_| StepEventKind::RunStart,
                step |event| Some(StepEvent::RunStart {
                    prompt: event.prompt,
                    history: event.history,
                }),
                flow |flow, _| match flow {
                    Flow::Terminate(reason) => RunStartAction::Stop(reason.into()),
                    _ => RunStartAction::Continue,
                };

            async on_completion_call(CompletionCallEvent<'e>) -> CompletionCallAction = merged,
                kind |_| StepEventKind::CompletionCall,
                step |event| Some(StepEvent::CompletionCall {
                    prompt: event.prompt,
                    history: event.history,
                    turn: event.turn,
                }),
                flow |flow, _| match flow {
                    Flow::Terminate(reason) => CompletionCallAction::Stop(reason.into()),
                    Flow::PatchRequest(patch) => CompletionCallAction::patch(patch),
                    _ => CompletionCallAction::Continue,
                };

            sync on_model_select(ModelSelectEvent<'e>) -> ModelSelectionAction = chained,
                kind |_| StepEventKind::ModelSelect;

            async on_model_turn_finished(ModelTurnFinished<'e>) -> ModelTurnAction = first_decision,
                kind |_| StepEventKind::ModelTurnFinished,
                step |event| Some(StepEvent::ModelTurnFinished {
                    turn: event.turn,
                    content: event.content,
                    usage: event.usage,
                }),
                flow |flow, _| match flow {
                    Flow::Terminate(reason) => ModelTurnAction::Stop(reason.into()),
                    _ => ModelTurnAction::Continue,
                };

            async on_invalid_tool_call(&'e InvalidToolCallContext) -> Option<InvalidToolCallAction>
                = first_decision,
                kind |_| StepEventKind::InvalidToolCall,
                step |event| Some(StepEvent::InvalidToolCall(*event)),
                flow |flow, _| match flow {
                    Flow::Fail => Some(InvalidToolCallAction::Fail),
                    Flow::Retry(feedback) => Some(InvalidToolCallAction::Retry(feedback)),
                    Flow::Repair(name) => Some(InvalidToolCallAction::Repair(name)),
                    Flow::Skip(reason) => Some(InvalidToolCallAction::Skip(reason)),
                    Flow::Terminate(reason) => Some(InvalidToolCallAction::Stop(reason.into())),
                    _ => None,
                };

            async on_dispatch(DispatchEvent<'e>) -> DispatchAction = chained,
                kind |event| event.kind.dispatch_event_kind(),
                step |event| Some(dispatch_step(event)),
                flow |flow, event| match flow {
                    Flow::Terminate(reason) => DispatchAction::Stop(reason.into()),
                    Flow::Skip(reason) => DispatchAction::Skip(reason),
                    Flow::RewriteArgs(args) => DispatchAction::rewrite_tool_args(event.kind, args),
                    Flow::PatchRequest(patch) if event.kind == DispatchKind::Completion => {
                        DispatchAction::patch(patch)
                    }
                    _ => DispatchAction::Proceed,
                };

            async on_outcome(OutcomeEvent<'e>) -> OutcomeAction = chained,
                kind |event| event.kind.outcome_event_kind(),
                step |event| outcome_step(event),
                flow |flow, event| match flow {
                    Flow::Terminate(reason) => OutcomeAction::Stop(reason.into()),
                    Flow::RewriteResult(text) => OutcomeAction::rewrite_tool_result(event, text),
                    _ => OutcomeAction::Proceed,
                };

            per_token on_text_delta(TextDeltaEvent<'e>) -> ObservationAction = first_decision,
                kind |_| StepEventKind::TextDelta,
                step |event| Some(StepEvent::TextDelta {
                    delta: event.delta,
                    aggregated: event.aggregated,
                }),
                flow |flow, _| observation(flow);

            per_token on_reasoning_delta(ReasoningDeltaEvent<'e>) -> ObservationAction = first_decision,
                kind |_| StepEventKind::ReasoningDelta,
                step |event| Some(StepEvent::ReasoningDelta {
                    delta: event.delta,
                    aggregated: event.aggregated,
                }),
                flow |flow, _| observation(flow);

            per_token on_tool_call_delta(ToolCallDeltaEvent<'e>) -> ObservationAction = first_decision,
                kind |_| StepEventKind::ToolCallDelta,
                step |event| Some(StepEvent::ToolCallDelta {
                    tool_call_id: event.tool_call_id,
                    internal_call_id: event.internal_call_id,
                    tool_name: event.tool_name,
                    delta: event.delta,
                }),
                flow |flow, _| observation(flow);

            async on_run_settled(RunSettledEvent<'e>) -> () = everyone_observes,
                kind |_| StepEventKind::RunSettled,
                step |event| Some(StepEvent::RunSettled(*event)),
                flow |_, _| ();
        }
    };
}
pub(super) use hook_methods;

/// One row of the table: a hook method's event and action types.
pub(crate) trait Method: 'static {
    /// The method's name, for logs.
    const NAME: &'static str;
    /// What the method receives.
    type Event<'e>: Copy + Send;
    /// What the method answers.
    type Action: Send;
    /// The step kind of `event`: which hooks observe it, and how a panic on it is classified.
    fn kind(event: &Self::Event<'_>) -> StepEventKind;
}

/// How a typed method's event and answer read in the step view.
pub(crate) trait StepView: Method {
    /// The event as `on_event` sees it; `None` when the step view does not show it (the
    /// answer is then `Continue`).
    fn step<'s>(event: &'s Self::Event<'_>) -> Option<StepEvent<'s>>;
    /// The action an `on_event` answer reads as; a `Flow` the event does not honor is
    /// `Continue` (for an invalid tool call, a deferral).
    fn action(flow: Flow, event: &Self::Event<'_>) -> Self::Action;
}

/// The default of a typed method: the event in the step view, asked of `on_event`. (An
/// `async move` block rather than an `async fn`, which would keep its arguments twice in its
/// state machine.)
#[allow(clippy::manual_async_fn)]
#[inline]
pub(crate) fn via_on_event<M: StepView<Action: Continued>, H: AgentHook + ?Sized>(
    hook: &H,
    ctx: &HookContext,
    event: M::Event<'_>,
) -> impl Future<Output = M::Action> + Send {
    async move {
        // Says when it answered by defaults alone (see `defaults.rs`): what it records is
        // computed after the await, so the future holds nothing more for it. (The step view
        // of an event has the event's kind.)
        match M::step(&event) {
            Some(step) => {
                let flow = hook.on_event(ctx, step).await;
                defaults::answered_via_on_event(defaults::type_id::<H>(), M::kind(&event));
                // The usual answer, read without running `Flow`'s drop glue (out of line)
                // on it.
                if let Flow::Continue = flow {
                    std::mem::forget(flow);
                    return M::Action::continued();
                }
                M::action(flow, &event)
            }
            None => {
                defaults::answered(
                    defaults::type_id::<H>(),
                    M::kind(&event),
                    defaults::Row::Typed,
                );
                M::action(Flow::Continue, &event)
            }
        }
    }
}

/// Generates the marker types, their [`Method`] and, for rows with a step view, [`StepView`].
macro_rules! rows {
    ($(
        $run:tt $method:ident($event:ty) -> $action:ty = $rule:ident,
            kind |$kind_event:pat_param| $kind:expr
            $(, step |$step_event:pat_param| $step:expr,
                flow |$flow:pat_param, $flow_event:pat_param| $answer:expr)?;
    )*) => {$(
        #[doc = concat!("The row of `", stringify!($method), "`.")]
        #[allow(non_camel_case_types)]
        pub(crate) enum $method {}

        impl Method for $method {
            const NAME: &'static str = stringify!($method);
            type Event<'e> = $event;
            type Action = $action;
            #[inline]
            fn kind<'e>($kind_event: &$event) -> StepEventKind {
                $kind
            }
        }

        $(
            impl StepView for $method {
                #[inline]
                fn step<'s, 'e>($step_event: &'s $event) -> Option<StepEvent<'s>> {
                    $step
                }
                #[inline]
                fn action<'e>($flow: Flow, $flow_event: &$event) -> $action {
                    $answer
                }
            }
        )?
    )*};
}

hook_methods!(rows);

/// What a typed method answers when `on_event` answers [`Flow::Continue`] for it: go on.
/// (Also what a first-decision event answers when no hook decides.)
pub(crate) trait Continued {
    /// The answer that lets the run go on.
    fn continued() -> Self;
}

/// Implements [`Continued`] for each action type, with its go-on answer.
macro_rules! continued {
    ($($action:ty => $answer:expr;)*) => {$(
        impl Continued for $action {
            #[inline]
            fn continued() -> Self {
                $answer
            }
        }
    )*};
}

continued! {
    RunStartAction => RunStartAction::Continue;
    CompletionCallAction => CompletionCallAction::Continue;
    ModelTurnAction => ModelTurnAction::Continue;
    // No decision: the run's own handling of an invalid call applies.
    Option<InvalidToolCallAction> => None;
    DispatchAction => DispatchAction::Proceed;
    OutcomeAction => OutcomeAction::Proceed;
    ObservationAction => ObservationAction::Continue;
    Flow => Flow::Continue;
    () => ();
}

/// A dispatch in the step view: `CompletionDispatch`, `ToolCall` or `EffectDispatch`.
#[inline]
fn dispatch_step<'s>(event: &'s DispatchEvent<'_>) -> StepEvent<'s> {
    match *event.target {
        DispatchTarget::Completion {
            turn,
            model,
            request,
            ..
        } => StepEvent::CompletionDispatch {
            turn,
            model,
            request,
        },
        DispatchTarget::Tool(call) => StepEvent::ToolCall {
            tool_name: call.name,
            tool_call_id: Some(call.tool_call_id),
            internal_call_id: call.internal_call_id,
            args: call.args.text(),
        },
        DispatchTarget::Effect { name, payload } => StepEvent::EffectDispatch {
            kind: event.kind,
            name,
            payload,
        },
    }
}

/// An outcome in the step view: `ToolResult` (its text written once for every hook that
/// reads it, see [`ToolResult::output_text`](super::ToolResult::output_text)) or
/// `EffectOutcome`. A model call's outcome has none: the step view sees it as
/// `CompletionResponse` / `StreamResponseFinish`, which the run delivers to `on_event` itself.
#[inline]
fn outcome_step<'s>(event: &'s OutcomeEvent<'_>) -> Option<StepEvent<'s>> {
    match *event.target {
        OutcomeTarget::Completion { .. } | OutcomeTarget::CompletionFailed { .. } => None,
        OutcomeTarget::Tool(result) => Some(StepEvent::ToolResult {
            tool_name: result.tool_name(),
            tool_call_id: Some(result.tool_call_id()),
            internal_call_id: result.internal_call_id(),
            args: result.args(),
            result: result.output_text(),
            outcome: result.outcome(),
            extensions: result.extensions(),
        }),
        OutcomeTarget::Effect { name, output } => Some(StepEvent::EffectOutcome {
            kind: event.kind,
            name,
            output,
        }),
    }
}

#[inline]
fn observation(flow: Flow) -> ObservationAction {
    match flow {
        Flow::Terminate(reason) => ObservationAction::Stop(reason.into()),
        _ => ObservationAction::Continue,
    }
}
