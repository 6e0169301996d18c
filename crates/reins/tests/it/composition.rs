//! How several hooks' answers combine, and which events a hook is called for.

use crate::common::{Recorder, SummariseFirstDispatch, add_tool};
use reins::agent::*;
use reins::completion::CompletionResponse;
use reins::message::{AssistantContent, Document, Message, OneOrMany};
use reins::testing::{ScriptedModel, Turn};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Records its name on every typed event it answers, then answers `continue`.
#[derive(Clone)]
struct Named {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
}
impl AgentHook for Named {
    async fn on_model_turn_finished(
        &self,
        _ctx: &HookContext,
        _event: ModelTurnFinished<'_>,
    ) -> ModelTurnAction {
        self.log.lock().unwrap().push(format!("{} turn", self.name));
        ModelTurnAction::continue_run()
    }
    async fn on_run_settled(&self, _ctx: &HookContext, _event: RunSettledEvent<'_>) {
        self.log
            .lock()
            .unwrap()
            .push(format!("{} settled", self.name));
    }
}

#[tokio::test]
async fn agent_hooks_run_before_run_hooks() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let hook = |name| Named {
        name,
        log: log.clone(),
    };
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("x")]))
        .add_hook(hook("agent1"))
        .add_hook(hook("agent2"))
        .build();
    agent
        .prompt("x")
        .add_hook(hook("run1"))
        .add_hook(hook("run2"))
        .await
        .unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        vec![
            "agent1 turn",
            "agent2 turn",
            "run1 turn",
            "run2 turn",
            "agent1 settled",
            "agent2 settled",
            "run1 settled",
            "run2 settled"
        ]
    );
}

struct Patch(RequestPatch);
impl AgentHook for Patch {
    async fn on_completion_call(
        &self,
        _ctx: &HookContext,
        _event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        CompletionCallAction::patch(self.0.clone())
    }
}

#[tokio::test]
async fn completion_call_patches_from_all_hooks_merge_in_order() {
    let model = ScriptedModel::new([Turn::text("x")]);
    let agent = AgentBuilder::new(model.clone())
        .tool(add_tool())
        .add_hook(Patch(
            RequestPatch::new()
                .context(Document::new("ctx", "context doc"))
                .temperature(0.9)
                .active_tools(["add", "other"]),
        ))
        .add_hook(Patch(
            RequestPatch::new().temperature(0.1).active_tools(["add"]),
        ))
        .build();
    agent.prompt("x").await.unwrap();
    let request = &model.requests()[0];
    assert_eq!(request.documents.len(), 1, "the context hook applied");
    assert_eq!(
        request.temperature,
        Some(0.1),
        "the later sampling hook won"
    );
    assert_eq!(request.tool_names().collect::<Vec<_>>(), vec!["add"]);
}

struct StopTurn;
impl AgentHook for StopTurn {
    async fn on_completion_call(
        &self,
        _ctx: &HookContext,
        _event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        CompletionCallAction::stop("no")
    }
}

#[derive(Clone, Default)]
struct CountCalls(Arc<AtomicUsize>);
impl AgentHook for CountCalls {
    async fn on_completion_call(
        &self,
        _ctx: &HookContext,
        _event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        self.0.fetch_add(1, Ordering::SeqCst);
        CompletionCallAction::continue_run()
    }
}

#[tokio::test]
async fn a_stop_ends_the_merge() {
    let later = CountCalls::default();
    let model = ScriptedModel::new([Turn::text("x")]);
    let agent = AgentBuilder::new(model.clone())
        .add_hook(StopTurn)
        .add_hook(later.clone())
        .build();
    assert!(matches!(
        agent.prompt("x").await,
        Err(PromptError::Cancelled { .. })
    ));
    assert_eq!(later.0.load(Ordering::SeqCst), 0);
    assert!(model.requests().is_empty(), "the model was never called");
}

struct Decide(ModelTurnAction);
impl AgentHook for Decide {
    async fn on_model_turn_finished(
        &self,
        _ctx: &HookContext,
        _event: ModelTurnFinished<'_>,
    ) -> ModelTurnAction {
        self.0.clone()
    }
}

#[tokio::test]
async fn the_first_decision_wins_for_turn_finished() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([Turn::text("x")]);
    let agent = AgentBuilder::new(model)
        .add_hook(Decide(ModelTurnAction::continue_run()))
        .add_hook(Decide(ModelTurnAction::stop("first decision")))
        .add_hook(Decide(ModelTurnAction::stop("second decision")))
        .add_hook(Named {
            name: "after",
            log: log.clone(),
        })
        .build();
    let error = agent.prompt("x").await.unwrap_err();
    assert!(
        matches!(error, PromptError::Cancelled { ref reason, .. } if reason == "first decision")
    );
    assert_eq!(
        *log.lock().unwrap(),
        vec!["after settled"],
        "later hooks are not called"
    );
}

