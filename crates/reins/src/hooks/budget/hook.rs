//! The budget's [`AgentHook`] implementation: when each check runs, and where usage is
//! added.

use super::Budget;
use super::check::Tier;
use super::ledger::{CountedCall, add_usage, current_call, with_ledger};
use crate::agent::{
    AgentHook, DispatchAction, DispatchEvent, DispatchKind, HookContext, ModelSelectEvent,
    ModelSelectionAction, OutcomeAction, OutcomeEvent, RunStartAction, RunStartEvent,
    StepEventKind,
};
use crate::completion::Usage;
use crate::tool::ToolOutcome;

/// The label usage is filed under when no model dispatch was seen for a turn (it has no
/// price, so a cost limit fails closed on it).
pub(super) const UNKNOWN_MODEL: &str = "(unknown)";

/// A model that answers without reporting usage (many local servers) leaves token and cost
/// limits counting zero for it: said once a run, since failing the run would refuse every
/// such provider, and silence would let a limit guard nothing.
fn warn_no_usage(model: &str) {
    tracing::warn!(
        model,
        "budget: the model `{model}` answered with no usage, so its tokens count as zero \
         against the token and cost limits; enable usage reporting on its server (for an \
         OpenAI-compatible stream, `stream_options.include_usage`) or limit model calls instead"
    );
}

impl AgentHook for Budget {
    fn observes(&self, kind: StepEventKind) -> bool {
        match kind {
            StepEventKind::RunStart
            | StepEventKind::CompletionDispatch
            | StepEventKind::CompletionOutcome
            | StepEventKind::ToolDispatch
            | StepEventKind::ToolOutcome => true,
            StepEventKind::ModelSelect => self.switch_to.is_some(),
            _ => false,
        }
    }

    async fn on_run_start(&self, ctx: &HookContext, _event: RunStartEvent<'_>) -> RunStartAction {
        // Records the start time now, so hooks and prompts before the first model call
        // count against the wall time.
        match with_ledger(ctx, |_| ((), false)) {
            Ok(()) => RunStartAction::continue_run(),
            Err(error) => RunStartAction::stop(error.0),
        }
    }

    fn on_model_select(
        &self,
        ctx: &HookContext,
        event: ModelSelectEvent<'_>,
    ) -> ModelSelectionAction {
        let Some(cheaper) = &self.switch_to else {
            return ModelSelectionAction::continue_run();
        };
        // Selecting a label no model is registered under would fail the run with an error
        // about the label, hiding the budget's: past the limit, the dispatch check stops the
        // run with its `BudgetExceeded` instead, as if no cheaper model had been given.
        let registered = event.available_models.contains(cheaper);
        let past_soft_limit = with_ledger(ctx, |ledger| {
            let usage = self.totals_from(ledger);
            let tool_calls = Some(ledger.tool_calls_in_flight());
            let soft = self.exceeded(&usage, Tier::Soft, tool_calls);
            (soft.is_some(), false)
        });
        match past_soft_limit {
            Ok(true) if registered => ModelSelectionAction::select(cheaper.clone()),
            Ok(true) => {
                tracing::error!(
                    model = cheaper.as_str(),
                    registered = ?event.available_models,
                    "budget: no model is registered under the label to switch to; the run \
                     stops at the limit instead"
                );
                ModelSelectionAction::continue_run()
            }
            Ok(false) => ModelSelectionAction::continue_run(),
            Err(error) => ModelSelectionAction::stop(error.0),
        }
    }

    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.kind {
            DispatchKind::Completion => {
                self.before_model_call(ctx, event.model().unwrap_or(UNKNOWN_MODEL))
            }
            DispatchKind::Tool => match event.internal_call_id() {
                Some(call_id) => self.before_tool_call(ctx, call_id),
                None => DispatchAction::proceed(),
            },
            _ => DispatchAction::proceed(),
        }
    }

    async fn on_outcome(&self, ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        let turn = ctx.turn();
        let recorded = if let Some(response) = event.completion() {
            let usage = response.usage;
            let call = current_call(ctx);
            with_ledger(ctx, |ledger| {
                if ledger.is_accounted(call) {
                    return ((), false);
                }
                // A response an earlier hook served (a cache hit) never reached this budget's
                // dispatch: its usage is filed under the model it stands for, and it is no
                // model call.
                let called = ledger.dispatched_call() == Some(call);
                let model = event.model().unwrap_or(UNKNOWN_MODEL);
                // The label is copied only the first time the model is counted.
                match ledger.by_model.get_mut(model) {
                    Some(counted) => add_usage(counted, usage),
                    None => {
                        let mut counted = Usage::default();
                        add_usage(&mut counted, usage);
                        ledger.by_model.insert(model.to_owned(), counted);
                    }
                }
                if called {
                    ledger.model_calls = ledger.model_calls.saturating_add(1);
                    if usage == Usage::default()
                        && self.limits.counts_tokens()
                        && !ledger.warned_no_usage
                    {
                        ledger.warned_no_usage = true;
                        warn_no_usage(model);
                    }
                }
                ledger.mark_accounted(call);
                ((), true)
            })
        } else if event.completion_error().is_some() {
            // A failed call was made all the same (providers report no usage for it).
            let call = current_call(ctx);
            with_ledger(ctx, |ledger| {
                let counts = !ledger.is_accounted(call) && ledger.dispatched_call() == Some(call);
                if counts {
                    ledger.model_calls = ledger.model_calls.saturating_add(1);
                    ledger.mark_accounted(call);
                }
                ((), counts)
            })
        } else if let Some(result) = event.tool_outcome() {
            // A call a later hook skipped or denied did not run: it gives its slot back.
            let ran = !matches!(
                result.outcome(),
                ToolOutcome::Skipped { .. } | ToolOutcome::Denied { .. }
            );
            let call_id = result.internal_call_id();
            with_ledger(ctx, |ledger| {
                ledger.enter_turn(turn);
                let position = ledger.calls.iter().position(|call| call.id == call_id);
                let changed = match position {
                    Some(index) if ledger.calls[index].ran => false,
                    Some(index) if ran => {
                        ledger.calls[index].ran = true;
                        ledger.count_tool_call(result.tool_name(), result.usage());
                        true
                    }
                    Some(index) => {
                        ledger.calls.remove(index);
                        true
                    }
                    // It ran without a budget letting it through (a decision on a resumed
                    // run replaces the dispatch hooks).
                    None if ran => {
                        ledger.calls.push(CountedCall {
                            id: call_id.to_owned(),
                            ran: true,
                        });
                        ledger.count_tool_call(result.tool_name(), result.usage());
                        true
                    }
                    None => false,
                };
                ((), changed)
            })
        } else {
            return OutcomeAction::proceed();
        };
        match recorded {
            Ok(()) => OutcomeAction::proceed(),
            Err(error) => OutcomeAction::stop(error.0),
        }
    }
}
