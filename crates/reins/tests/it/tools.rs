//! Tool execution: concurrency, timeouts, classified failures, panics and extensions.

use reins::agent::*;
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{Tool, ToolCallContext, ToolFailure, ToolOutcome, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Deserialize, JsonSchema)]
struct SleepArgs {
    ms: u64,
    label: String,
}

/// Sleeps, tracking how many calls run at once.
fn sleeper(running: Arc<AtomicUsize>, peak: Arc<AtomicUsize>) -> impl Tool {
    tool_fn("sleep", "Sleeps.", move |args: SleepArgs| {
        let (running, peak) = (running.clone(), peak.clone());
        async move {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(args.ms)).await;
            running.fetch_sub(1, Ordering::SeqCst);
            Ok::<_, std::convert::Infallible>(args.label)
        }
    })
}

fn four_sleeps() -> Turn {
    Turn::tool_calls([
        ("sleep", json!({"ms": 40, "label": "a"})),
        ("sleep", json!({"ms": 10, "label": "b"})),
        ("sleep", json!({"ms": 30, "label": "c"})),
        ("sleep", json!({"ms": 1, "label": "d"})),
    ])
}

async fn run_with_concurrency(n: usize) -> (usize, Vec<Message>) {
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([four_sleeps(), Turn::text("done")]);
    let agent = AgentBuilder::new(model.clone())
        .tool(sleeper(running, peak.clone()))
        .build();
    agent.prompt("x").tool_concurrency(n).await.unwrap();
    let history = model.requests()[1].history.clone();
    (peak.load(Ordering::SeqCst), history)
}

#[tokio::test]
async fn tool_concurrency_bounds_parallel_calls_and_keeps_call_order() {
    let (peak, history) = run_with_concurrency(1).await;
    assert_eq!(peak, 1);
    let results: Vec<_> = history[2..].iter().map(Message::text).collect();
    assert_eq!(results, vec!["a", "b", "c", "d"]);

    let (peak, history) = run_with_concurrency(2).await;
    assert_eq!(peak, 2);
    let results: Vec<_> = history[2..].iter().map(Message::text).collect();
    assert_eq!(results, vec!["a", "b", "c", "d"]);

    let (peak, _) = run_with_concurrency(8).await;
    assert_eq!(peak, 4);
}

#[tokio::test]
async fn a_slow_tool_times_out_as_a_classified_failure() {
    let slow = tool_fn(
        "slow",
        "Never finishes in time.",
        |_: serde_json::Value| async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok::<_, std::convert::Infallible>("late")
        },
    )
    .timeout(Duration::from_millis(20));
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    struct Keep(Arc<Mutex<Vec<ToolOutcome>>>);
    impl AgentHook for Keep {
        async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
            if let Some(result) = event.tool_outcome() {
                self.0.lock().unwrap().push(result.outcome().clone());
            }
            OutcomeAction::proceed()
        }
    }
    let model = ScriptedModel::new([Turn::tool_call("slow", json!({})), Turn::text("gave up")]);
    let agent = AgentBuilder::new(model.clone())
        .tool(slow)
        .add_hook(Keep(outcomes.clone()))
        .build();
    assert_eq!(agent.prompt("x").await.unwrap(), "gave up");
    assert_eq!(
        *outcomes.lock().unwrap(),
        vec![ToolOutcome::Failed(ToolFailure::Timeout {
            after: Duration::from_millis(20)
        })]
    );
    assert!(
        model.requests()[1]
            .history
            .last()
            .unwrap()
            .text()
            .contains("timed out")
    );
}

#[derive(Deserialize, JsonSchema)]
struct Count {
    n: u32,
}