/// Observes only tool dispatches.
#[derive(Clone, Default)]
struct ToolOnlyHook(Arc<Mutex<Vec<String>>>);
impl AgentHook for ToolOnlyHook {
    fn observes(&self, kind: StepEventKind) -> bool {
        matches!(kind, StepEventKind::ToolDispatch)
    }
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        self.0
            .lock()
            .unwrap()
            .push(event.tool_name().unwrap_or("<model>").to_string());
        DispatchAction::proceed()
    }
    async fn on_event(&self, _ctx: &HookContext, event: StepEvent<'_>) -> Flow {
        self.0
            .lock()
            .unwrap()
            .push(format!("event {:?}", event.kind()));
        Flow::Continue
    }
}

#[tokio::test]
async fn a_hook_is_called_only_for_the_kinds_it_observes() {
    let hook = ToolOnlyHook::default();
    let model = ScriptedModel::new([
        Turn::tool_call("add", json!({"a": 1, "b": 1})),
        Turn::text("2"),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(add_tool())
        .add_hook(hook.clone())
        .build();
    agent.prompt("x").await.unwrap();
    assert_eq!(*hook.0.lock().unwrap(), vec!["add"]);
}

#[test]
fn by_default_a_hook_observes_everything_but_other_effects() {
    struct Default;
    impl AgentHook for Default {}
    let hook = Default;
    for kind in StepEventKind::ALL {
        let expected = !matches!(
            kind,
            StepEventKind::EmbeddingDispatch
                | StepEventKind::RerankDispatch
                | StepEventKind::MemoryDispatch
                | StepEventKind::RetrievalDispatch
                | StepEventKind::CustomDispatch
                | StepEventKind::EmbeddingOutcome
                | StepEventKind::RerankOutcome
                | StepEventKind::MemoryOutcome
                | StepEventKind::RetrievalOutcome
                | StepEventKind::CustomOutcome
        );
        assert_eq!(hook.observes(kind), expected, "{kind:?}");
    }
    assert_eq!(StepEventKind::ToolCall, StepEventKind::ToolDispatch);
    assert_eq!(StepEventKind::ToolResult, StepEventKind::ToolOutcome);
}

#[derive(Clone, Default)]
struct EffectLog(Arc<Mutex<Vec<String>>>);
impl AgentHook for EffectLog {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        let (name, _) = event.effect_payload().unwrap();
        self.0
            .lock()
            .unwrap()
            .push(format!("{:?} {name}", event.kind));
        if name == "forbidden" {
            DispatchAction::skip("not this one")
        } else {
            DispatchAction::proceed()
        }
    }
}

struct OptIn(EffectLog);
impl AgentHook for OptIn {
    fn observes(&self, _kind: StepEventKind) -> bool {
        true
    }
    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        self.0.on_dispatch(ctx, event).await
    }
}

#[tokio::test]
async fn effects_other_than_models_and_tools_reach_only_hooks_that_opt_in() {
    let default_hook = EffectLog::default();
    let opted_in = EffectLog::default();
    let stack = HookStack::new()
        .with(default_hook.clone())
        .with(OptIn(opted_in.clone()));
    let ctx = HookContext::new("run-1");
    let payload = json!({"query": "q"});
    let lookup = EffectCall::new("lookup", &payload);
    for kind in [
        DispatchKind::Embedding,
        DispatchKind::Rerank,
        DispatchKind::Memory,
        DispatchKind::Retrieval,
        DispatchKind::Custom,
    ] {
        let action = stack
            .on_dispatch(&ctx, DispatchEvent::effect(kind, &lookup))
            .await;
        assert_eq!(action, DispatchAction::Proceed);
    }
    let action = stack
        .on_dispatch(
            &ctx,
            DispatchEvent::effect(
                DispatchKind::Custom,
                &EffectCall::new("forbidden", &payload),
            ),
        )
        .await;
    assert_eq!(action, DispatchAction::skip("not this one"));
    assert!(default_hook.0.lock().unwrap().is_empty());
    assert_eq!(opted_in.0.lock().unwrap().len(), 6);
}

