//! What a run has used, kept in the run: in the scratchpad while it runs, and recorded as its
//! one entry of the kind whenever the run's entries are taken (each checkpoint, the run's
//! end), so a durable run resumed elsewhere keeps its counts and its start time, and the
//! run's state does not grow with its calls.

use super::price::{Price, cached_within_input};
use crate::agent::{HookContext, RunState};
use crate::completion::Usage;
use crate::hooks::recorded::Recorded;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The entry kind the ledger is recorded under. Every budget of a run shares the one ledger:
/// each model turn and tool call is counted once (by turn index and call id), however many
/// budgets observe it, and each budget prices the per-model token counts itself.
pub(super) const ENTRY_KIND: &str = "reins.budget";

/// The run's consumption, as recorded in its entries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Ledger {
    /// When the run started, in milliseconds since the Unix epoch: a wall-clock time, since
    /// the run may be resumed in another process.
    pub started_at_ms: u64,
    /// Tokens per model label, so each budget applies its own prices.
    #[serde(default)]
    pub by_model: BTreeMap<String, Usage>,
    #[serde(default)]
    pub model_calls: u64,
    /// Tool calls that ran (succeeded or failed).
    #[serde(default)]
    pub tool_calls: u64,
    /// The turn of the last model call counted (its usage and, if a budget let it through,
    /// the call itself).
    #[serde(default)]
    pub accounted_turn: usize,
    /// That call's attempt within its turn ([`HookContext::model_attempt`]).
    #[serde(default)]
    pub accounted_attempt: usize,
    /// The turn `calls` belongs to; the list is reset when the turn changes (a turn's calls
    /// all have their outcome before the next model call).
    #[serde(default)]
    pub calls_turn: usize,
    /// The tool calls of `calls_turn` a budget let through, by internal call id: each is
    /// counted once however many budgets see it.
    #[serde(default)]
    pub calls: Vec<CountedCall>,
    /// The turn and model label of the last model call a budget let through.
    #[serde(default)]
    pub dispatched: Option<(usize, String)>,
    /// That call's attempt within its turn.
    #[serde(default)]
    pub dispatched_attempt: usize,
    /// Whether a budget has warned that a model reported no usage: once a run is enough.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warned_no_usage: bool,
}

/// One model call of a run: its turn, and its attempt within the turn.
pub(super) type ModelCall = (usize, usize);

/// The model call a hook is called for.
pub(super) fn current_call(ctx: &HookContext) -> ModelCall {
    (ctx.turn(), ctx.model_attempt())
}

/// A tool call of the current turn, let through by a budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct CountedCall {
    pub id: String,
    /// Whether it ran (and is in `tool_calls`); until then it holds a slot, so concurrent
    /// calls cannot all take the last one.
    pub ran: bool,
}

/// The label the tokens a tool reports are filed (and priced) under: `tool:` and its name.
/// The tool's own model is not known to the run, so its price is set under this label.
pub(super) fn tool_label(tool: &str) -> String {
    format!("tool:{tool}")
}

/// Adds `usage` to `total`, saturating: token counts come from providers, and an absurd
/// count must not overflow. A call's total counts at least its input plus output, so a
/// provider reporting a smaller total (or none) cannot take its tokens past a total limit;
/// its cache counts at most its input, so cached tokens reported beyond one call's input
/// cannot be priced as another call's.
pub(super) fn add_usage(total: &mut Usage, usage: Usage) {
    let call_total =
        (usage.total_tokens).max(usage.input_tokens.saturating_add(usage.output_tokens));
    *total += Usage {
        total_tokens: call_total,
        ..cached_within_input(usage)
    };
}

/// Why the ledger could not be used. The budget then stops the run: it guards spending, so
/// not knowing what was spent denies.
pub(super) struct LedgerError(pub String);

pub(super) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}

impl Ledger {
    fn starting_now() -> Self {
        Ledger {
            started_at_ms: now_ms(),
            ..Ledger::default()
        }
    }

    /// Tokens over every model.
    pub fn tokens(&self) -> Usage {
        let mut total = Usage::default();
        for usage in self.by_model.values() {
            add_usage(&mut total, *usage);
        }
        total
    }