#[tokio::test]
async fn failures_are_classified() {
    let strict = tool_fn("strict", "Needs n.", |args: Count| async move {
        if args.n == 0 {
            Err("n must be positive")
        } else {
            Ok(args.n)
        }
    });
    let panicky = tool_fn("panicky", "Panics.", |_: Count| async move {
        if true {
            panic!("boom");
        }
        Ok::<u32, std::convert::Infallible>(0)
    });
    let model = ScriptedModel::new([
        Turn::tool_calls([
            ("strict", json!({"n": "not a number"})),
            ("strict", json!({"n": 0})),
            ("panicky", json!({"n": 1})),
        ]),
        Turn::text("ok"),
    ]);
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    struct Keep(Arc<Mutex<Vec<ToolOutcome>>>);
    impl AgentHook for Keep {
        async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
            if let Some(result) = event.tool_outcome() {
                self.0.lock().unwrap().push(result.outcome().clone());
            }
            OutcomeAction::proceed()
        }
    }
    let agent = AgentBuilder::new(model.clone())
        .tool(strict)
        .tool(panicky)
        .add_hook(Keep(outcomes.clone()))
        .build();
    assert_eq!(agent.prompt("x").await.unwrap(), "ok");
    let outcomes = outcomes.lock().unwrap().clone();
    assert!(
        matches!(&outcomes[0], ToolOutcome::Failed(ToolFailure::InvalidArguments { message }) if message.contains("invalid type"))
    );
    assert_eq!(
        outcomes[1],
        ToolOutcome::Failed(ToolFailure::Execution {
            message: "n must be positive".into()
        })
    );
    assert_eq!(
        outcomes[2],
        ToolOutcome::Failed(ToolFailure::Panicked {
            message: "boom".into()
        })
    );
    let history = &model.requests()[1].history;
    // The model is told which field it got wrong.
    assert_eq!(
        history[2].text(),
        "invalid arguments: at `n`: invalid type: string \"not a number\", expected u32"
    );
    assert_eq!(history[3].text(), "the tool failed: n must be positive");
    assert_eq!(history[4].text(), "the tool panicked: boom");
}

#[tokio::test]
async fn a_run_can_be_told_to_end_on_tool_failure() {
    let failing = tool_fn("fail", "Fails.", |_: serde_json::Value| async {
        Err::<(), _>("nope")
    });
    let model = ScriptedModel::new([Turn::tool_call("fail", json!({})), Turn::text("unreached")]);
    let agent = AgentBuilder::new(model).tool(failing).build();
    let error = agent
        .prompt("x")
        .tool_errors(ToolErrorPolicy::Fail)
        .await
        .unwrap_err();
    let PromptError::Tool {
        tool_name,
        failure,
        history,
        ..
    } = error
    else {
        panic!("expected a tool error");
    };
    assert_eq!(tool_name, "fail");
    assert_eq!(
        failure,
        ToolFailure::Execution {
            message: "nope".into()
        }
    );
    assert_eq!(history.len(), 2);
}

#[tokio::test]
async fn tools_attach_extensions_and_read_their_call_context() {
    let tool = tool_fn("meta", "Attaches metadata.", |_: serde_json::Value| async {
        let context = ToolCallContext::current().expect("inside a tool call");
        context.set_extension("effect", json!(context.effect_id()));
        context.set_extension("cost_cents", json!(3));
        Ok::<_, std::convert::Infallible>("visible")
    });
    let seen = Arc::new(Mutex::new(Vec::new()));
    struct Read(Arc<Mutex<Vec<(String, serde_json::Value, serde_json::Value)>>>);
    impl AgentHook for Read {
        async fn on_event(&self, ctx: &HookContext, event: StepEvent<'_>) -> Flow {
            if let StepEvent::ToolResult {
                result,
                extensions,
                internal_call_id,
                ..
            } = event
            {
                assert_eq!(
                    extensions.get("effect"),
                    Some(&json!(format!("{}/{internal_call_id}", ctx.run_id())))
                );
                self.0.lock().unwrap().push((
                    result.to_string(),
                    extensions.get("cost_cents").cloned().unwrap(),
                    json!(internal_call_id),
                ));
            }
            Flow::Continue
        }
    }
    let model = ScriptedModel::new([Turn::tool_call("meta", json!({})), Turn::text("ok")]);
    let agent = AgentBuilder::new(model.clone())
        .tool(tool)
        .add_hook(Read(seen.clone()))
        .build();
    agent.prompt("x").run_id("run-7").await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![("visible".to_string(), json!(3), json!("t1c0"))]
    );
    // Extensions never reach the model.
    let sent = serde_json::to_string(&model.requests()[1]).unwrap();
    assert!(!sent.contains("cost_cents"));
}