#[tokio::test]
async fn a_stack_registered_as_one_hook_composes_like_its_members() {
    let recorder = Recorder::default();
    let inner = HookStack::new()
        .with(Patch(RequestPatch::new().temperature(0.2)))
        .with(recorder.clone());
    let model = ScriptedModel::new([
        Turn::tool_call("add", json!({"a": 1, "b": 2})),
        Turn::text("3"),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .tool(add_tool())
        .add_hook(inner)
        .build();
    agent.prompt("x").await.unwrap();
    assert_eq!(model.requests()[0].temperature, Some(0.2));
    assert!(recorder.lines().contains(&"tool_result add 3".to_string()));
    assert!(
        recorder
            .lines()
            .contains(&"completion_response 1".to_string())
    );
}

/// A model call as [`SeenRequests`] saw it: its temperature and history length.
type SeenRequest = (Option<f64>, usize);

/// Records the temperature and history length of every model call it is shown.
#[derive(Clone, Default)]
struct SeenRequests(Arc<Mutex<Vec<SeenRequest>>>);
impl AgentHook for SeenRequests {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if let Some(request) = event.request() {
            let seen = (request.temperature, request.history.len());
            self.0.lock().unwrap().push(seen);
        }
        DispatchAction::proceed()
    }
}

#[tokio::test]
async fn a_stack_registered_as_one_hook_passes_its_members_dispatch_patches_on_for_one_turn() {
    let seen = SeenRequests::default();
    let inner = HookStack::new()
        .with(SummariseFirstDispatch)
        .with(seen.clone());
    let model = ScriptedModel::new([
        Turn::tool_call("add", json!({"a": 1, "b": 2})),
        Turn::text("3"),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .temperature(0.7)
        .tool(add_tool())
        .add_hook(inner)
        .build();
    let response = agent.prompt("1+2").extended_details().await.unwrap();
    // The later member sees the earlier one's patch; the next turn starts from the run's
    // request again.
    assert_eq!(
        *seen.0.lock().unwrap(),
        vec![(Some(0.1), 1), (Some(0.7), 3)]
    );
    let requests = model.requests();
    assert_eq!(requests[0].temperature, Some(0.1));
    assert_eq!(requests[0].history, vec![Message::user("summary")]);
    assert_eq!(requests[1].temperature, Some(0.7));
    assert_eq!(requests[1].history.len(), 3);
    assert_eq!(requests[1].history[0], Message::user("1+2"));
    assert_eq!(response.history().len(), 4);
}

/// Replaces the first model call's response with a text answer.
struct AnswerFirstTurnItself;
impl AgentHook for AnswerFirstTurnItself {
    async fn on_outcome(&self, ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if event.completion().is_some() && ctx.turn() == 1 {
            let content = OneOrMany::one(AssistantContent::text("replaced"));
            OutcomeAction::replace(CompletionResponse::new(content))
        } else {
            OutcomeAction::proceed()
        }
    }
}

/// Records the text of every model response it is shown.
#[derive(Clone, Default)]
struct SeenResponses(Arc<Mutex<Vec<String>>>);
impl AgentHook for SeenResponses {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(response) = event.completion() {
            self.0.lock().unwrap().push(response.text());
        }
        OutcomeAction::proceed()
    }
}

#[tokio::test]
async fn a_stack_registered_as_one_hook_passes_its_members_replaced_response_on() {
    let inner_seen = SeenResponses::default();
    let outer_seen = SeenResponses::default();
    let inner = HookStack::new()
        .with(AnswerFirstTurnItself)
        .with(inner_seen.clone());
    let model = ScriptedModel::new([Turn::tool_call("add", json!({"a": 1, "b": 2}))]);
    let agent = AgentBuilder::new(model)
        .tool(add_tool())
        .add_hook(inner)
        .add_hook(outer_seen.clone())
        .build();
    let response = agent.prompt("1+2").await.unwrap();
    assert_eq!(response, "replaced");
    assert_eq!(*inner_seen.0.lock().unwrap(), vec!["replaced"]);
    assert_eq!(*outer_seen.0.lock().unwrap(), vec!["replaced"]);
}

#[tokio::test]
async fn a_stack_whose_members_keep_the_response_leaves_it_as_the_model_sent_it() {
    let seen = SeenResponses::default();
    let model = ScriptedModel::new([Turn::text("the model's")]);
    let agent = AgentBuilder::new(model)
        .add_hook(HookStack::new().with(seen.clone()))
        .build();
    assert_eq!(agent.prompt("x").await.unwrap(), "the model's");
    assert_eq!(*seen.0.lock().unwrap(), vec!["the model's"]);
}
