use super::*;
mod composition;
mod resume;
mod retries;
mod tool_usage;

use crate::agent::{
    Agent, AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext, ModelSelectEvent,
    ModelSelectionAction, PromptError, RunSettledEvent, RunStartAction, RunStartEvent, StopReason,
    StreamItem, SuspendedRun, ToolDecision,
};
use crate::completion::Usage;
use crate::testing::{ScriptedModel, Turn};
use crate::tool::{Tool, tool_fn};
use futures::StreamExt;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {
    #[allow(dead_code)]
    q: String,
}

/// A tool that counts its executions.
fn counting_tool(name: &str, runs: Arc<AtomicUsize>) -> impl Tool {
    tool_fn(name, "Looks something up.", move |_: Args| {
        let runs = Arc::clone(&runs);
        async move {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok::<_, std::convert::Infallible>("found")
        }
    })
}

/// Three tool-calling turns, each reading 500k and writing 250k tokens, then an answer.
fn script() -> Vec<Turn> {
    let call =
        |q: &str| Turn::tool_call("lookup", json!({ "q": q })).usage(Usage::new(500_000, 250_000));
    vec![call("a"), call("b"), call("c"), Turn::text("done")]
}

fn agent_with(model: &ScriptedModel, runs: &Arc<AtomicUsize>, budget: Budget) -> Agent {
    AgentBuilder::new(model.clone())
        .tool(counting_tool("lookup", Arc::clone(runs)))
        .add_hook(budget)
        .build()
}

fn cancelled_reason(error: &PromptError) -> &str {
    match error {
        PromptError::Cancelled { reason, .. } => reason,
        other => panic!("expected a hook's stop, got {other:?}"),
    }
}

#[tokio::test]
async fn each_limit_stops_the_run_before_the_call_that_would_go_past_it() {
    // (budget, limit, used, max, model calls made, tool calls run)
    let cases = [
        (
            Budget::new().max_input_tokens(600_000),
            BudgetLimit::InputTokens,
            1e6,
            6e5,
            2,
            1,
        ),
        (
            Budget::new().max_output_tokens(400_000),
            BudgetLimit::OutputTokens,
            5e5,
            4e5,
            2,
            1,
        ),
        (
            Budget::new().max_total_tokens(1_000_000),
            BudgetLimit::TotalTokens,
            1.5e6,
            1e6,
            2,
            1,
        ),
        // 500k input at 2.0 plus 250k output at 4.0 per million: 2.0 per turn.
        (
            Budget::new().max_cost(3.0).price("default", 2.0, 4.0),
            BudgetLimit::Cost,
            4.0,
            3.0,
            2,
            1,
        ),
        // No model call would be left to read the second turn's tool result.
        (
            Budget::new().max_model_calls(2),
            BudgetLimit::ModelCalls,
            2.0,
            2.0,
            2,
            1,
        ),
        (
            Budget::new().max_tool_calls(2),
            BudgetLimit::ToolCalls,
            2.0,
            2.0,
            3,
            2,
        ),
    ];
    for (budget, limit, used, max, model_calls, tool_runs) in cases {
        let model = ScriptedModel::new(script());
        let runs = Arc::new(AtomicUsize::new(0));
        let error = agent_with(&model, &runs, budget)
            .prompt("go")
            .await
            .unwrap_err();
        let stop = BudgetExceeded::from_error(&error).expect("a budget stop");
        assert_eq!(stop, BudgetExceeded { limit, used, max }, "{limit}");
        assert_eq!(model.requests().len(), model_calls, "{limit}: model calls");
        assert_eq!(runs.load(Ordering::SeqCst), tool_runs, "{limit}: tool runs");
    }
}

#[tokio::test]
async fn a_used_up_wall_time_stops_before_the_first_model_call() {
    let model = ScriptedModel::new(script());
    let runs = Arc::new(AtomicUsize::new(0));
    let budget = Budget::new().max_wall_time(Duration::ZERO);
    let error = agent_with(&model, &runs, budget)
        .prompt("go")
        .await
        .unwrap_err();
    let stop = BudgetExceeded::from_error(&error).expect("a budget stop");
    assert_eq!((stop.limit, stop.max), (BudgetLimit::WallTime, 0.0));
    assert!(model.requests().is_empty());
}

