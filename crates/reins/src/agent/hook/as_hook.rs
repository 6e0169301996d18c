//! A [`HookStack`] as one [`AgentHook`]: what the stack answers for the chained and merged
//! methods (the first-decision and everyone-observes methods answer with their rule directly,
//! see `rows.rs`).
//!
//! Registered as a hook (in an agent, a run or another stack), a stack adds its hooks to the
//! stack it joins, so a run never calls these. They serve code that calls a stack directly,
//! and answer in [`Direct`](super::mode::Direct) mode: a member's panic unwinds to that
//! caller, as it was raised.

use super::StepEventKind;
use super::compose;
use super::compose::Stacked;
use super::events::{
    CompletionCallEvent, DispatchEvent, InvalidToolCallContext, ModelSelectEvent,
    ModelTurnFinished, OutcomeEvent, ReasoningDeltaEvent, RunSettledEvent, RunStartEvent,
    TextDeltaEvent, ToolCallDeltaEvent,
};
use super::links::{
    EffectDispatch, EffectOutcome, FailureChain, HookAnswer, ModelOutcome, PromptChain,
    RequestChain, ResponseChain, SelectionChain, ShownResponse, ToolCallChain,
    ToolDispatchDecision, ToolResultChain,
};
use super::mode::{AsyncMethod, Direct, SyncMethod};
use super::stack::HookStack;
use super::step::{Flow, StepEvent};
use super::table;
use super::{
    AgentHook, CompletionCallAction, DispatchAction, DispatchTarget, HookContext,
    InvalidToolCallAction, ModelSelectionAction, ModelTurnAction, ObservationAction, OutcomeAction,
    OutcomeTarget, RequestPatch, RunStartAction, TurnRequest,
};
use crate::completion::CompletionRequest;
use std::convert::Infallible;

impl AgentHook for HookStack {
    fn observes(&self, kind: StepEventKind) -> bool {
        HookStack::observes(self, kind)
    }

    async fn on_event(&self, ctx: &HookContext, event: StepEvent<'_>) -> Flow {
        self.direct::<table::on_event>(ctx, event).await
    }

    async fn on_run_start(&self, ctx: &HookContext, event: RunStartEvent<'_>) -> RunStartAction {
        self.direct::<table::on_run_start>(ctx, event).await
    }

    async fn on_completion_call(
        &self,
        ctx: &HookContext,
        event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        self.direct::<table::on_completion_call>(ctx, event).await
    }

    fn on_model_select(
        &self,
        ctx: &HookContext,
        event: ModelSelectEvent<'_>,
    ) -> ModelSelectionAction {
        <table::on_model_select as SyncMethod>::stack(self, ctx, event)
    }

    async fn on_model_turn_finished(
        &self,
        ctx: &HookContext,
        event: ModelTurnFinished<'_>,
    ) -> ModelTurnAction {
        self.direct::<table::on_model_turn_finished>(ctx, event)
            .await
    }

    async fn on_invalid_tool_call(
        &self,
        ctx: &HookContext,
        event: &InvalidToolCallContext,
    ) -> Option<InvalidToolCallAction> {
        self.direct::<table::on_invalid_tool_call>(ctx, event).await
    }

    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        self.direct::<table::on_dispatch>(ctx, event).await
    }

    async fn on_outcome(&self, ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        self.direct::<table::on_outcome>(ctx, event).await
    }

    async fn on_text_delta(
        &self,
        ctx: &HookContext,
        event: TextDeltaEvent<'_>,
    ) -> ObservationAction {
        self.direct::<table::on_text_delta>(ctx, event).await
    }

    async fn on_reasoning_delta(
        &self,
        ctx: &HookContext,
        event: ReasoningDeltaEvent<'_>,
    ) -> ObservationAction {
        self.direct::<table::on_reasoning_delta>(ctx, event).await
    }

    async fn on_tool_call_delta(
        &self,
        ctx: &HookContext,
        event: ToolCallDeltaEvent<'_>,
    ) -> ObservationAction {
        self.direct::<table::on_tool_call_delta>(ctx, event).await
    }

    async fn on_run_settled(&self, ctx: &HookContext, event: RunSettledEvent<'_>) {
        self.direct::<table::on_run_settled>(ctx, event).await;
    }
}