#[tokio::test]
async fn outside_a_tool_call_there_is_no_call_context() {
    assert!(ToolCallContext::current().is_none());
}

struct Panics(StepEventKind);
impl AgentHook for Panics {
    async fn on_event(&self, _ctx: &HookContext, event: StepEvent<'_>) -> Flow {
        if event.kind() == self.0 {
            panic!("hook bug at {:?}", self.0);
        }
        Flow::Continue
    }
    fn on_model_select(
        &self,
        _ctx: &HookContext,
        _event: ModelSelectEvent<'_>,
    ) -> ModelSelectionAction {
        if self.0 == StepEventKind::ModelSelect {
            panic!("hook bug at select");
        }
        ModelSelectionAction::continue_run()
    }
}

/// The event, message and history of the `HookPanicked` error that ends a run of one tool
/// call with `hook` registered.
async fn hook_panic(hook: impl AgentHook) -> (StepEventKind, String, Vec<Message>) {
    let model = ScriptedModel::new([Turn::tool_call("meta", json!({})), Turn::text("ok")]);
    let tool = tool_fn("meta", "x", |_: serde_json::Value| async {
        Ok::<_, std::convert::Infallible>(1)
    });
    let agent = AgentBuilder::new(model).tool(tool).add_hook(hook).build();
    match agent.prompt("x").await {
        Err(PromptError::HookPanicked {
            event,
            message,
            history,
            ..
        }) => (event, message, history),
        other => panic!("expected HookPanicked, got {other:?}"),
    }
}

#[tokio::test]
async fn a_panicking_hook_ends_the_run_with_a_classified_error() {
    for kind in [
        StepEventKind::RunStart,
        StepEventKind::CompletionCall,
        StepEventKind::ModelSelect,
        StepEventKind::CompletionDispatch,
        StepEventKind::ModelTurnFinished,
        StepEventKind::ToolDispatch,
        StepEventKind::ToolOutcome,
    ] {
        let (event, message, history) = hook_panic(Panics(kind)).await;
        assert_eq!(event, kind);
        assert!(message.starts_with("hook bug"), "{message}");
        assert!(!history.is_empty(), "{kind:?}");
    }
}

#[tokio::test]
async fn a_panicking_settled_hook_does_not_hide_the_answer() {
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("answer")]))
        .add_hook(Panics(StepEventKind::RunSettled))
        .build();
    assert_eq!(agent.prompt("x").await.unwrap(), "answer");
}

/// Written as plain `fn`s returning a future, and panicking before they return it, on the
/// events of `self.0`.
struct PanicsBeforeItsFuture(StepEventKind);

impl PanicsBeforeItsFuture {
    fn check(&self, kind: StepEventKind) {
        if kind == self.0 {
            panic!("hook bug before its future, at {kind:?}");
        }
    }
}

impl AgentHook for PanicsBeforeItsFuture {
    fn on_run_start(
        &self,
        _ctx: &HookContext,
        _event: RunStartEvent<'_>,
    ) -> impl std::future::Future<Output = RunStartAction> + Send {
        self.check(StepEventKind::RunStart);
        async { RunStartAction::continue_run() }
    }

    fn on_dispatch(
        &self,
        _ctx: &HookContext,
        event: DispatchEvent<'_>,
    ) -> impl std::future::Future<Output = DispatchAction> + Send {
        self.check(event.kind.dispatch_event_kind());
        async { DispatchAction::proceed() }
    }

    fn on_outcome(
        &self,
        _ctx: &HookContext,
        event: OutcomeEvent<'_>,
    ) -> impl std::future::Future<Output = OutcomeAction> + Send {
        self.check(event.kind.outcome_event_kind());
        async { OutcomeAction::proceed() }
    }
}