#[tokio::test]
async fn a_run_within_its_limits_finishes_and_reports_what_it_used() {
    let model = ScriptedModel::new(script());
    let runs = Arc::new(AtomicUsize::new(0));
    let budget = Budget::new()
        .max_model_calls(4)
        .max_tool_calls(3)
        .max_cost(10.0)
        .price("default", 2.0, 4.0);
    let response = agent_with(&model, &runs, budget.clone())
        .prompt("go")
        .extended_details()
        .await
        .unwrap();
    assert_eq!(response.output, "done");
    let used = budget.usage_in(&response.state).expect("a recorded budget");
    assert_eq!((used.model_calls, used.tool_calls), (4, 3));
    assert_eq!(
        (used.input_tokens, used.output_tokens),
        (1_500_000, 750_000)
    );
    assert_eq!(used.total_tokens, 2_250_000);
    assert_eq!(used.cost, 6.0);
    assert_eq!(used.by_model.len(), 1);
    assert!(used.unpriced_models.is_empty());
    // Another budget's prices apply to the same counts.
    let dearer = Budget::new().price("default", 4.0, 8.0);
    assert_eq!(dearer.usage_in(&response.state).unwrap().cost, 12.0);
    // One record however many times it changed: the run's state does not grow with its calls.
    let records = response.state.entries.iter();
    assert_eq!(records.filter(|e| e.kind == "reins.budget").count(), 1);
}