impl HookStack {
    /// The stack's answer to `M`, its members called in
    /// [`Direct`](super::mode::Direct) mode.
    async fn direct<'e, M: AsyncMethod>(
        &'e self,
        ctx: &'e HookContext,
        event: M::Event<'e>,
    ) -> M::Action {
        M::stack(self, ctx, event).await
    }
}

pub(super) async fn on_run_start(
    stack: &HookStack,
    ctx: &HookContext,
    event: RunStartEvent<'_>,
) -> Result<RunStartAction, Infallible> {
    let original = event.prompt.text();
    let hooks = stack.observers(StepEventKind::RunStart);
    let chain = PromptChain {
        prompt: event.prompt.clone(),
        history: event.history,
    };
    Ok(
        match compose::chained::<table::on_run_start, Direct, _>(hooks, ctx, chain).await? {
            Stacked::Go(prompt) if prompt.text() == original => RunStartAction::Continue,
            Stacked::Go(prompt) => RunStartAction::Rewrite(prompt.text()),
            Stacked::Stop(reason) => RunStartAction::Stop(reason),
        },
    )
}

pub(super) async fn on_completion_call(
    stack: &HookStack,
    ctx: &HookContext,
    event: CompletionCallEvent<'_>,
) -> Result<CompletionCallAction, Infallible> {
    let hooks = stack.observers(StepEventKind::CompletionCall);
    Ok(
        match compose::merged::<table::on_completion_call, Direct>(hooks, ctx, event).await? {
            Stacked::Go(Some(patch)) => CompletionCallAction::patch(patch),
            Stacked::Go(None) => CompletionCallAction::Continue,
            Stacked::Stop(reason) => CompletionCallAction::Stop(reason),
        },
    )
}

/// Members start from the selection the enclosing stack has made so far.
pub(super) fn on_model_select(
    stack: &HookStack,
    ctx: &HookContext,
    event: ModelSelectEvent<'_>,
) -> Result<ModelSelectionAction, Infallible> {
    let hooks = stack.observers(StepEventKind::ModelSelect);
    let chain = SelectionChain {
        event: ModelSelectEvent {
            default_model: event.selected_model,
            ..event
        },
        selected: None,
    };
    Ok(
        match compose::chained_now::<table::on_model_select, Direct, _>(hooks, ctx, chain)? {
            Stacked::Go(Some(label)) => ModelSelectionAction::Select(label),
            Stacked::Go(None) => ModelSelectionAction::Continue,
            Stacked::Stop(reason) => ModelSelectionAction::Stop(reason),
        },
    )
}

pub(super) async fn on_dispatch(
    stack: &HookStack,
    ctx: &HookContext,
    event: DispatchEvent<'_>,
) -> Result<DispatchAction, Infallible> {
    let hooks = stack.observers(event.kind.dispatch_event_kind());
    Ok(match *event.target {
        DispatchTarget::Tool(_) => {
            let chain = ToolCallChain {
                call: event.target,
                rewritten: None,
            };
            match compose::chained::<table::on_dispatch, Direct, _>(hooks, ctx, chain).await? {
                ToolDispatchDecision::Proceed(Some(rewritten)) => {
                    DispatchAction::RewriteToolArgs(Box::new(rewritten.0))
                }
                ToolDispatchDecision::Proceed(None) => DispatchAction::Proceed,
                ToolDispatchDecision::Skip(reason) => DispatchAction::Skip(reason),
                ToolDispatchDecision::Deny(report) => DispatchAction::Deny(report),
                ToolDispatchDecision::Stop(reason) => DispatchAction::Stop(reason),
                ToolDispatchDecision::Suspend(reason) => DispatchAction::Suspend(reason),
            }
        }
        DispatchTarget::Completion {
            turn,
            model,
            identity,
            request,
        } => {
            // The members' patches apply to a copy, made by the first of them; what they
            // changed is the stack's patch.
            let mut turn_request = TurnRequest::new(request);
            let chain = RequestChain {
                turn,
                model,
                identity,
                request: &mut turn_request,
            };
            let answer =
                compose::chained::<table::on_dispatch, Direct, _>(hooks, ctx, chain).await?;
            match (answer, turn_request.into_patched()) {
                (Stacked::Stop(reason), _) => DispatchAction::Stop(reason),
                (Stacked::Go(Some(HookAnswer::Response(response))), _) => {
                    DispatchAction::Respond(response)
                }
                (Stacked::Go(Some(HookAnswer::Failure(error))), _) => DispatchAction::Fail(error),
                (Stacked::Go(None), Some(patched)) if patched != *request => {
                    DispatchAction::patch(patch_between(request, patched))
                }
                (Stacked::Go(None), _) => DispatchAction::Proceed,
            }
        }
        DispatchTarget::Effect { .. } => {
            let chain = EffectDispatch(event);
            compose::chained::<table::on_dispatch, Direct, _>(hooks, ctx, chain).await?
        }
    })
}

