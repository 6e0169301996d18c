//! Model calls a hook makes again within a turn: a failed call and its retry on another model
//! are two calls, and a response retried elsewhere has both responses' tokens counted.

use super::*;
use crate::agent::{OutcomeAction, OutcomeEvent, StepEventKind};
use crate::completion::CompletionError;
use crate::hooks::fallback::ModelFallback;

fn timeout() -> Turn {
    Turn::error(CompletionError::Timeout("no first byte".into()))
}

/// Sends every response of the default model to `backup` instead.
struct SecondOpinion;

impl AgentHook for SecondOpinion {
    fn observes(&self, kind: StepEventKind) -> bool {
        kind == StepEventKind::CompletionOutcome
    }
    async fn on_outcome(&self, _: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        match (event.model(), event.completion()) {
            (Some("default"), Some(_)) => OutcomeAction::retry_on("backup"),
            _ => OutcomeAction::proceed(),
        }
    }
}

#[tokio::test]
async fn a_failed_call_and_its_retry_on_another_model_are_two_calls_in_either_order() {
    for budget_first in [true, false] {
        let backup = ScriptedModel::new([Turn::text("from backup")]);
        let builder = AgentBuilder::new(ScriptedModel::new([timeout()]))
            .named_model("backup", backup.clone());
        let budget = Budget::new().max_model_calls(1);
        let fallback = ModelFallback::new(["default", "backup"]);
        let builder = if budget_first {
            builder.add_hook(budget).add_hook(fallback)
        } else {
            builder.add_hook(fallback).add_hook(budget)
        };
        let error = builder.build().prompt("hi").await.unwrap_err();
        let stop = BudgetExceeded::from_error(&error)
            .unwrap_or_else(|| panic!("budget first: {budget_first}: {error}"));
        assert_eq!(
            (stop.limit, stop.used, stop.max),
            (BudgetLimit::ModelCalls, 1.0, 1.0)
        );
        assert!(backup.requests().is_empty(), "budget first: {budget_first}");
    }
}

#[tokio::test]
async fn a_response_retried_on_another_model_has_both_calls_counted() {
    let first = ScriptedModel::new([Turn::text("draft").usage(Usage::new(10, 100))]);
    let backup = ScriptedModel::new([Turn::text("final").usage(Usage::new(20, 200))]);
    let budget = Budget::new().max_model_calls(5);
    let agent = AgentBuilder::new(first)
        .named_model("backup", backup)
        .add_hook(budget.clone())
        .add_hook(SecondOpinion)
        .build();
    let response = agent.prompt("hi").extended_details().await.unwrap();
    assert_eq!(response.output, "final");
    let used = budget.usage_in(&response.state).unwrap();
    assert_eq!(used.model_calls, 2);
    assert_eq!((used.input_tokens, used.output_tokens), (30, 300));
    assert_eq!(used.by_model["default"], Usage::new(10, 100));
    assert_eq!(used.by_model["backup"], Usage::new(20, 200));
}

#[tokio::test]
async fn a_failed_call_counts_once_however_many_budgets_see_it() {
    let backup = ScriptedModel::new([Turn::text("from backup")]);
    let one = Budget::new().max_model_calls(3);
    let other = Budget::new().max_model_calls(3);
    let agent = AgentBuilder::new(ScriptedModel::new([timeout()]))
        .named_model("backup", backup)
        .add_hook(one.clone())
        .add_hook(ModelFallback::new(["default", "backup"]))
        .add_hook(other.clone())
        .build();
    let response = agent.prompt("hi").extended_details().await.unwrap();
    assert_eq!(one.usage_in(&response.state).unwrap().model_calls, 2);
    assert_eq!(other.usage_in(&response.state).unwrap().model_calls, 2);
}
