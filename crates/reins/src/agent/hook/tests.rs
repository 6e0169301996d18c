//! A stack registered as a hook adds its hooks, whose panics reach the run as values; a stack
//! called directly lets them unwind.

use super::*;
use crate::agent::{AgentBuilder, PromptError};
use crate::testing::{ScriptedModel, Turn};
use crate::tool::tool_fn;
use futures::{FutureExt, StreamExt};
use serde_json::json;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

/// Panics on events of one kind.
struct Panics(StepEventKind);

impl AgentHook for Panics {
    fn observes(&self, _kind: StepEventKind) -> bool {
        true
    }
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

/// Records that it settled.
#[derive(Clone, Default)]
struct Settled(Arc<Mutex<usize>>);

impl AgentHook for Settled {
    async fn on_run_settled(&self, _ctx: &HookContext, _event: RunSettledEvent<'_>) {
        *self.0.lock().unwrap() += 1;
    }
}

fn agent(hooks: HookStack) -> crate::agent::Agent {
    let model = ScriptedModel::new([
        Turn::reasoning("thinking")
            .then_text("calling")
            .then_tool_call("meta", json!({})),
        Turn::text("ok"),
    ]);
    let tool = tool_fn("meta", "x", |_: serde_json::Value| async {
        Ok::<_, std::convert::Infallible>(1)
    });
    AgentBuilder::new(model).tool(tool).add_hook(hooks).build()
}

#[tokio::test]
async fn a_panic_in_a_nested_stack_ends_the_run_classified_as_if_registered_directly() {
    for kind in [
        StepEventKind::RunStart,
        StepEventKind::CompletionCall,
        StepEventKind::ModelSelect,
        StepEventKind::CompletionDispatch,
        StepEventKind::CompletionResponse,
        StepEventKind::ModelTurnFinished,
        StepEventKind::ToolDispatch,
        StepEventKind::ToolOutcome,
    ] {
        let nested = HookStack::new().with(HookStack::new().with(Panics(kind)));
        let error = agent(nested).prompt("x").await.unwrap_err();
        let PromptError::HookPanicked { event, message, .. } = error else {
            panic!("{kind:?}: expected HookPanicked, got {error:?}");
        };
        assert_eq!(event, kind);
        assert!(message.starts_with("hook bug"), "{message}");
    }
}

#[tokio::test]
async fn a_panic_in_a_nested_stack_ends_a_streamed_run_classified() {
    for kind in [
        StepEventKind::TextDelta,
        StepEventKind::ReasoningDelta,
        StepEventKind::ToolCallDelta,
        StepEventKind::StreamResponseFinish,
    ] {
        let nested = HookStack::new().with(HookStack::new().with(Panics(kind)));
        let items: Vec<_> = agent(nested).prompt("x").stream().collect().await;
        let Some(Err(PromptError::HookPanicked { event, message, .. })) = items.last() else {
            panic!("{kind:?}: expected HookPanicked, got {items:?}");
        };
        assert_eq!(*event, kind);
        assert!(message.starts_with("hook bug"), "{message}");
    }
}

#[tokio::test]
async fn a_settled_panic_in_a_nested_stack_is_logged_and_the_others_still_run() {
    let settled = Settled::default();
    let nested = HookStack::new()
        .with(HookStack::new().with(Panics(StepEventKind::RunSettled)))
        .with(settled.clone());
    assert_eq!(agent(nested).prompt("x").await.unwrap(), "ok");
    assert_eq!(*settled.0.lock().unwrap(), 1);
}

#[tokio::test]
async fn a_stack_called_directly_lets_a_members_panic_unwind_as_it_was_raised() {
    let ctx = HookContext::new("run-1");
    let payload = json!({});
    let nested =
        HookStack::new().with(HookStack::new().with(Panics(StepEventKind::CustomDispatch)));
    let call = EffectCall::new("effect", &payload);
    let event = DispatchEvent::effect(DispatchKind::Custom, &call);
    let panic = AssertUnwindSafe(nested.on_dispatch(&ctx, event))
        .catch_unwind()
        .await
        .unwrap_err();
    assert_eq!(
        panic.downcast_ref::<String>().map(String::as_str),
        Some("hook bug at CustomDispatch")
    );

    let select = HookStack::new().with(Panics(StepEventKind::ModelSelect));
    let event = ModelSelectEvent {
        turn: 1,
        default_model: "default",
        selected_model: "default",
        previous_model: None,
        available_models: &[],
        history: &[],
    };
    let panic = std::panic::catch_unwind(AssertUnwindSafe(|| select.on_model_select(&ctx, event)))
        .unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"hook bug at select"));
}

/// Appends its name to a shared list at each tool dispatch, and rewrites the call's `x`
/// argument to its own name, so a later hook can tell whose rewrite it saw.
#[derive(Clone)]
struct Named(&'static str, Arc<Mutex<Vec<String>>>);

impl AgentHook for Named {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        let Some(args) = event.tool_args_as::<serde_json::Value>() else {
            return DispatchAction::proceed();
        };
        let seen = args.ok().and_then(|args| args.get("x").cloned());
        self.1
            .lock()
            .unwrap()
            .push(format!("{}<{}", self.0, seen.unwrap_or_default()));
        DispatchAction::rewrite_tool_args(event.kind, json!({ "x": self.0 }))
    }
}

#[tokio::test]
async fn a_stack_pushed_into_a_stack_adds_its_hooks_in_order() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let named = |name| Named(name, Arc::clone(&seen));
    let inner = HookStack::new().with(named("b")).with(named("c"));
    let stack = HookStack::new()
        .with(named("a"))
        .with(inner)
        .with(named("d"));
    assert_eq!(stack.len(), 4);
    assert!(HookStack::new().with(HookStack::new()).is_empty());

    assert_eq!(agent(stack).prompt("x").await.unwrap(), "ok");
    // One chain of four hooks, each seeing the rewrite of the one before it.
    assert_eq!(
        *seen.lock().unwrap(),
        ["a<null", "b<\"a\"", "c<\"b\"", "d<\"c\""].map(String::from)
    );
}