    pub fn started_at(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.started_at_ms)
    }

    /// Time since the run started; zero if the clock moved backwards.
    pub fn elapsed(&self) -> Duration {
        Duration::from_millis(now_ms().saturating_sub(self.started_at_ms))
    }

    /// Forgets the calls of earlier turns, so the list stays as short as one turn. A call
    /// left without an outcome there was stopped with the run, and never ran.
    pub fn enter_turn(&mut self, turn: usize) {
        if self.calls_turn != turn {
            self.calls_turn = turn;
            self.calls.clear();
        }
    }

    /// Whether `call` (or a later one) is counted already: each model call is counted once
    /// however many budgets see it.
    pub fn is_accounted(&self, call: ModelCall) -> bool {
        call <= (self.accounted_turn, self.accounted_attempt)
    }

    pub fn mark_accounted(&mut self, call: ModelCall) {
        (self.accounted_turn, self.accounted_attempt) = call;
    }

    /// The last model call a budget let through.
    pub fn dispatched_call(&self) -> Option<ModelCall> {
        let (turn, _) = self.dispatched.as_ref()?;
        Some((*turn, self.dispatched_attempt))
    }

    /// Records `call` of `model` as let through. A call let through earlier whose outcome no
    /// budget saw (a hook before them answered it: retried it on another model, or replaced
    /// a failed call's response) was made all the same: it is counted now. Answers whether
    /// the ledger changed beyond the dispatch record.
    pub fn dispatch(&mut self, call: ModelCall, model: &str) -> bool {
        let earlier = self
            .dispatched_call()
            .filter(|&earlier| earlier != call && !self.is_accounted(earlier));
        if let Some(earlier) = earlier {
            self.model_calls = self.model_calls.saturating_add(1);
            self.mark_accounted(earlier);
        }
        match &mut self.dispatched {
            // The same model as last time, usually: no new copy of its label.
            Some((turn, label)) if label == model => *turn = call.0,
            dispatched => *dispatched = Some((call.0, model.to_owned())),
        }
        self.dispatched_attempt = call.1;
        earlier.is_some()
    }

    /// Counts a tool call that ran, and the tokens it reported spending
    /// ([`ToolCallContext::add_usage`](crate::tool::ToolCallContext::add_usage)), filed under
    /// its [`tool_label`].
    pub fn count_tool_call(&mut self, tool: &str, usage: Usage) {
        self.tool_calls = self.tool_calls.saturating_add(1);
        if usage != Usage::default() {
            add_usage(self.by_model.entry(tool_label(tool)).or_default(), usage);
        }
    }

    /// Tool calls that ran, plus the ones let through that are still running.
    pub fn tool_calls_in_flight(&self) -> u64 {
        let running = self.calls.iter().filter(|call| !call.ran).count();
        self.tool_calls
            .saturating_add(u64::try_from(running).unwrap_or(u64::MAX))
    }
}

/// Runs `f` on the run's ledger (created on first use in a new run, read from the run's
/// entries on first use in this process) and has it recorded again if `f` says it changed.
/// The scratchpad's lock is held throughout, so concurrent tool calls check and count
/// atomically.
pub(super) fn with_ledger<R>(
    ctx: &HookContext,
    f: impl FnOnce(&mut Ledger) -> (R, bool),
) -> Result<R, LedgerError> {
    ctx.scratchpad().update(|recorded: &mut Recorded<Ledger>| {
        let ledger = recorded
            .load(ctx, ENTRY_KIND, Ledger::starting_now)
            .map_err(|error| {
                LedgerError(format!(
                    "budget: the run's budget record could not be read ({error}), so its \
                     spending cannot be checked"
                ))
            })?;
        let (result, changed) = f(ledger);
        if changed {
            recorded.changed();
        }
        Ok(result)
    })
}

/// The ledger as it stands, without creating one: the scratchpad's copy, else the newest
/// entry.
pub(super) fn read(ctx: &HookContext) -> Option<Ledger> {
    ctx.scratchpad()
        .update(|recorded: &mut Recorded<Ledger>| match recorded.get() {
            Some(ledger) => Some(ledger.clone()),
            None => ctx.last_entry::<Ledger>(ENTRY_KIND).ok().flatten(),
        })
}

/// The newest ledger recorded in a run's state.
pub(super) fn read_state(state: &RunState) -> Option<Ledger> {
    let entry = state
        .entries
        .iter()
        .rev()
        .find(|entry| entry.kind == ENTRY_KIND)?;
    Ledger::deserialize(&entry.value).ok()
}