pub(super) async fn on_outcome(
    stack: &HookStack,
    ctx: &HookContext,
    event: OutcomeEvent<'_>,
) -> Result<OutcomeAction, Infallible> {
    let hooks = stack.observers(event.kind.outcome_event_kind());
    Ok(match *event.target {
        OutcomeTarget::Tool(result) => {
            let mut rewritten = result.clone();
            let chain = ToolResultChain {
                result: &mut rewritten,
            };
            match compose::chained::<table::on_outcome, Direct, _>(hooks, ctx, chain).await? {
                Stacked::Stop(reason) => OutcomeAction::Stop(reason),
                Stacked::Go(())
                    if rewritten.output() == result.output()
                        && rewritten.outcome() == result.outcome() =>
                {
                    OutcomeAction::Proceed
                }
                // The members' rewrite as they left it (not its text: the output's type is
                // the enclosing stack's to see), and their mask of the outcome.
                Stacked::Go(()) => match rewritten.into_rewritten() {
                    (None, None) => OutcomeAction::Proceed,
                    (Some(output), None) => OutcomeAction::RewriteToolOutput(Box::new(output)),
                    (output, outcome_text) => OutcomeAction::MaskToolResult {
                        output: output.map(Box::new),
                        outcome_text,
                    },
                },
            }
        }
        OutcomeTarget::Completion { model, response } => {
            let mut slot = ShownResponse {
                shown: response,
                replacement: None,
            };
            let chain = ResponseChain {
                model,
                response: &mut slot,
                replaced: false,
            };
            let decision =
                compose::chained::<table::on_outcome, Direct, _>(hooks, ctx, chain).await?;
            match (decision, slot.replacement) {
                (ModelOutcome::Keep(true), Some(replacement)) => {
                    OutcomeAction::Replace(replacement)
                }
                (decision, _) => model_outcome_action(decision),
            }
        }
        OutcomeTarget::CompletionFailed { model, error } => {
            let chain = FailureChain { model, error };
            model_outcome_action(
                compose::chained::<table::on_outcome, Direct, _>(hooks, ctx, chain).await?,
            )
        }
        OutcomeTarget::Effect { .. } => {
            let chain = EffectOutcome(event);
            compose::chained::<table::on_outcome, Direct, _>(hooks, ctx, chain).await?
        }
    })
}

/// What a stack answers for its members' decision about a model call's outcome.
fn model_outcome_action(decision: ModelOutcome) -> OutcomeAction {
    match decision {
        ModelOutcome::Stop(reason) => OutcomeAction::Stop(reason),
        ModelOutcome::RetryOn(label) => OutcomeAction::RetryOn(label),
        ModelOutcome::Served(response) => OutcomeAction::Replace(response),
        ModelOutcome::Keep(_) | ModelOutcome::Fail => OutcomeAction::Proceed,
    }
}

/// The patch that turns `before` into `after` for the fields a dispatch patch can change.
fn patch_between(before: &CompletionRequest, after: CompletionRequest) -> RequestPatch {
    let mut patch = RequestPatch::new();
    if after.preamble != before.preamble {
        patch.preamble = after.preamble;
    }
    if after.temperature != before.temperature {
        patch.temperature = after.temperature;
    }
    if after.max_tokens != before.max_tokens {
        patch.max_tokens = after.max_tokens;
    }
    if after.tool_choice != before.tool_choice {
        patch.tool_choice = after.tool_choice;
    }
    if after.tools != before.tools {
        patch.active_tools = Some(after.tools.iter().map(|t| t.name.clone()).collect());
    }
    if after.additional_params != before.additional_params {
        patch.additional_params = after.additional_params;
    }
    if after.documents != before.documents {
        // Documents added after the ones shown are additions; any other change (a member
        // rewrote or removed one) replaces the list.
        match after.documents.strip_prefix(before.documents.as_slice()) {
            Some(added) => patch.context = added.to_vec(),
            None => patch.documents = Some(after.documents),
        }
    }
    if after.history != before.history {
        patch.history = Some(after.history);
    }
    patch
}
