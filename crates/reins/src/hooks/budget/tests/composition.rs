//! The budget with other hooks: the dispatch chain, model selection, other budgets,
//! streaming.

use super::*;

/// Records every tool call it is asked about, and skips the ones named `skipped`.
#[derive(Clone, Default)]
struct Gate(Arc<Mutex<Vec<String>>>);
impl AgentHook for Gate {
    async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        let Some(name) = event.tool_name() else {
            return DispatchAction::proceed();
        };
        self.0.lock().unwrap().push(name.to_owned());
        if name == "skipped" {
            DispatchAction::skip("not now")
        } else {
            DispatchAction::proceed()
        }
    }
}

#[tokio::test]
async fn a_budget_stop_ends_the_dispatch_chain_and_skipped_calls_are_not_counted() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        Turn::tool_calls([
            ("skipped", json!({"q": "1"})),
            ("skipped", json!({"q": "2"})),
            ("lookup", json!({"q": "3"})),
        ]),
        Turn::tool_call("lookup", json!({"q": "4"})),
        Turn::text("done"),
    ]);
    let gate = Gate::default();
    let agent = AgentBuilder::new(model.clone())
        .tool(counting_tool("lookup", Arc::clone(&runs)))
        .tool(counting_tool("skipped", Arc::clone(&runs)))
        .add_hook(Budget::new().max_tool_calls(1))
        .add_hook(gate.clone())
        .build();
    let error = agent.prompt("go").await.unwrap_err();
    let stop = BudgetExceeded::from_error(&error).expect("a budget stop");
    assert_eq!(
        (stop.limit, stop.used, stop.max),
        (BudgetLimit::ToolCalls, 1.0, 1.0)
    );
    // The two skipped calls gave their slot back; the fourth call never reached the gate.
    assert_eq!(
        *gate.0.lock().unwrap(),
        vec!["skipped", "skipped", "lookup"]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn past_the_limit_the_cheaper_model_serves_until_the_hard_limit() {
    let strong =
        ScriptedModel::new(
            [Turn::tool_call("lookup", json!({"q": "a"})).usage(Usage::new(0, 600))],
        );
    let call = |q: &str| Turn::tool_call("lookup", json!({ "q": q })).usage(Usage::new(0, 100));
    let cheap = ScriptedModel::new([call("b"), call("c"), Turn::text("unused")]);
    let runs = Arc::new(AtomicUsize::new(0));
    let agent = AgentBuilder::new(strong.clone())
        .named_model("cheap", cheap.clone())
        .tool(counting_tool("lookup", Arc::clone(&runs)))
        .add_hook(
            Budget::new()
                .max_output_tokens(500)
                .on_exceeded_switch_to("cheap"),
        )
        .build();
    let error = agent.prompt("go").await.unwrap_err();
    let stop = BudgetExceeded::from_error(&error).expect("a budget stop");
    // 600 + 100 + 100 written; the hard limit is 1.5 x 500.
    assert_eq!(
        stop,
        BudgetExceeded {
            limit: BudgetLimit::OutputTokens,
            used: 800.0,
            max: 750.0
        }
    );
    assert_eq!((strong.requests().len(), cheap.requests().len()), (1, 2));
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_switch_to_an_unregistered_label_stops_with_the_budgets_typed_error() {
    let strong = ScriptedModel::new([
        Turn::tool_call("lookup", json!({"q": "a"})).usage(Usage::new(0, 600)),
        Turn::text("unused"),
    ]);
    let runs = Arc::new(AtomicUsize::new(0));
    let agent = AgentBuilder::new(strong.clone())
        .tool(counting_tool("lookup", Arc::clone(&runs)))
        .add_hook(
            Budget::new()
                .max_output_tokens(500)
                .on_exceeded_switch_to("chaep"),
        )
        .build();
    let error = agent.prompt("go").await.unwrap_err();
    let stop = BudgetExceeded::from_error(&error).expect("a budget stop, not a label error");
    assert_eq!(
        (stop.limit, stop.used, stop.max),
        (BudgetLimit::OutputTokens, 600.0, 500.0)
    );
    assert_eq!(strong.requests().len(), 1);
}

#[tokio::test]
async fn past_the_limit_a_later_hook_cannot_select_the_expensive_model() {
    /// Always routes to the default model.
    struct BackToDefault;
    impl AgentHook for BackToDefault {
        fn on_model_select(
            &self,
            _: &HookContext,
            _: ModelSelectEvent<'_>,
        ) -> ModelSelectionAction {
            ModelSelectionAction::select("default")
        }
    }
    let strong = ScriptedModel::new([
        Turn::tool_call("lookup", json!({"q": "a"})).usage(Usage::new(0, 600)),
        Turn::text("unused"),
    ]);
    let runs = Arc::new(AtomicUsize::new(0));
    let agent = AgentBuilder::new(strong.clone())
        .named_model("cheap", ScriptedModel::new([Turn::text("cheap")]))
        .tool(counting_tool("lookup", Arc::clone(&runs)))
        .add_hook(
            Budget::new()
                .max_output_tokens(500)
                .on_exceeded_switch_to("cheap"),
        )
        .add_hook(BackToDefault)
        .build();
    let error = agent.prompt("go").await.unwrap_err();
    let stop = BudgetExceeded::from_error(&error).expect("a budget stop");
    assert_eq!(
        (stop.used, stop.max),
        (600.0, 500.0),
        "the soft limit applies"
    );
    assert_eq!(strong.requests().len(), 1);
}

#[tokio::test]
async fn budgets_in_one_run_share_counts_and_a_hook_can_read_them() {
    /// Reads the run's usage when it ends.
    #[derive(Clone)]
    struct Probe(Budget, Arc<Mutex<Option<BudgetUsage>>>);
    impl AgentHook for Probe {
        async fn on_run_settled(&self, ctx: &HookContext, _: RunSettledEvent<'_>) {
            *self.1.lock().unwrap() = self.0.usage(ctx);
        }
    }
    let model = ScriptedModel::new(script());
    let runs = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Mutex::new(None));
    let agent = agent_with(&model, &runs, Budget::new().max_model_calls(10));
    let error = agent
        .prompt("go")
        .add_hook(Budget::new().max_tool_calls(2))
        .add_hook(Probe(Budget::new(), Arc::clone(&seen)))
        .await
        .unwrap_err();
    let stop = BudgetExceeded::from_error(&error).expect("the run's budget stops it");
    assert_eq!((stop.limit, stop.used), (BudgetLimit::ToolCalls, 2.0));
    let used = seen
        .lock()
        .unwrap()
        .clone()
        .expect("usage read from the context");
    // Each call counted once, though two budgets saw it.
    assert_eq!((used.model_calls, used.tool_calls), (3, 2));
    assert_eq!(used.output_tokens, 750_000);
}

#[tokio::test]
async fn a_streamed_run_is_metered_the_same_way() {
    let model = ScriptedModel::new(script());
    let runs = Arc::new(AtomicUsize::new(0));
    let mut stream = agent_with(&model, &runs, Budget::new().max_output_tokens(400_000))
        .prompt("go")
        .stream();
    let mut error = None;
    while let Some(item) = stream.next().await {
        if let Err(e) = item {
            error = Some(e);
        } else if let Ok(StreamItem::Final(_)) = item {
            panic!("the run should not finish");
        }
    }
    let stop = error
        .as_ref()
        .and_then(BudgetExceeded::from_error)
        .expect("a budget stop");
    assert_eq!(
        (stop.limit, stop.used),
        (BudgetLimit::OutputTokens, 500_000.0)
    );
}

#[tokio::test]
async fn a_response_a_cache_serves_first_is_priced_by_its_model_and_is_no_model_call() {
    // The CLI's order: the cache before the budget, so a cache hit never reaches the
    // budget's dispatch.
    let cache = crate::hooks::cache::ResponseCache::in_memory();
    let model = ScriptedModel::new([
        Turn::tool_call("lookup", json!({"q": "a"})).usage(Usage::new(10, 10)),
        Turn::text("done").usage(Usage::new(10, 10)),
    ]);
    let runs = Arc::new(AtomicUsize::new(0));
    let budget = Budget::new().max_cost(1.0).price("default", 1.0, 1.0);
    let agent = AgentBuilder::new(model.clone())
        .tool(counting_tool("lookup", Arc::clone(&runs)))
        .add_hook(cache)
        .add_hook(budget.clone())
        .build();
    assert_eq!(agent.prompt("go").await.unwrap(), "done");
    let served = agent
        .prompt("go")
        .extended_details()
        .await
        .expect("served within its cost limit");
    assert_eq!(
        model.requests().len(),
        2,
        "the second run is all cache hits"
    );
    let used = budget.usage_in(&served.state).unwrap();
    assert!(used.unpriced_models.is_empty(), "{used:?}");
    assert_eq!(used.model_calls, 0, "no model was called");
}

#[tokio::test]
async fn usage_beyond_any_count_saturates_instead_of_overflowing() {
    let model = ScriptedModel::new([
        Turn::tool_call("lookup", json!({"q": "a"})).usage(Usage::new(u64::MAX, 0)),
        Turn::text("done").usage(Usage::new(1, 0)),
    ]);
    let runs = Arc::new(AtomicUsize::new(0));
    let response = agent_with(&model, &runs, Budget::new())
        .prompt("go")
        .extended_details()
        .await
        .expect("the run ends normally");
    assert_eq!(response.usage().input_tokens, u64::MAX);
}
