//! A hook that implements one method is called for that method every time, however many runs
//! go by; the stack stops asking it only what the trait's defaults answer for it (see
//! `HookStack`'s docs). What a user relies on: no call of their code is ever skipped, and a
//! kind no code of theirs answers stops being observed.

use reins::agent::{
    AgentBuilder, AgentHook, DispatchAction, DispatchEvent, Flow, HookContext, HookStack,
    ModelTurnAction, ModelTurnFinished, StepEvent, StepEventKind,
};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use serde_json::json;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Two runs of a 3-turn tool loop with `hooks` registered as one hook; the model turns they
/// made.
async fn two_runs(hooks: &HookStack) -> usize {
    let turns = || {
        [
            Turn::tool_call("echo", json!({ "text": "a" })),
            Turn::tool_call("echo", json!({ "text": "b" })),
            Turn::text("done"),
        ]
    };
    let model = ScriptedModel::new(turns().into_iter().chain(turns()));
    let echo = tool_fn(
        "echo",
        "Echoes text.",
        |args: serde_json::Value| async move { Ok::<_, Infallible>(args["text"].clone()) },
    );
    let agent = AgentBuilder::new(model)
        .tool(echo)
        .add_hook(hooks.clone())
        .build();
    let mut turns_run = 0;
    for _ in 0..2 {
        let answer = agent.prompt("go").extended_details().await;
        let Ok(response) = answer else {
            panic!("the run fails: {answer:?}")
        };
        assert_eq!(response.output, "done");
        turns_run += response.state.turn;
    }
    turns_run
}

/// Counts its tool dispatches; every other method is the trait's default.
#[derive(Default)]
struct CountsDispatches(AtomicUsize);

impl AgentHook for CountsDispatches {
    async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if event.tool_name().is_some() {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        DispatchAction::proceed()
    }
}

#[tokio::test]
async fn a_hook_with_one_method_is_called_for_it_every_turn_and_stops_observing_the_rest() {
    let hook = Arc::new(CountsDispatches::default());
    let hooks = HookStack::new().with(Shared(Arc::clone(&hook)));
    two_runs(&hooks).await;
    assert_eq!(hook.0.load(Ordering::SeqCst), 4, "two tool calls a run");
    // What it implements is still observed; what only the defaults answer is not.
    assert!(hooks.observes(StepEventKind::ToolDispatch));
    assert!(hooks.observes(StepEventKind::CompletionDispatch));
    for kind in [
        StepEventKind::RunStart,
        StepEventKind::CompletionCall,
        StepEventKind::ModelSelect,
        StepEventKind::CompletionOutcome,
        StepEventKind::ToolOutcome,
        StepEventKind::CompletionResponse,
        StepEventKind::ModelTurnFinished,
        StepEventKind::RunSettled,
    ] {
        assert!(
            !hooks.observes(kind),
            "{kind:?} is answered by defaults alone"
        );
    }
}

#[tokio::test]
async fn a_hook_added_after_the_stack_learned_its_defaults_is_called_for_every_kind_it_answers() {
    let hook = Arc::new(CountsDispatches::default());
    let mut hooks = HookStack::new().with(Shared(Arc::clone(&hook)));
    two_runs(&hooks).await;
    assert!(!hooks.observes(StepEventKind::ModelTurnFinished));
    // What the hook's own code answers stays observed, once learned too.
    assert!(hooks.observes(StepEventKind::ToolDispatch));
    assert!(hooks.observes(StepEventKind::ToolDispatch));
    // A copy knows what the original learned.
    assert!(!hooks.clone().observes(StepEventKind::ModelTurnFinished));
    assert!(hooks.clone().observes(StepEventKind::ToolDispatch));

    let turns = Arc::new(AsksItsOnEvent::default());
    hooks.push(ArcHook(Arc::clone(&turns)));
    assert!(hooks.observes(StepEventKind::ModelTurnFinished));
    let turns_run = two_runs(&hooks).await;
    assert_eq!(turns.0.load(Ordering::SeqCst), turns_run);
    assert_eq!(
        hook.0.load(Ordering::SeqCst),
        8,
        "and the first hook still sees its own"
    );
}