#[tokio::test]
async fn a_hook_panicking_before_it_returns_its_future_ends_the_run_with_a_classified_error() {
    for kind in [
        StepEventKind::RunStart,
        StepEventKind::CompletionDispatch,
        StepEventKind::CompletionOutcome,
        StepEventKind::ToolDispatch,
        StepEventKind::ToolOutcome,
    ] {
        let (event, message, _) = hook_panic(PanicsBeforeItsFuture(kind)).await;
        assert_eq!(event, kind);
        assert!(
            message.starts_with("hook bug before its future"),
            "{message}"
        );
    }
}

/// An `on_text_delta` written as a plain `fn`, panicking before it returns its future.
struct DeltaPanicsBeforeItsFuture;

impl AgentHook for DeltaPanicsBeforeItsFuture {
    #[allow(unreachable_code)]
    fn on_text_delta(
        &self,
        _ctx: &HookContext,
        _event: TextDeltaEvent<'_>,
    ) -> impl std::future::Future<Output = ObservationAction> + Send {
        panic!("delta hook bug before its future");
        async { ObservationAction::continue_run() }
    }
}

#[tokio::test]
async fn a_delta_hook_panicking_before_it_returns_its_future_fails_the_streamed_run() {
    use futures::StreamExt;
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("an answer")]))
        .add_hook(DeltaPanicsBeforeItsFuture)
        .build();
    let items: Vec<_> = agent.prompt("x").stream().collect().await;
    let Some(Err(error)) = items.last() else {
        panic!("the stream ends with the run's error: {items:?}");
    };
    assert!(
        error
            .to_string()
            .contains("delta hook bug before its future"),
        "{error}"
    );
}

/// A tool whose declarations (timeout, traits, origin, retry safety) all panic: a bug in a
/// tool's code, outside its `call`.
struct BrittleDeclarations;

impl Tool for BrittleDeclarations {
    type Args = serde_json::Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn name(&self) -> &str {
        "brittle"
    }
    fn description(&self) -> &str {
        "Declares nothing without panicking."
    }
    async fn call(&self, _args: serde_json::Value) -> Result<String, Self::Error> {
        Ok("ran".into())
    }
    fn timeout(&self) -> Option<Duration> {
        panic!("timeout bug")
    }
    fn retry_safety(&self) -> reins::tool::RetrySafety {
        panic!("retry safety bug")
    }
    fn traits(&self) -> Option<reins::tool::ToolTraits> {
        panic!("traits bug")
    }
    fn origin(&self) -> Option<&str> {
        panic!("origin bug")
    }
}

#[tokio::test]
async fn a_tool_whose_declarations_panic_fails_its_call_and_never_the_callers_task() {
    let model = ScriptedModel::new([Turn::tool_call("brittle", json!({})), Turn::text("ok")]);
    // What a dispatch hook was told the tool declares.
    let declared = Arc::new(Mutex::new(Vec::new()));
    struct Declared(Arc<Mutex<Vec<String>>>);
    impl AgentHook for Declared {
        async fn on_dispatch(
            &self,
            _ctx: &HookContext,
            event: DispatchEvent<'_>,
        ) -> DispatchAction {
            if event.tool_name().is_some() {
                let seen = format!("{:?} {:?}", event.tool_traits(), event.tool_origin());
                self.0.lock().unwrap().push(seen);
            }
            DispatchAction::proceed()
        }
    }
    let agent = AgentBuilder::new(model.clone())
        .tool(BrittleDeclarations)
        .add_hook(Declared(declared.clone()))
        .build();
    // The run goes on: the call failed as a panicking tool's does, and the model saw it.
    assert_eq!(agent.prompt("x").await.unwrap(), "ok");
    let shown = model.requests()[1].history.last().unwrap().text();
    assert!(shown.contains("timeout bug"), "{shown}");
    // Declarations that panic read as declaring nothing: a policy then assumes the worst.
    assert_eq!(*declared.lock().unwrap(), ["None None"]);

    let mut set = reins::tool::ToolSet::new();
    set.add(BrittleDeclarations);
    assert_eq!(
        set.retry_safety("brittle"),
        reins::tool::RetrySafety::Undeclared
    );
    assert_eq!(set.traits("brittle"), None);
    assert_eq!(set.origin("brittle"), None);
}
