//! The checks: which limits are used up, before a model call and before a tool call.

use super::ledger::{CountedCall, Totals, current_call, with_ledger};
use super::{Budget, BudgetExceeded, BudgetLimit};
use crate::agent::{DispatchAction, HookContext, StopReason};

/// Which limits a check compares against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tier {
    /// The configured limits.
    Soft,
    /// The limits that stop the run: the configured ones, or the hard ones when switching.
    Stop,
}

impl Budget {
    fn max(&self, limit: BudgetLimit, tier: Tier) -> Option<f64> {
        let limits = &self.limits;
        // Counts stay far below 2^53, where an f64 is exact.
        let configured = match limit {
            BudgetLimit::InputTokens => limits.input_tokens.map(|n| n as f64),
            BudgetLimit::OutputTokens => limits.output_tokens.map(|n| n as f64),
            BudgetLimit::TotalTokens => limits.total_tokens.map(|n| n as f64),
            BudgetLimit::Cost => limits.cost,
            BudgetLimit::ModelCalls => limits.model_calls.map(|n| n as f64),
            BudgetLimit::ToolCalls => limits.tool_calls.map(|n| n as f64),
            BudgetLimit::WallTime => limits.wall_time.map(|d| d.as_secs_f64()),
        }?;
        if tier == Tier::Soft || self.switch_to.is_none() {
            return Some(configured);
        }
        let hard = configured * self.hard_factor;
        Some(match limit {
            BudgetLimit::Cost | BudgetLimit::WallTime => hard,
            _ => hard.floor(),
        })
    }

    /// The first used-up limit of `tier`. `tool_calls` is the tool-call count to compare
    /// (`None` where the tool-call limit does not apply: before a model call, which may still
    /// answer without tools).
    pub(super) fn exceeded(
        &self,
        usage: &Totals<'_>,
        tier: Tier,
        tool_calls: Option<u64>,
    ) -> Option<BudgetExceeded> {
        BudgetLimit::ALL.into_iter().find_map(|limit| {
            // Only a configured limit is compared (`usage` leaves out what none compares).
            let max = self.max(limit, tier)?;
            let used = match limit {
                // Counts stay far below 2^53, where an f64 is exact.
                BudgetLimit::ToolCalls => tool_calls? as f64,
                _ => usage.used(limit),
            };
            (used >= max).then_some(BudgetExceeded { limit, used, max })
        })
    }

    /// Fail closed: with a cost limit, a model without a price makes the cost unknowable.
    fn unpriced(&self, usage: &Totals<'_>, model: Option<&str>) -> Option<String> {
        self.limits.cost?;
        let model = model
            .filter(|model| self.price_of(model).is_none())
            .or(usage.unpriced)?;
        if let Some(tool) = model.strip_prefix("tool:") {
            return Some(format!(
                "budget: no price is set for the tokens the tool `{tool}` reported spending \
                 (price them as `price(\"{model}\", input, output)`, or give a default \
                 price), so the run's cost cannot be checked against its limit"
            ));
        }
        Some(format!(
            "budget: no price is set for the model labelled `{model}` (prices go by the label \
             a model was registered under, not the provider's name for it), so the run's cost \
             cannot be checked against its limit"
        ))
    }

    pub(super) fn before_model_call(&self, ctx: &HookContext, model: &str) -> DispatchAction {
        let call = current_call(ctx);
        let verdict = with_ledger(ctx, |ledger| {
            let counted = ledger.dispatch(call, model);
            let usage = self.totals_from(ledger);
            if let Some(reason) = self.unpriced(&usage, Some(model)).map(StopReason::from) {
                return (Some(reason), counted);
            }
            if let Some(stop) = self.exceeded(&usage, Tier::Stop, None) {
                return (Some(StopReason::because(stop)), counted);
            }
            // Past a soft limit only the cheaper model may be called, whatever later hooks
            // selected.
            if let Some(cheaper) = &self.switch_to {
                let tool_calls = Some(ledger.tool_calls_in_flight());
                if let Some(soft) = self.exceeded(&usage, Tier::Soft, tool_calls) {
                    if model != cheaper {
                        return (Some(StopReason::because(soft)), counted);
                    }
                }
            }
            (None, counted)
        });
        match verdict {
            Ok(None) => DispatchAction::proceed(),
            Ok(Some(reason)) => DispatchAction::stop(reason),
            Err(error) => DispatchAction::stop(error.0),
        }
    }

    pub(super) fn before_tool_call(&self, ctx: &HookContext, call_id: &str) -> DispatchAction {
        let turn = ctx.turn();
        let verdict = with_ledger(ctx, |ledger| {
            ledger.enter_turn(turn);
            let known = ledger.calls.iter().any(|call| call.id == call_id);
            let mut tool_calls = ledger.tool_calls_in_flight();
            if known {
                // Checked again (another budget, or a resumed call): compare what was used
                // before this call.
                tool_calls = tool_calls.saturating_sub(1);
            }
            let usage = self.totals_from(ledger);
            if let Some(reason) = self.unpriced(&usage, None).map(StopReason::from) {
                return (Some(reason), false);
            }
            if let Some(stop) = self.exceeded(&usage, Tier::Stop, Some(tool_calls)) {
                return (Some(StopReason::because(stop)), false);
            }
            if known {
                return (None, false);
            }
            // The call takes its slot now, under the scratchpad's lock, so concurrent calls
            // of one turn cannot all take the last one.
            ledger.calls.push(CountedCall {
                id: call_id.to_owned(),
                ran: false,
            });
            (None, true)
        });
        match verdict {
            Ok(None) => DispatchAction::proceed(),
            Ok(Some(reason)) => DispatchAction::stop(reason),
            Err(error) => DispatchAction::stop(error.0),
        }
    }
}
