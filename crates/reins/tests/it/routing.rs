//! Choosing the model per turn with `on_model_select`, and what the calls a turn did not keep
//! (retried on another model, or stopped on) count in the run's usage.

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

/// Sends the default model's answer to "backup" (an answer it judges unusable), and stops the
/// run on any answer of "stopper".
struct Judge;
impl AgentHook for Judge {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        match (event.completion().is_some(), event.model()) {
            (true, Some("default")) => OutcomeAction::retry_on("backup"),
            (true, Some("stopper")) => OutcomeAction::stop("not this answer"),
            _ => OutcomeAction::proceed(),
        }
    }
}

/// Reports the run's usage as it settled.
#[derive(Clone, Default)]
struct SettledUsage(Arc<Mutex<Option<reins::completion::Usage>>>);
impl AgentHook for SettledUsage {
    async fn on_run_settled(&self, _ctx: &HookContext, event: RunSettledEvent<'_>) {
        *self.0.lock().unwrap() = Some(event.usage);
    }
}

fn usage(input: u64, output: u64) -> reins::completion::Usage {
    reins::completion::Usage {
        input_tokens: input,
        output_tokens: output,
        total_tokens: input + output,
        ..Default::default()
    }
}

/// Every model call a turn made counts in the run's usage: one whose answer a hook sent to
/// another model, and one a hook stopped the run on, were made (and paid) all the same.
#[tokio::test]
async fn calls_a_turn_did_not_keep_count_in_the_run_s_usage() {
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("meh").usage(usage(10, 5))]))
        .named_model(
            "backup",
            ScriptedModel::new([Turn::text("good").usage(usage(3, 2))]),
        )
        .add_hook(Judge)
        .build();
    let response = agent.prompt("hi").extended_details().await.unwrap();
    assert_eq!(response.output, "good");
    assert_eq!(response.state.usage, usage(13, 7));

    let settled = SettledUsage::default();
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("unused")]))
        .named_model(
            "stopper",
            ScriptedModel::new([Turn::text("y").usage(usage(4, 1))]),
        )
        .add_hook(StopperFirst)
        .add_hook(Judge)
        .add_hook(settled.clone())
        .build();
    let stopped = agent.prompt("hi").await;
    assert!(
        matches!(stopped, Err(PromptError::Cancelled { .. })),
        "{stopped:?}"
    );
    assert_eq!(*settled.0.lock().unwrap(), Some(usage(4, 1)));
}

/// Selects "stopper" for every turn.
struct StopperFirst;
impl AgentHook for StopperFirst {
    fn on_model_select(
        &self,
        _ctx: &HookContext,
        _event: ModelSelectEvent<'_>,
    ) -> ModelSelectionAction {
        ModelSelectionAction::select("stopper")
    }
}

/// Answers in place of every model response, with a response of its own (that reports no
/// usage).
struct Curator;
impl AgentHook for Curator {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if event.completion().is_none() {
            return OutcomeAction::proceed();
        }
        let curated = reins::message::AssistantContent::text("curated");
        let response =
            reins::completion::CompletionResponse::new(reins::message::OneOrMany::one(curated));
        OutcomeAction::replace(response)
    }
}

/// Records the usage of each response it sees.
#[derive(Clone, Default)]
struct SeenUsage(Arc<Mutex<Vec<reins::completion::Usage>>>);
impl AgentHook for SeenUsage {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(response) = event.completion() {
            self.0.lock().unwrap().push(response.usage);
        }
        OutcomeAction::proceed()
    }
}

/// A response a hook answers in place of the model's keeps the model's usage: the call was
/// made and paid. So in a stack of hooks too, where the replacement is held beside the
/// response.
#[tokio::test]
async fn a_replaced_response_keeps_the_usage_of_the_call_that_was_made() {
    for stacked in [false, true] {
        let seen = SeenUsage::default();
        let model = ScriptedModel::new([Turn::text("raw").usage(usage(7, 3))]);
        let builder = AgentBuilder::new(model);
        let builder = if stacked {
            builder.add_hook(HookStack::new().with(Curator).with(seen.clone()))
        } else {
            builder.add_hook(Curator).add_hook(seen.clone())
        };
        let response = builder
            .build()
            .prompt("hi")
            .extended_details()
            .await
            .unwrap();
        assert_eq!(response.output, "curated", "stacked: {stacked}");
        assert_eq!(response.state.usage, usage(7, 3), "stacked: {stacked}");
        assert_eq!(*seen.0.lock().unwrap(), [usage(7, 3)], "stacked: {stacked}");
    }
}