/// What a run has used so far, as one [`Budget`](super::Budget) sees it (the cost is priced
/// with that budget's price table). Read it with [`Budget::usage`](super::Budget::usage)
/// from a hook, or [`Budget::usage_in`](super::Budget::usage_in) from a finished or
/// suspended run's state.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BudgetUsage {
    /// Input tokens over the run.
    pub input_tokens: u64,
    /// Output tokens over the run.
    pub output_tokens: u64,
    /// Input plus output tokens, as the providers counted them (each call's at least its
    /// input plus output, whatever total its provider reported).
    pub total_tokens: u64,
    /// The cost of the models that have a price.
    pub cost: f64,
    /// Models that were called but have no price (their tokens are not in `cost`), and the
    /// `tool:NAME` labels of tools that reported tokens without a price.
    pub unpriced_models: Vec<String>,
    /// Tokens per model label; the tokens a tool reported spending
    /// ([`ToolCallContext::add_usage`](crate::tool::ToolCallContext::add_usage), such as an
    /// agent it runs) under `tool:` and the tool's name.
    pub by_model: BTreeMap<String, Usage>,
    /// Model calls made, each counted once: a failed call and each call a hook made again on
    /// another model count too. A response a hook registered before the budget served (a
    /// cache hit) is no call; its tokens, if it reports any, count under its model's label.
    /// (A budget counts the tokens of the responses it sees: one registered after a hook
    /// that sends a response to another model counts that call but not its tokens.)
    pub model_calls: u64,
    /// Tool calls that ran, successfully or not (calls that were skipped, denied or stopped
    /// are not counted).
    pub tool_calls: u64,
    /// When the run started (its first start, for a resumed run).
    pub started_at: SystemTime,
    /// Time from the start to the moment this was read.
    pub elapsed: Duration,
}

impl BudgetUsage {
    /// What `limit` has used: a count, tokens, cost, or seconds for the wall time.
    pub fn used(&self, limit: super::BudgetLimit) -> f64 {
        let totals = Totals {
            tokens: Usage {
                input_tokens: self.input_tokens,
                output_tokens: self.output_tokens,
                total_tokens: self.total_tokens,
                ..Usage::default()
            },
            cost: self.cost,
            unpriced: self.unpriced_models.first().map(String::as_str),
            model_calls: self.model_calls,
            tool_calls: self.tool_calls,
            elapsed: self.elapsed,
        };
        totals.used(limit)
    }
}

/// What a budget's checks compare with its limits, read from the ledger without the copies
/// of the per-model counts and model labels the public [`BudgetUsage`] carries (the checks
/// run on every dispatch).
#[derive(Debug, Clone, Copy)]
pub(super) struct Totals<'l> {
    pub tokens: Usage,
    /// The cost of the models that have a price.
    pub cost: f64,
    /// The first model called that has no price (its tokens are not in `cost`).
    pub unpriced: Option<&'l str>,
    pub model_calls: u64,
    pub tool_calls: u64,
    pub elapsed: Duration,
}

impl Totals<'_> {
    /// What `limit` has used: a count, tokens, cost, or seconds for the wall time.
    pub fn used(&self, limit: super::BudgetLimit) -> f64 {
        use super::BudgetLimit::*;
        // Token and call counts stay far below 2^53, where an f64 is exact.
        match limit {
            InputTokens => self.tokens.input_tokens as f64,
            OutputTokens => self.tokens.output_tokens as f64,
            TotalTokens => self.tokens.total_tokens as f64,
            Cost => self.cost,
            ModelCalls => self.model_calls as f64,
            ToolCalls => self.tool_calls as f64,
            WallTime => self.elapsed.as_secs_f64(),
        }
    }
}

/// The ledger's totals; `price` gives a model's prices, or `None` when it has none. Without `price` the cost is not summed (zero, nothing
/// unpriced), and unless `timed` the clock is not read (no time elapsed): a check leaves out
/// what no limit of its budget compares.
pub(super) fn totals_of(
    ledger: &Ledger,
    price: Option<impl Fn(&str) -> Option<Price>>,
    timed: bool,
) -> Totals<'_> {
    let mut cost = 0.0;
    let mut unpriced = None;
    if let Some(price) = price {
        for (model, usage) in &ledger.by_model {
            match price(model) {
                Some(price) => cost += price.cost(usage),
                None => {
                    unpriced.get_or_insert(model.as_str());
                }
            }
        }
    }
    Totals {
        tokens: ledger.tokens(),
        cost,
        unpriced,
        model_calls: ledger.model_calls,
        tool_calls: ledger.tool_calls,
        elapsed: if timed {
            ledger.elapsed()
        } else {
            Duration::ZERO
        },
    }
}

/// Builds the public view; `price` as for [`totals_of`].
pub(super) fn usage_of(ledger: &Ledger, price: impl Fn(&str) -> Option<Price>) -> BudgetUsage {
    let totals = totals_of(ledger, Some(&price), true);
    let unpriced_models = (ledger.by_model.keys())
        .filter(|model| price(model).is_none())
        .cloned()
        .collect();
    BudgetUsage {
        input_tokens: totals.tokens.input_tokens,
        output_tokens: totals.tokens.output_tokens,
        total_tokens: totals.tokens.total_tokens,
        cost: totals.cost,
        unpriced_models,
        by_model: ledger.by_model.clone(),
        model_calls: totals.model_calls,
        tool_calls: totals.tool_calls,
        started_at: ledger.started_at(),
        elapsed: totals.elapsed,
    }
}