#[tokio::test]
async fn a_total_reported_below_input_plus_output_does_not_escape_the_total_limit() {
    // A provider (or a server posing as one) that reports a total of zero tokens.
    let understated = Usage {
        input_tokens: 400,
        output_tokens: 300,
        total_tokens: 0,
        ..Usage::default()
    };
    let call = |q: &str| Turn::tool_call("lookup", json!({ "q": q })).usage(understated);
    let model = ScriptedModel::new([call("a"), call("b"), Turn::text("done")]);
    let runs = Arc::new(AtomicUsize::new(0));
    let budget = Budget::new().max_total_tokens(1_000);
    let error = agent_with(&model, &runs, budget.clone())
        .prompt("go")
        .await
        .unwrap_err();
    let stop = BudgetExceeded::from_error(&error).expect("a budget stop");
    assert_eq!(
        stop,
        BudgetExceeded {
            limit: BudgetLimit::TotalTokens,
            used: 1_400.0,
            max: 1_000.0
        }
    );
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn parallel_calls_of_one_turn_past_the_tool_limit_run_only_up_to_it() {
    let calls = ["a", "b", "c"].map(|q| ("lookup", json!({ "q": q })));
    let model = ScriptedModel::new([Turn::tool_calls(calls), Turn::text("done")]);
    let runs = Arc::new(AtomicUsize::new(0));
    let error = agent_with(&model, &runs, Budget::new().max_tool_calls(2))
        .prompt("go")
        .tool_concurrency(3)
        .await
        .unwrap_err();
    let stop = BudgetExceeded::from_error(&error).expect("a budget stop");
    assert_eq!((stop.limit, stop.max), (BudgetLimit::ToolCalls, 2.0));
    // The third call cannot take a slot however the three interleave; the run stops there.
    assert!(runs.load(Ordering::SeqCst) <= 2);
    assert_eq!(model.requests().len(), 1);
}

#[test]
fn the_stop_reason_carries_the_value_for_every_limit() {
    let cancelled = |reason: StopReason| PromptError::Cancelled {
        reason,
        history: Vec::new(),
        run_id: "r".into(),
    };
    for limit in BudgetLimit::ALL {
        for (used, max) in [
            (3.0, 3.0),
            (1234567.0, 1000000.0),
            (0.012345678901234, 0.01),
        ] {
            let stop = BudgetExceeded { limit, used, max };
            let error = cancelled(StopReason::because(stop));
            assert_eq!(BudgetExceeded::from_error(&error), Some(stop));
            // The same text from another hook is not taken for a budget stop.
            let imitation = cancelled(stop.to_string().into());
            assert_eq!(BudgetExceeded::from_error(&imitation), None);
        }
    }
    assert_eq!(
        BudgetExceeded {
            limit: BudgetLimit::Cost,
            used: 4.5,
            max: 3.0
        }
        .to_string(),
        "budget exceeded: cost used 4.5 of 3"
    );
    assert_eq!(
        BudgetExceeded::from_error(&PromptError::InvalidConfiguration("x".into())),
        None
    );
}

#[tokio::test]
async fn a_cost_limit_fails_closed_on_a_model_without_a_price() {
    let model = ScriptedModel::new(script());
    let runs = Arc::new(AtomicUsize::new(0));
    let budget = Budget::new().max_cost(100.0).price("other", 1.0, 1.0);
    let error = agent_with(&model, &runs, budget)
        .prompt("go")
        .await
        .unwrap_err();
    // A price set under the provider's model name instead of the label is the likely slip:
    // the reason says prices go by label.
    assert_eq!(
        cancelled_reason(&error),
        "budget: no price is set for the model labelled `default` (prices go by the label a \
         model was registered under, not the provider's name for it), so the run's cost \
         cannot be checked against its limit"
    );
    assert_eq!(
        BudgetExceeded::from_error(&error),
        None,
        "not a reached limit"
    );
    assert!(
        model.requests().is_empty(),
        "the unpriced model is never called"
    );
    // A default price covers it; an invalid price counts as no price.
    for (budget, ok) in [
        (Budget::new().max_cost(100.0).default_price(1.0, 1.0), true),
        (
            Budget::new()
                .max_cost(100.0)
                .price("default", f64::NAN, 1.0),
            false,
        ),
    ] {
        let model = ScriptedModel::new(script());
        let result = agent_with(&model, &runs, budget).prompt("go").await;
        assert_eq!(result.is_ok(), ok);
    }
}

#[tokio::test]
async fn an_unreadable_budget_record_stops_the_run() {
    /// Writes a corrupt budget record before the budget reads it.
    struct Corrupt;
    impl AgentHook for Corrupt {
        async fn on_run_start(&self, ctx: &HookContext, _: RunStartEvent<'_>) -> RunStartAction {
            ctx.append_entry(ledger::ENTRY_KIND, &"not a ledger")
                .unwrap();
            RunStartAction::continue_run()
        }
    }
    let model = ScriptedModel::new(script());
    let agent = AgentBuilder::new(model.clone())
        .add_hook(Corrupt)
        .add_hook(Budget::new().max_model_calls(5))
        .build();
    let error = agent.prompt("go").await.unwrap_err();
    assert!(cancelled_reason(&error).contains("budget record could not be read"));
    assert!(model.requests().is_empty());
}

/// One turn reading a million tokens, 800k of them from the provider's prompt cache and 100k
/// written to it, then an answer.
fn cached_script() -> Vec<Turn> {
    let cached = Usage::new(1_000_000, 0).with_cached_input(800_000, 100_000);
    vec![
        Turn::tool_call("lookup", json!({ "q": "a" })).usage(cached),
        Turn::text("done"),
    ]
}

async fn cost_of_cached_run(budget: Budget) -> f64 {
    let model = ScriptedModel::new(cached_script());
    let runs = Arc::new(AtomicUsize::new(0));
    let response = agent_with(&model, &runs, budget.clone())
        .prompt("go")
        .extended_details()
        .await
        .unwrap();
    budget.usage_in(&response.state).unwrap().cost
}

#[tokio::test]
async fn cache_reads_and_writes_are_priced_at_their_own_prices() {
    let budget = Budget::new()
        .price("default", 3.0, 15.0)
        .cache_price("default", 0.3, 3.75);
    // 100k plain input at 3, 800k read at 0.3, 100k written at 3.75.
    let cost = cost_of_cached_run(budget).await;
    assert!((cost - (0.3 + 0.24 + 0.375)).abs() < 1e-9, "{cost}");
}

#[tokio::test]
async fn without_cache_prices_cached_tokens_cost_the_input_price() {
    let cost = cost_of_cached_run(Budget::new().price("default", 3.0, 15.0)).await;
    assert!((cost - 3.0).abs() < 1e-9, "{cost}");
    // The default cache price goes with the default price; a model's own price without a
    // cache price of its own keeps its input price for cached tokens.
    let by_default = Budget::new()
        .default_price(3.0, 15.0)
        .default_cache_price(0.3, 3.75);
    let cost = cost_of_cached_run(by_default).await;
    assert!((cost - 0.915).abs() < 1e-9, "{cost}");
    let own = Budget::new()
        .default_price(1.0, 1.0)
        .default_cache_price(0.0, 0.0)
        .price("default", 3.0, 15.0);
    assert!((cost_of_cached_run(own).await - 3.0).abs() < 1e-9);
}

#[tokio::test]
async fn a_cost_limit_counts_cache_reads_at_their_price() {
    // At the input price the first turn costs 3.0, past the limit of 1.0; at the cache price
    // it costs 0.915, and the run goes on.
    let model = ScriptedModel::new(cached_script());
    let runs = Arc::new(AtomicUsize::new(0));
    let budget = Budget::new()
        .max_cost(1.0)
        .price("default", 3.0, 15.0)
        .cache_price("default", 0.3, 3.75);
    let output = agent_with(&model, &runs, budget)
        .prompt("go")
        .await
        .unwrap();
    assert_eq!(output, "done");
}

#[test]
fn cache_counts_beyond_a_calls_input_are_cut_to_it() {
    // A provider (or a hostile server) reporting more cached tokens than input tokens
    // cannot make the input cheaper than what it read.
    let mut ledger = ledger::Ledger::default();
    let lying = Usage {
        cache_read_input_tokens: 5_000_000,
        ..Usage::new(1_000_000, 0)
    };
    let written = Usage {
        cache_creation_input_tokens: 5_000_000,
        ..Usage::new(1_000_000, 0)
    };
    ledger::add_usage(ledger.by_model.entry("default".into()).or_default(), lying);
    ledger::add_usage(
        ledger.by_model.entry("default".into()).or_default(),
        written,
    );
    let budget = Budget::new()
        .price("default", 3.0, 15.0)
        .cache_price("default", 0.3, 30.0);
    let used = budget.usage_from(&ledger);
    // 1M read at 0.3, then 1M written at 30.
    assert!((used.cost - 30.3).abs() < 1e-9, "{}", used.cost);
}
