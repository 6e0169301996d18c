//! [`Budget`]: limits on tokens, cost, model calls, tool calls and wall time, checked before
//! each model call and tool call. Past a limit the run stops with a typed
//! [`BudgetExceeded`], or first switches to a cheaper model.

mod check;
mod hook;
mod ledger;
mod limit;
mod price;
#[cfg(test)]
mod tests;

pub use ledger::BudgetUsage;
pub use limit::{BudgetExceeded, BudgetLimit};

use crate::agent::{HookContext, RunState};
use ledger::Ledger;
use price::Price;
use std::collections::BTreeMap;
use std::time::Duration;

/// Limits on what one run may spend: input, output and total tokens, cost (from a price table
/// per model label, with prompt-cache reads and writes at their own prices when given: see
/// [`cache_price`](Self::cache_price)), model calls, tool calls and wall time.
///
/// **When it checks.** Before every model call (`on_dispatch` of the call, once the model is
/// chosen) and before every tool call, every limit is checked against what the run has used
/// so far; each model turn's [`Usage`](crate::completion::Usage) is added when the response
/// arrives. A limit is used up once `used >= max`: a model call is refused after the run has
/// made `max_model_calls` calls or read or written its maximum of tokens, so one call can go
/// past a token or cost limit, never two. The tokens a tool reports spending
/// ([`ToolCallContext::add_usage`](crate::tool::ToolCallContext::add_usage): a tool that runs
/// an agent of its own) count too, when its call's outcome arrives, filed under the label
/// `tool:` and the tool's name (price them there). A tool call is refused once `max_tool_calls` calls
/// ran, and also when the run could not make another model call to read its result. An
/// answer the model already gave is never thrown away: the check is before calls, not after.
/// A tool call decided on resume ([`ToolDecision`](crate::agent::ToolDecision), given to a
/// suspended run) takes the place of its dispatch hooks, so the budget does not refuse it; it
/// still counts once it ran.
///
/// **A call under way is not interrupted.** The wall time, like every limit, is checked
/// before calls: a tool or model call that hangs holds the run past `max_wall_time` until it
/// returns, and the run stops at the next check. Bound each call as well (a tool's own
/// timeout, such as [`FnTool::timeout`](crate::tool::FnTool::timeout), and the provider's),
/// or drop the run's future (`tokio::time::timeout` around it) for a hard deadline.
///
/// **What happens then.** By default the run stops with [`PromptError::Cancelled`] whose
/// reason is a [`BudgetExceeded`] ([`BudgetExceeded::from_error`] reads it back). With
/// [`on_exceeded_switch_to`](Self::on_exceeded_switch_to) the run first moves to a cheaper
/// model and stops only at the hard limits.
///
/// **State.** What the run used and when it started live in the run (its scratchpad, and an
/// entry, `reins.budget`, recorded at each checkpoint and the run's end), not in the hook:
/// one `Budget` serves any number of concurrent runs, and a durable run resumed in another
/// process keeps its counts and its start time, so the wall time includes a pause. Several
/// budgets in one run share those counts (each call is counted once) and each prices them
/// with its own table.
///
/// **Fails closed.** An unreadable budget record, or a cost limit with a model that has no
/// price, stops the run (with a reason that is not a [`BudgetExceeded`]). Providers that
/// report no usage count zero tokens; with a token or cost limit, the first such answer of a
/// run is warned about (`tracing::warn!`, naming the model).
///
/// [`PromptError::Cancelled`]: crate::agent::PromptError::Cancelled
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::completion::Usage;
/// use reins::hooks::budget::{Budget, BudgetExceeded, BudgetLimit};
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::tool_fn;
/// use serde_json::json;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Query {
///     q: String,
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let search = tool_fn("search", "Searches the web.", |args: Query| async move {
///     Ok::<_, std::convert::Infallible>(format!("results for {}", args.q))
/// });
/// // Every turn reads 1,000 tokens and writes 400.
/// let model = ScriptedModel::new([
///     Turn::tool_call("search", json!({"q": "rust"})).usage(Usage::new(1_000, 400)),
///     Turn::tool_call("search", json!({"q": "tokio"})).usage(Usage::new(1_000, 400)),
///     Turn::text("Here is what I found.").usage(Usage::new(1_000, 400)),
/// ]);
/// let budget = Budget::new()
///     .max_output_tokens(700)
///     .max_cost(1.0)
///     .price("default", 3.0, 15.0); // per million input / output tokens
/// let agent = AgentBuilder::new(model.clone())
///     .tool(search)
///     .add_hook(budget)
///     .build();
///
/// let error = agent.prompt("Research async Rust").await.unwrap_err();
/// // Two turns wrote 800 tokens: the second search and the third model call never happen.
/// let stop = BudgetExceeded::from_error(&error).expect("the budget stopped the run");
/// assert_eq!(stop.limit, BudgetLimit::OutputTokens);
/// assert_eq!((stop.used, stop.max), (800.0, 700.0));
/// assert_eq!(model.requests().len(), 2);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Budget {
    limits: Limits,
    /// Price per million (input, output) tokens, by model label.
    prices: BTreeMap<String, (f64, f64)>,
    default_price: Option<(f64, f64)>,
    /// Price per million (cache read, cache write) input tokens, by model label.
    cache_prices: BTreeMap<String, (f64, f64)>,
    default_cache_price: Option<(f64, f64)>,
    switch_to: Option<String>,
    hard_factor: f64,
}

#[derive(Debug, Clone, Default)]
struct Limits {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    total_tokens: Option<u64>,
    cost: Option<f64>,
    model_calls: Option<u64>,
    tool_calls: Option<u64>,
    wall_time: Option<Duration>,
}

impl Limits {
    /// Whether a limit needs the providers' token counts.
    fn counts_tokens(&self) -> bool {
        self.input_tokens.is_some()
            || self.output_tokens.is_some()
            || self.total_tokens.is_some()
            || self.cost.is_some()
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new()
    }
}

impl Budget {
    /// A budget with no limits (it still records what the run uses; see
    /// [`usage`](Self::usage)).
    pub fn new() -> Self {
        Budget {
            limits: Limits::default(),
            prices: BTreeMap::new(),
            default_price: None,
            cache_prices: BTreeMap::new(),
            default_cache_price: None,
            switch_to: None,
            hard_factor: 1.5,
        }
    }

    /// At most `max` input tokens over the run.
    pub fn max_input_tokens(mut self, max: u64) -> Self {
        self.limits.input_tokens = Some(max);
        self
    }

    /// At most `max` output tokens over the run.
    pub fn max_output_tokens(mut self, max: u64) -> Self {
        self.limits.output_tokens = Some(max);
        self
    }

    /// At most `max` input plus output tokens over the run (a call whose provider reports a
    /// smaller total counts its input plus output).
    pub fn max_total_tokens(mut self, max: u64) -> Self {
        self.limits.total_tokens = Some(max);
        self
    }

    /// At most `max` in cost, in the unit of the [`price`](Self::price) table. Every model
    /// the run calls needs a price (or a [`default_price`](Self::default_price)): a call to a
    /// model without one stops the run. A NaN limit allows nothing.
    pub fn max_cost(mut self, max: f64) -> Self {
        self.limits.cost = Some(if max.is_nan() { 0.0 } else { max });
        self
    }

    /// At most `max` model calls (retries and repeats count, and so do a failed call and
    /// each call a hook makes again on another model, such as [`ModelFallback`](crate::hooks::fallback::ModelFallback)'s).
    pub fn max_model_calls(mut self, max: u64) -> Self {
        self.limits.model_calls = Some(max);
        self
    }

    /// At most `max` tool calls.
    pub fn max_tool_calls(mut self, max: u64) -> Self {
        self.limits.tool_calls = Some(max);
        self
    }

    /// At most `max` of wall time from the run's start. The start is kept in the run, so a
    /// durable run resumed later counts the time it spent paused.
    pub fn max_wall_time(mut self, max: Duration) -> Self {
        self.limits.wall_time = Some(max);
        self
    }

    /// The price of the model registered under `model` (the label of
    /// [`AgentBuilder::named_model`](crate::agent::AgentBuilder::named_model); `"default"`
    /// for the model given to `AgentBuilder::new`), per million input and output tokens. A
    /// negative or non-finite price leaves the model without a price. The tokens a tool
    /// reports spending are priced under `tool:` and its name (`price("tool:research", …)`
    /// for a tool `research` that runs an agent on another model).
    ///
    /// Input tokens read from or written to a provider's prompt cache cost the input price
    /// too, unless [`cache_price`](Self::cache_price) gives them their own.
    pub fn price(mut self, model: impl Into<String>, input: f64, output: f64) -> Self {
        let model = model.into();
        if price::valid(&[input, output]) {
            self.prices.insert(model, (input, output));
        } else {
            self.prices.remove(&model);
        }
        self
    }

    /// The price of models not in the table, per million input and output tokens. Their
    /// cached input tokens cost the input price too, unless
    /// [`default_cache_price`](Self::default_cache_price) gives them their own.
    pub fn default_price(mut self, input: f64, output: f64) -> Self {
        self.default_price = price::valid(&[input, output]).then_some((input, output));
        self
    }

    /// The price of the input tokens the model registered under `model` reads from its
    /// provider's prompt cache ([`Usage::cache_read_input_tokens`]) and writes to it
    /// ([`Usage::cache_creation_input_tokens`]), per million tokens. The rest of its input
    /// costs its [`price`](Self::price)'s input price; without a cache price, all of it does
    /// (most providers bill a cache read lower, and Anthropic bills a cache write higher).
    /// The model still needs its [`price`](Self::price) (or the
    /// [`default_price`](Self::default_price)): a cache price alone prices nothing. A
    /// negative or non-finite price leaves the model's cached tokens at its input price.
    ///
    /// [`Usage::cache_read_input_tokens`]: crate::completion::Usage::cache_read_input_tokens
    /// [`Usage::cache_creation_input_tokens`]: crate::completion::Usage::cache_creation_input_tokens
    ///
    /// ```
    /// use reins::agent::AgentBuilder;
    /// use reins::completion::Usage;
    /// use reins::hooks::budget::Budget;
    /// use reins::testing::{ScriptedModel, Turn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // A turn reads 100k tokens: 80k from the prompt cache, 10k written to it.
    /// let usage = Usage::new(100_000, 1_000).with_cached_input(80_000, 10_000);
    /// let model = ScriptedModel::new([Turn::text("Done.").usage(usage)]);
    /// let budget = Budget::new()
    ///     .price("default", 3.0, 15.0) // per million input / output tokens
    ///     .cache_price("default", 0.3, 3.75); // per million cache read / write tokens
    /// let agent = AgentBuilder::new(model).add_hook(budget.clone()).build();
    ///
    /// let response = agent.prompt("Summarise the file").extended_details().await.unwrap();
    /// let used = budget.usage_in(&response.state).unwrap();
    /// // 10k plain input at 3, 80k read at 0.3, 10k written at 3.75, 1k output at 15.
    /// let expected = (10_000.0 * 3.0 + 80_000.0 * 0.3 + 10_000.0 * 3.75 + 1_000.0 * 15.0) / 1e6;
    /// assert!((used.cost - expected).abs() < 1e-12);
    /// // Without the cache price, the 100k input tokens all cost 3.
    /// let plain = Budget::new().price("default", 3.0, 15.0);
    /// assert!((plain.usage_in(&response.state).unwrap().cost - 0.315).abs() < 1e-12);
    /// # }
    /// ```
    pub fn cache_price(mut self, model: impl Into<String>, read: f64, write: f64) -> Self {
        let model = model.into();
        if price::valid(&[read, write]) {
            self.cache_prices.insert(model, (read, write));
        } else {
            self.cache_prices.remove(&model);
        }
        self
    }

    /// The cache prices ([`cache_price`](Self::cache_price)) of the models priced by the
    /// [`default_price`](Self::default_price), per million cache read and write tokens. A
    /// model with a [`price`](Self::price) of its own and no cache price of its own pays its
    /// own input price for cached tokens.
    pub fn default_cache_price(mut self, read: f64, write: f64) -> Self {
        self.default_cache_price = price::valid(&[read, write]).then_some((read, write));
        self
    }

    /// When a limit is used up, serve the run's next model calls with the model registered
    /// under `model` instead of stopping, and stop only when a hard limit (each limit times
    /// the [`hard_limit_factor`](Self::hard_limit_factor), 1.5 by default) is used up too.
    /// Tool calls go on up to their hard limit.
    ///
    /// The switch is made in `on_model_select`, where the last hook to select wins: register
    /// the budget after routing hooks. Past a limit, a call to any other model stops the run.
    /// If no model is registered under `model` (a misspelt label), no switch is made: past the
    /// limit the run stops with its [`BudgetExceeded`] as if no cheaper model had been given,
    /// and `tracing::error!` names the label.
    ///
    /// ```
    /// use reins::agent::AgentBuilder;
    /// use reins::completion::Usage;
    /// use reins::hooks::budget::Budget;
    /// use reins::testing::{ScriptedModel, Turn};
    /// use reins::tool::tool_fn;
    /// use serde_json::json;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Query {
    ///     q: String,
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let search = tool_fn("search", "Searches the web.", |args: Query| async move {
    ///     Ok::<_, std::convert::Infallible>(format!("results for {}", args.q))
    /// });
    /// let strong = ScriptedModel::new([
    ///     Turn::tool_call("search", json!({"q": "rust"})).usage(Usage::new(2_000, 600)),
    /// ]);
    /// let cheap = ScriptedModel::new([Turn::text("Rust is fast.").usage(Usage::new(2_500, 50))]);
    /// let budget = Budget::new()
    ///     .max_output_tokens(500)
    ///     .on_exceeded_switch_to("cheap"); // hard limit: 1.5 x 500 = 750 output tokens
    /// let agent = AgentBuilder::new(strong.clone())
    ///     .named_model("cheap", cheap.clone())
    ///     .tool(search)
    ///     .add_hook(budget.clone())
    ///     .build();
    ///
    /// let response = agent.prompt("What is Rust?").extended_details().await.unwrap();
    /// // The first turn wrote 600 tokens, past the limit: the second turn went to "cheap".
    /// assert_eq!(response.output, "Rust is fast.");
    /// assert_eq!((strong.requests().len(), cheap.requests().len()), (1, 1));
    /// let used = budget.usage_in(&response.state).unwrap();
    /// assert_eq!((used.output_tokens, used.model_calls, used.tool_calls), (650, 2, 1));
    /// # }
    /// ```
    pub fn on_exceeded_switch_to(mut self, model: impl Into<String>) -> Self {
        self.switch_to = Some(model.into());
        self
    }

    /// The hard limits, as a multiple of the configured ones (1.5 unless set; a factor
    /// below 1 or NaN counts as 1). Token and call limits are rounded down. Only used with
    /// [`on_exceeded_switch_to`](Self::on_exceeded_switch_to).
    pub fn hard_limit_factor(mut self, factor: f64) -> Self {
        // `max` also turns NaN into 1.0.
        self.hard_factor = factor.max(1.0);
        self
    }

    /// What the run of `ctx` has used so far, priced with this budget's table; `None` before
    /// a budget has recorded anything in the run, or if its record cannot be read.
    pub fn usage(&self, ctx: &HookContext) -> Option<BudgetUsage> {
        ledger::read(ctx).map(|ledger| self.usage_from(&ledger))
    }

    /// What a finished or suspended run used, from its state (e.g.
    /// [`PromptResponse::state`](crate::agent::PromptResponse::state) or
    /// [`SuspendedRun::state`](crate::agent::SuspendedRun::state)); `None` if no budget
    /// recorded anything in it. The `elapsed` time is measured up to now.
    pub fn usage_in(&self, state: &RunState) -> Option<BudgetUsage> {
        ledger::read_state(state).map(|ledger| self.usage_from(&ledger))
    }

    /// The prices of the model labelled `model`: its own, else the default ones; its cache
    /// prices its own, else those that go with the price it has.
    fn price_of(&self, model: &str) -> Option<Price> {
        let own_cache = self.cache_prices.get(model).copied();
        match self.prices.get(model) {
            Some(&price) => Some(Price::new(price, own_cache)),
            None => (self.default_price)
                .map(|price| Price::new(price, own_cache.or(self.default_cache_price))),
        }
    }

    fn usage_from(&self, ledger: &Ledger) -> BudgetUsage {
        ledger::usage_of(ledger, |model| self.price_of(model))
    }

    /// What the checks compare with the limits: prices are looked up only under a cost
    /// limit, and the clock read only under a wall-time limit.
    fn totals_from<'l>(&self, ledger: &'l Ledger) -> ledger::Totals<'l> {
        let price = self.limits.cost.map(|_| |model: &str| self.price_of(model));
        ledger::totals_of(ledger, price, self.limits.wall_time.is_some())
    }
}
