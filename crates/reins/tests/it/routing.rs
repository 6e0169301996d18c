//! Choosing the model per turn with `on_model_select`.

use crate::common::add_tool;
use reins::agent::*;
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// (default, selected, previous) labels of one selection.
type Seen = (String, String, Option<String>);

/// Escalates to "smart" once a tool result is in the history; records every event it sees.
#[derive(Clone, Default)]
struct Escalate(Arc<Mutex<Vec<Seen>>>);
impl AgentHook for Escalate {
    fn on_model_select(
        &self,
        ctx: &HookContext,
        event: ModelSelectEvent<'_>,
    ) -> ModelSelectionAction {
        self.0.lock().unwrap().push((
            event.default_model.to_string(),
            event.selected_model.to_string(),
            event.previous_model.map(str::to_string),
        ));
        let has_tool_results = event.history.iter().any(|m| matches!(m, Message::Tool(_)));
        assert_eq!(has_tool_results, ctx.turn() > 1);
        if has_tool_results {
            ModelSelectionAction::select("smart")
        } else {
            ModelSelectionAction::continue_run()
        }
    }
}

#[tokio::test]
async fn a_hook_selects_a_registered_model_per_turn() {
    let default = ScriptedModel::new([Turn::tool_call("add", json!({"a": 1, "b": 1}))]);
    let smart = ScriptedModel::new([Turn::text("two")]);
    let hook = Escalate::default();
    let agent = AgentBuilder::new(default.clone())
        .named_model("smart", smart.clone())
        .tool(add_tool())
        .add_hook(hook.clone())
        .build();
    assert_eq!(agent.model_labels(), ["default", "smart"]);
    let response = agent.prompt("1+1").extended_details().await.unwrap();
    assert_eq!(response.output, "two");
    assert_eq!(default.requests().len(), 1);
    assert_eq!(smart.requests().len(), 1);
    assert_eq!(response.state.last_model.as_deref(), Some("smart"));
    assert_eq!(
        *hook.0.lock().unwrap(),
        vec![
            ("default".into(), "default".into(), None),
            ("default".into(), "default".into(), Some("default".into())),
        ]
    );
}

/// Records the selection it sees, then selects `pick`.
struct Pick(&'static str, Arc<Mutex<Vec<String>>>);
impl AgentHook for Pick {
    fn on_model_select(
        &self,
        _ctx: &HookContext,
        event: ModelSelectEvent<'_>,
    ) -> ModelSelectionAction {
        self.1
            .lock()
            .unwrap()
            .push(event.selected_model.to_string());
        ModelSelectionAction::select(self.0)
    }
}

#[tokio::test]
async fn a_later_hook_sees_an_earlier_selection_and_the_last_wins() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let a = ScriptedModel::new([Turn::text("from a")]);
    let b = ScriptedModel::new([Turn::text("from b")]);
    let agent = AgentBuilder::new(ScriptedModel::new([]))
        .named_model("a", a)
        .named_model("b", b)
        .add_hook(Pick("a", seen.clone()))
        .add_hook(Pick("b", seen.clone()))
        .build();
    assert_eq!(agent.prompt("x").await.unwrap(), "from b");
    assert_eq!(*seen.lock().unwrap(), vec!["default", "a"]);
}

#[tokio::test]
async fn model_route_sets_the_default_route() {
    let fallback = ScriptedModel::new([]);
    let routed = ScriptedModel::new([Turn::text("routed")]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    struct See(Arc<Mutex<Vec<String>>>);
    impl AgentHook for See {
        fn on_model_select(
            &self,
            _ctx: &HookContext,
            event: ModelSelectEvent<'_>,
        ) -> ModelSelectionAction {
            self.0.lock().unwrap().push(event.default_model.to_string());
            ModelSelectionAction::continue_run()
        }
    }
    let agent = AgentBuilder::new(fallback.clone())
        .model_route("primary", routed.clone())
        .add_hook(See(seen.clone()))
        .build();
    assert_eq!(agent.prompt("x").await.unwrap(), "routed");
    assert_eq!(*seen.lock().unwrap(), vec!["primary"]);
    assert!(fallback.requests().is_empty());
}

#[tokio::test]
async fn selecting_an_unknown_label_is_rejected_clearly() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("x")]))
        .add_hook(Pick("gpt-99", seen))
        .build();
    let error = agent.prompt("x").await.unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("gpt-99") && message.contains("default"),
        "{message}"
    );
    assert!(
        matches!(error, PromptError::RejectedAction { history, .. } if history == vec![Message::user("x")])
    );
}

#[tokio::test]
async fn model_select_can_stop_the_run() {
    struct Refuse;
    impl AgentHook for Refuse {
        fn on_model_select(
            &self,
            _ctx: &HookContext,
            _event: ModelSelectEvent<'_>,
        ) -> ModelSelectionAction {
            ModelSelectionAction::stop("budget exhausted")
        }
    }
    let model = ScriptedModel::new([Turn::text("x")]);
    let agent = AgentBuilder::new(model.clone()).add_hook(Refuse).build();
    let error = agent.prompt("x").await.unwrap_err();
    assert!(matches!(error, PromptError::Cancelled { reason, .. } if reason == "budget exhausted"));
    assert!(model.requests().is_empty());
}
