//! What a run asks of a [`HookStack`]: one method per event, each returning its rule's future
//! over the observing members in [`Caught`] mode (no `async fn` around it, so a run's state
//! machine holds one layer per event).

use super::StepEventKind;
use super::compose::{self, Decision, Stacked};
use super::events::{
    CompletionCallEvent, DispatchTarget, InvalidToolCallContext, ModelIdentity, ModelSelectEvent,
    ModelTurnFinished, ReasoningDeltaEvent, RunSettledEvent, TextDeltaEvent, ToolCallDeltaEvent,
};
use super::links::{
    FailureChain, HookAnswer, ModelOutcome, PromptChain, RequestChain, ResponseChain,
    SelectionChain, ToolCallChain, ToolDispatchDecision, ToolResultChain,
};
use super::mode::{AsyncMethod, Caught, HookFailure};
use super::stack::{HookStack, Observers};
use super::step::{Flow, StepEvent};
use super::table;
use super::tool_result::ToolResult;
use super::turn_request::TurnRequest;
use super::{HookContext, InvalidToolCallAction, ModelTurnAction, ObservationAction, RequestPatch};
use crate::completion::{CompletionError, CompletionRequest, CompletionResponse};
use crate::message::Message;
use futures::FutureExt;
use std::future::Future;

impl HookStack {
    // What a run asks of the stack. Each returns its rule's future itself (no `async fn`
    // around it), so a run's state machine holds one layer per event.

