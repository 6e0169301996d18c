//! The outcome lines of calls a run ended before answering.

use super::*;
use crate::agent::{ModelTurnAction, ModelTurnFinished, ToolErrorPolicy};

/// Stops the run at the dispatch of calls to `tool`.
struct StopAt(&'static str);

impl AgentHook for StopAt {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if event.tool_name() == Some(self.0) {
            DispatchAction::stop("the fuse blew")
        } else {
            DispatchAction::proceed()
        }
    }
}

/// Stops the run when a model turn is finished.
struct StopAtTurnEnd;

impl AgentHook for StopAtTurnEnd {
    async fn on_model_turn_finished(
        &self,
        _ctx: &HookContext,
        _event: ModelTurnFinished<'_>,
    ) -> ModelTurnAction {
        ModelTurnAction::stop("not this turn")
    }
}

/// The tool outcome lines: (tool, call id, outcome).
fn tool_outcomes(lines: &[Value]) -> Vec<(String, String, String)> {
    lines
        .iter()
        .filter(|l| l["event"] == "outcome" && l["kind"] == "tool")
        .map(|l| {
            let text = |key: &str| l[key].as_str().unwrap().to_owned();
            (text("tool"), text("call_id"), text("outcome"))
        })
        .collect()
}

fn three_calls() -> ScriptedModel {
    ScriptedModel::new([
        Turn::tool_calls([
            ("read", json!({"path": "a"})),
            ("delete", json!({"path": "b"})),
            ("read", json!({"path": "c"})),
        ]),
        Turn::text("done"),
    ])
}

#[tokio::test]
async fn calls_a_hook_stopped_the_run_on_get_a_stopped_line_even_registered_last() {
    let buffer = Buffer::default();
    let error = AgentBuilder::new(three_calls())
        .tool(echo("read"))
        .tool(echo("delete"))
        .add_hook(StopAt("delete"))
        .add_hook(AuditLog::new(buffer.clone()).with_args())
        .build()
        .prompt("go")
        .await
        .unwrap_err();
    assert!(matches!(error, PromptError::Cancelled { .. }), "{error:?}");
    let lines = buffer.lines();
    assert_eq!(
        tool_outcomes(&lines),
        [
            ("read".into(), "t1c0".into(), "success".into()),
            ("delete".into(), "t1c1".into(), "stopped".into()),
            ("read".into(), "t1c2".into(), "stopped".into()),
        ]
    );
    let stopped = lines.iter().find(|l| l["outcome"] == "stopped").unwrap();
    assert!(
        stopped["message"]
            .as_str()
            .unwrap()
            .contains("the fuse blew"),
        "{stopped}"
    );
    assert_eq!(stopped["args"], json!({"path": "b"}));
    assert_eq!(stopped["turn"], 1);
}

#[tokio::test]
async fn a_turn_stopped_before_its_calls_ran_has_a_stopped_line_per_call() {
    let buffer = Buffer::default();
    let model = ScriptedModel::new([Turn::tool_calls([("read", json!({})), ("read", json!({}))])]);
    let error = AgentBuilder::new(model)
        .tool(echo("read"))
        .add_hook(AuditLog::new(buffer.clone()))
        .add_hook(StopAtTurnEnd)
        .build()
        .prompt("go")
        .await
        .unwrap_err();
    assert!(matches!(error, PromptError::Cancelled { .. }), "{error:?}");
    let lines = buffer.lines();
    assert_eq!(
        tool_outcomes(&lines),
        [
            ("read".into(), "t1c0".into(), "stopped".into()),
            ("read".into(), "t1c1".into(), "stopped".into()),
        ]
    );
    // Without arguments asked for, none are written.
    assert!(lines.iter().all(|l| l.get("args").is_none()));
}

#[tokio::test]
async fn calls_after_a_failure_that_failed_the_run_do_not_quote_it() {
    let buffer = Buffer::default();
    let model = ScriptedModel::new([Turn::tool_calls([
        ("fails", json!({})),
        ("read", json!({})),
    ])]);
    let error = AgentBuilder::new(model)
        .tool(failing())
        .tool(echo("read"))
        .add_hook(AuditLog::new(buffer.clone()))
        .build()
        .prompt("go")
        .tool_errors(ToolErrorPolicy::Fail)
        .await
        .unwrap_err();
    assert!(matches!(error, PromptError::Tool { .. }), "{error:?}");
    let lines = buffer.lines();
    assert_eq!(
        tool_outcomes(&lines),
        [
            ("fails".into(), "t1c0".into(), "failed".into()),
            ("read".into(), "t1c1".into(), "stopped".into()),
        ]
    );
    let stopped = &lines.last().unwrap()["message"];
    assert_eq!(stopped, "the run ended when tool `fails` failed");
}

#[tokio::test]
async fn two_logs_in_one_run_each_write_the_stopped_calls() {
    let (first, second) = (Buffer::default(), Buffer::default());
    let model = ScriptedModel::new([Turn::tool_call("delete", json!({}))]);
    AgentBuilder::new(model)
        .tool(echo("delete"))
        .add_hook(AuditLog::new(first.clone()))
        .add_hook(StopAt("delete"))
        .add_hook(AuditLog::new(second.clone()))
        .build()
        .prompt("go")
        .await
        .unwrap_err();
    for buffer in [first, second] {
        let lines = buffer.lines();
        assert_eq!(
            tool_outcomes(&lines),
            [("delete".into(), "t1c0".into(), "stopped".into())]
        );
    }
}

#[tokio::test]
async fn a_finished_or_suspended_run_writes_no_stopped_line() {
    let buffer = Buffer::default();
    AgentBuilder::new(three_calls())
        .tool(echo("read"))
        .tool(echo("delete"))
        .add_hook(AuditLog::new(buffer.clone()))
        .build()
        .prompt("go")
        .await
        .unwrap();
    let outcomes = tool_outcomes(&buffer.lines());
    assert_eq!(outcomes.len(), 3);
    assert!(outcomes.iter().all(|(_, _, outcome)| outcome == "success"));
}
