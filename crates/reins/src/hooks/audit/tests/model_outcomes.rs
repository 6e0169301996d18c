//! One outcome line per model call, whichever hook before the log decided the call's outcome.

use super::*;
use crate::completion::CompletionResponse;
use crate::hooks::fallback::ModelFallback;
use crate::message::{AssistantContent, OneOrMany};

/// The model lines: (event, turn, model, outcome).
fn model_lines(lines: &[Value]) -> Vec<(String, u64, String, String)> {
    lines
        .iter()
        .filter(|line| line["kind"] == "model")
        .map(|line| {
            let text = |key: &str| line[key].as_str().unwrap_or_default().to_owned();
            let turn = line["turn"].as_u64().unwrap();
            (text("event"), turn, text("model"), text("outcome"))
        })
        .collect()
}

fn line(event: &str, turn: u64, model: &str, outcome: &str) -> (String, u64, String, String) {
    (event.into(), turn, model.into(), outcome.into())
}

/// A primary model that times out, a backup that answers, and the log before or after the
/// fallback.
async fn fallback_run(log_first: bool) -> Vec<Value> {
    let buffer = Buffer::default();
    let primary = ScriptedModel::new([Turn::error(CompletionError::Timeout("slow".into()))]);
    let backup = ScriptedModel::new([Turn::text("ok")]);
    let mut builder = AgentBuilder::new(primary).named_model("backup", backup);
    if log_first {
        builder = builder.add_hook(AuditLog::new(buffer.clone()));
    }
    builder = builder.add_hook(ModelFallback::new(["default", "backup"]));
    if !log_first {
        builder = builder.add_hook(AuditLog::new(buffer.clone()));
    }
    let answer = builder.build().prompt("go").await.unwrap();
    assert_eq!(answer, "ok");
    buffer.lines()
}

#[tokio::test]
async fn a_call_a_fallback_before_the_log_retried_gets_a_retried_line() {
    let lines = fallback_run(false).await;
    assert_eq!(
        model_lines(&lines),
        [
            line("dispatch", 1, "default", ""),
            line("outcome", 1, "default", "retried"),
            line("dispatch", 1, "backup", ""),
            line("outcome", 1, "backup", "success"),
        ]
    );
    assert!(lines[1]["message"].as_str().unwrap().contains("`backup`"));
}

#[tokio::test]
async fn a_call_a_fallback_after_the_log_retried_gets_its_failed_line() {
    let lines = fallback_run(true).await;
    assert_eq!(
        model_lines(&lines),
        [
            line("dispatch", 1, "default", ""),
            line("outcome", 1, "default", "failed"),
            line("dispatch", 1, "backup", ""),
            line("outcome", 1, "backup", "success"),
        ]
    );
    assert!(lines[1]["message"].as_str().unwrap().contains("slow"));
}

/// Serves a failed call's turn with its own answer.
struct ServeFailures;

impl AgentHook for ServeFailures {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if event.completion_error().is_some() {
            OutcomeAction::replace(CompletionResponse::new(OneOrMany::one(
                AssistantContent::text("served"),
            )))
        } else {
            OutcomeAction::proceed()
        }
    }
}

#[tokio::test]
async fn a_failed_call_a_hook_before_the_log_served_gets_a_replaced_line() {
    let buffer = Buffer::default();
    let model = ScriptedModel::new([Turn::error(CompletionError::Other("down".into()))]);
    let answer = AgentBuilder::new(model)
        .add_hook(ServeFailures)
        .add_hook(AuditLog::new(buffer.clone()))
        .build()
        .prompt("go")
        .await
        .unwrap();
    assert_eq!(answer, "served");
    assert_eq!(
        model_lines(&buffer.lines()),
        [
            line("dispatch", 1, "default", ""),
            line("outcome", 1, "default", "replaced"),
        ]
    );
}

/// Sends every model call's turn to a label no model is registered under.
struct RetryNowhere;

impl AgentHook for RetryNowhere {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        OutcomeAction::retry_on(if event.model().is_some() {
            "nowhere"
        } else {
            ""
        })
    }
}

/// Stops the run on every model call's outcome.
struct StopOnOutcome;

impl AgentHook for StopOnOutcome {
    async fn on_outcome(&self, _ctx: &HookContext, _event: OutcomeEvent<'_>) -> OutcomeAction {
        OutcomeAction::stop("enough")
    }
}

#[tokio::test]
async fn a_call_whose_retry_never_reached_the_log_is_written_when_the_run_ends() {
    let buffer = Buffer::default();
    let result = AgentBuilder::new(ScriptedModel::new([Turn::text("hello")]))
        .add_hook(RetryNowhere)
        .add_hook(AuditLog::new(buffer.clone()))
        .build()
        .prompt("go")
        .await;
    assert!(result.is_err());
    assert_eq!(
        model_lines(&buffer.lines()),
        [
            line("dispatch", 1, "default", ""),
            line("outcome", 1, "default", "retried"),
        ]
    );
}

#[tokio::test]
async fn a_call_a_hook_before_the_log_stopped_on_gets_a_stopped_line() {
    let buffer = Buffer::default();
    let result = AgentBuilder::new(ScriptedModel::new([Turn::text("hello")]))
        .add_hook(StopOnOutcome)
        .add_hook(AuditLog::new(buffer.clone()))
        .build()
        .prompt("go")
        .await;
    assert!(matches!(result, Err(PromptError::Cancelled { .. })));
    let lines = buffer.lines();
    assert_eq!(
        model_lines(&lines),
        [
            line("dispatch", 1, "default", ""),
            line("outcome", 1, "default", "stopped"),
        ]
    );
    assert!(lines[1]["message"].as_str().unwrap().contains("enough"));
}