/// Forwards to a shared [`CountsDispatches`], so the test can read its count: a wrapper of
/// another type, whose own methods are the defaults.
struct Shared(Arc<CountsDispatches>);

impl AgentHook for Shared {
    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        self.0.on_dispatch(ctx, event).await
    }
}

/// Counts its model turns, then asks its own default `on_event` with the turn in the step
/// view.
#[derive(Default)]
struct AsksItsOnEvent(AtomicUsize);

impl AgentHook for AsksItsOnEvent {
    async fn on_model_turn_finished(
        &self,
        ctx: &HookContext,
        event: ModelTurnFinished<'_>,
    ) -> ModelTurnAction {
        self.0.fetch_add(1, Ordering::SeqCst);
        let step = StepEvent::ModelTurnFinished {
            turn: event.turn,
            content: event.content,
            usage: event.usage,
        };
        match self.on_event(ctx, step).await {
            Flow::Terminate(reason) => ModelTurnAction::stop(reason),
            _ => ModelTurnAction::continue_run(),
        }
    }
}

/// Counts its model turns, then answers with what a hook of another type (all defaults)
/// answers.
#[derive(Default)]
struct Delegates {
    inner: Plain,
    turns: AtomicUsize,
}

#[derive(Default)]
struct Plain;

impl AgentHook for Plain {}

impl AgentHook for Delegates {
    async fn on_model_turn_finished(
        &self,
        ctx: &HookContext,
        event: ModelTurnFinished<'_>,
    ) -> ModelTurnAction {
        self.turns.fetch_add(1, Ordering::SeqCst);
        self.inner.on_model_turn_finished(ctx, event).await
    }
}

#[tokio::test]
async fn a_method_that_asks_a_default_is_still_the_users_and_is_called_every_turn() {
    let (asks, delegates) = (
        Arc::new(AsksItsOnEvent::default()),
        Arc::new(Delegates::default()),
    );
    let hooks = HookStack::new()
        .with(ArcHook(Arc::clone(&asks)))
        .with(ArcHook(Arc::clone(&delegates)));
    let turns = two_runs(&hooks).await;
    assert_eq!(turns, 6, "three model turns a run");
    assert_eq!(asks.0.load(Ordering::SeqCst), turns);
    assert_eq!(delegates.turns.load(Ordering::SeqCst), turns);
    assert!(hooks.observes(StepEventKind::ModelTurnFinished));
}

/// Registers a shared hook whose own `on_model_turn_finished` the test counts.
struct ArcHook<H>(Arc<H>);

impl<H: AgentHook> AgentHook for ArcHook<H> {
    async fn on_model_turn_finished(
        &self,
        ctx: &HookContext,
        event: ModelTurnFinished<'_>,
    ) -> ModelTurnAction {
        self.0.on_model_turn_finished(ctx, event).await
    }
}

/// Sees every event through `on_event` alone.
#[derive(Default)]
struct SeesEverything(AtomicUsize);

impl AgentHook for SeesEverything {
    async fn on_event(&self, _: &HookContext, _: StepEvent<'_>) -> Flow {
        self.0.fetch_add(1, Ordering::SeqCst);
        Flow::Continue
    }
}

#[tokio::test]
async fn a_hook_that_implements_on_event_sees_every_event_of_every_run() {
    let hook = Arc::new(SeesEverything::default());
    let stack = HookStack::new().with(OnEventOf(Arc::clone(&hook)));
    two_runs(&stack).await;
    let first = hook.0.load(Ordering::SeqCst);
    two_runs(&stack).await;
    assert!(first > 0);
    assert_eq!(
        hook.0.load(Ordering::SeqCst),
        2 * first,
        "as many events each time"
    );
    assert!(stack.observes(StepEventKind::RunStart));
    assert!(stack.observes(StepEventKind::ModelTurnFinished));
}

/// Registers a shared `on_event` hook.
struct OnEventOf<H>(Arc<H>);

impl<H: AgentHook> AgentHook for OnEventOf<H> {
    async fn on_event(&self, ctx: &HookContext, event: StepEvent<'_>) -> Flow {
        self.0.on_event(ctx, event).await
    }
}