    /// A first-decision event.
    #[inline]
    fn decide<'e, M: AsyncMethod>(
        &'e self,
        ctx: &'e HookContext,
        event: M::Event<'e>,
    ) -> impl Future<Output = Result<M::Action, HookFailure>>
    where
        M::Action: Decision,
    {
        compose::first_decision::<M, Caught>(self.observers(M::kind(&event)), ctx, event)
    }

    #[inline]
    pub(crate) fn run_start<'e>(
        &'e self,
        ctx: &'e HookContext,
        prompt: Message,
        history: &'e [Message],
    ) -> impl Future<Output = Result<Stacked<Message>, HookFailure>> {
        let hooks = self.observers(StepEventKind::RunStart);
        let chain = PromptChain { prompt, history };
        compose::chained::<table::on_run_start, Caught, _>(hooks, ctx, chain)
    }

    #[inline]
    pub(crate) fn completion_call<'e>(
        &'e self,
        ctx: &'e HookContext,
        event: CompletionCallEvent<'e>,
    ) -> impl Future<Output = Result<Stacked<Option<RequestPatch>>, HookFailure>> {
        let hooks = self.observers(StepEventKind::CompletionCall);
        compose::merged::<table::on_completion_call, Caught>(hooks, ctx, event)
    }

    pub(crate) fn model_select(
        &self,
        ctx: &HookContext,
        turn: usize,
        default_model: &str,
        previous_model: Option<&str>,
        available_models: &[String],
        history: &[Message],
    ) -> Result<Stacked<Option<String>>, HookFailure> {
        let event = ModelSelectEvent {
            turn,
            default_model,
            selected_model: default_model,
            previous_model,
            available_models,
            history,
        };
        let hooks = self.observers(StepEventKind::ModelSelect);
        let chain = SelectionChain {
            event,
            selected: None,
        };
        compose::chained_now::<table::on_model_select, Caught, _>(hooks, ctx, chain)
    }

    #[inline]
    pub(crate) fn model_turn_finished<'e>(
        &'e self,
        ctx: &'e HookContext,
        event: ModelTurnFinished<'e>,
    ) -> impl Future<Output = Result<ModelTurnAction, HookFailure>> {
        self.decide::<table::on_model_turn_finished>(ctx, event)
    }

    #[inline]
    pub(crate) fn invalid_tool_call<'e>(
        &'e self,
        ctx: &'e HookContext,
        event: &'e InvalidToolCallContext,
    ) -> impl Future<Output = Result<Option<InvalidToolCallAction>, HookFailure>> {
        self.decide::<table::on_invalid_tool_call>(ctx, event)
    }

    /// Runs the completion dispatch chain; patches apply to `request` as they come, so later
    /// hooks see the patched request.
    #[inline]
    pub(crate) fn dispatch_completion<'e>(
        &'e self,
        ctx: &'e HookContext,
        turn: usize,
        model: &'e str,
        identity: ModelIdentity<'e>,
        request: &'e mut TurnRequest<&mut CompletionRequest>,
    ) -> impl Future<Output = Result<Stacked<Option<HookAnswer>>, HookFailure>> {
        let hooks = self.observers(StepEventKind::CompletionDispatch);
        let chain = RequestChain {
            turn,
            model,
            identity,
            request,
        };
        compose::chained::<table::on_dispatch, Caught, _>(hooks, ctx, chain)
    }

    #[inline]
    pub(crate) fn dispatch_tool<'e>(
        &'e self,
        ctx: &'e HookContext,
        call: &'e DispatchTarget<'e>,
    ) -> impl Future<Output = Result<ToolDispatchDecision, HookFailure>> {
        let hooks = self.observers(StepEventKind::ToolDispatch);
        let chain = ToolCallChain {
            call,
            rewritten: None,
        };
        compose::chained::<table::on_dispatch, Caught, _>(hooks, ctx, chain)
    }

    #[inline]
    pub(crate) fn completion_outcome<'e>(
        &'e self,
        ctx: &'e HookContext,
        model: &'e str,
        response: &'e mut CompletionResponse,
    ) -> impl Future<Output = Result<ModelOutcome, HookFailure>> {
        let hooks = self.observers(StepEventKind::CompletionOutcome);
        let chain = ResponseChain {
            model,
            response,
            replaced: false,
        };
        compose::chained::<table::on_outcome, Caught, _>(hooks, ctx, chain)
    }

    /// A failed model call's outcome: replaced, retried, stopped, or left failed.
    #[inline]
    pub(crate) fn completion_failure<'e>(
        &'e self,
        ctx: &'e HookContext,
        model: &'e str,
        error: &'e CompletionError,
    ) -> impl Future<Output = Result<ModelOutcome, HookFailure>> {
        let hooks = self.observers(StepEventKind::CompletionOutcome);
        compose::chained::<table::on_outcome, Caught, _>(hooks, ctx, FailureChain { model, error })
    }

    #[inline]
    pub(crate) fn tool_outcome<'e>(
        &'e self,
        ctx: &'e HookContext,
        result: &'e mut ToolResult<'_>,
    ) -> impl Future<Output = Result<Stacked<()>, HookFailure>> {
        let hooks = self.observers(StepEventKind::ToolOutcome);
        let chain = ToolResultChain { result };
        compose::chained::<table::on_outcome, Caught, _>(hooks, ctx, chain)
    }

    // The delta rows are asked of the members observing their kind, which a streamed turn
    // looks up once (`HookStack::observers`) rather than for every delta: each lookup was a
    // chain of dependent loads (the stack, its table, the kind's members) before the hook.

    #[inline]
    pub(crate) fn text_delta<'e>(
        observers: Observers<'e>,
        ctx: &'e HookContext,
        event: TextDeltaEvent<'e>,
    ) -> impl Future<Output = Result<ObservationAction, HookFailure>> {
        compose::first_decision::<table::on_text_delta, Caught>(observers, ctx, event)
    }

    #[inline]
    pub(crate) fn reasoning_delta<'e>(
        observers: Observers<'e>,
        ctx: &'e HookContext,
        event: ReasoningDeltaEvent<'e>,
    ) -> impl Future<Output = Result<ObservationAction, HookFailure>> {
        compose::first_decision::<table::on_reasoning_delta, Caught>(observers, ctx, event)
    }

    #[inline]
    pub(crate) fn tool_call_delta<'e>(
        observers: Observers<'e>,
        ctx: &'e HookContext,
        event: ToolCallDeltaEvent<'e>,
    ) -> impl Future<Output = Result<ObservationAction, HookFailure>> {
        compose::first_decision::<table::on_tool_call_delta, Caught>(observers, ctx, event)
    }

    /// Delivers a step-view-only event (`CompletionResponse`, `StreamResponseFinish`) to
    /// `on_event`; the first `Terminate` decides.
    #[inline]
    pub(crate) fn step_event<'e>(
        &'e self,
        ctx: &'e HookContext,
        event: StepEvent<'e>,
    ) -> impl Future<Output = Result<Stacked<()>, HookFailure>> {
        self.decide::<table::on_event>(ctx, event).map(|answer| {
            answer.map(|flow| {
                if let Flow::Terminate(reason) = flow {
                    return Stacked::Stop(reason.into());
                }
                flow.set_aside();
                Stacked::Go(())
            })
        })
    }

    /// Runs every hook's `on_run_settled`; a panic there is logged and the others still run.
    #[inline]
    pub(crate) fn run_settled<'e>(
        &'e self,
        ctx: &'e HookContext,
        event: RunSettledEvent<'e>,
    ) -> impl Future<Output = ()> {
        let hooks = self.observers(StepEventKind::RunSettled);
        compose::everyone_observes::<table::on_run_settled>(hooks, ctx, event)
    }
}
