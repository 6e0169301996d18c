//! Durable runs: the counts and the start time live in the run.

use super::*;

use crate::hooks::test_support::NeedsApproval;

fn payer(model: &ScriptedModel, runs: &Arc<AtomicUsize>, budget: Budget) -> Agent {
    AgentBuilder::new(model.clone())
        .tool(counting_tool("pay", Arc::clone(runs)))
        .tool(counting_tool("lookup", Arc::clone(runs)))
        .add_hook(budget)
        .add_hook(NeedsApproval)
        .build()
}

/// A run suspended on its first turn's `pay` call, after a trip through JSON (as if stored
/// and loaded by another process).
async fn suspended(model: &ScriptedModel) -> SuspendedRun {
    let runs = Arc::new(AtomicUsize::new(0));
    let error = payer(model, &runs, Budget::new())
        .prompt("pay")
        .await
        .unwrap_err();
    let PromptError::Suspended { run } = error else {
        panic!("expected a suspended run, got {error:?}");
    };
    serde_json::from_str(&serde_json::to_string(&run).unwrap()).unwrap()
}

fn pay_script() -> Vec<Turn> {
    vec![
        Turn::tool_call("pay", json!({"q": "bob"})),
        Turn::tool_call("lookup", json!({"q": "receipt"})),
        Turn::text("paid"),
    ]
}

#[tokio::test]
async fn a_resumed_run_keeps_its_counts_in_a_fresh_budget() {
    let model = ScriptedModel::resumable(pay_script());
    let run = suspended(&model).await;
    let used = Budget::new()
        .usage_in(&run.state)
        .expect("recorded in the run");
    assert_eq!(
        (used.model_calls, used.tool_calls),
        (1, 0),
        "the payment has not run"
    );
    let runs = Arc::new(AtomicUsize::new(0));
    let error = payer(&model, &runs, Budget::new().max_model_calls(2))
        .resume(run)
        .decide("t1c0", ToolDecision::approve())
        .await
        .unwrap_err();
    // Counting from zero would have allowed the lookup and a third call.
    let stop = BudgetExceeded::from_error(&error).expect("a budget stop");
    assert_eq!(
        stop,
        BudgetExceeded {
            limit: BudgetLimit::ModelCalls,
            used: 2.0,
            max: 2.0
        }
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "only the approved payment ran"
    );
}

#[tokio::test]
async fn the_wall_time_counts_from_the_start_recorded_in_the_run() {
    let model = ScriptedModel::resumable(pay_script());
    let mut run = suspended(&model).await;
    // The run started an hour ago, as far as its record says.
    for entry in &mut run.state.entries {
        if entry.kind == ledger::ENTRY_KIND {
            entry.value["started_at_ms"] = json!(ledger::now_ms() - 3_600_000);
        }
    }
    let runs = Arc::new(AtomicUsize::new(0));
    let budget = Budget::new().max_wall_time(Duration::from_secs(600));
    let error = payer(&model, &runs, budget)
        .resume(run)
        .decide("t1c0", ToolDecision::approve())
        .await
        .unwrap_err();
    let stop = BudgetExceeded::from_error(&error).expect("a budget stop");
    assert_eq!((stop.limit, stop.max), (BudgetLimit::WallTime, 600.0));
    assert!(stop.used >= 3600.0, "{stop}");
}
