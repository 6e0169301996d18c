//! A tool's `outputSchema`, end to end: a server on the official TypeScript SDK
//! (`fixtures/forecast_server.cjs`) publishes a schema for its tool's structured result and
//! then answers once with a result that matches it, once with one that does not, and once
//! with no structured content. An agent calls the tool through reins: the matching result
//! reaches the model, the mismatch is a classified tool failure naming the tool and what did
//! not match, and the run goes on.

use crate::servers::{connect, sdk_fixture_server};
use reins::agent::{AgentBuilder, AgentHook, HookContext, OutcomeAction, OutcomeEvent};
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{ToolFailure, ToolOutcome};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// Records each tool call's outcome, success or not, as hooks see it.
#[derive(Default)]
struct Outcomes(Arc<Mutex<Vec<ToolOutcome>>>);

impl AgentHook for Outcomes {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(result) = event.tool_outcome() {
            self.0.lock().unwrap().push(result.outcome().clone());
        }
        OutcomeAction::proceed()
    }
}

#[tokio::test]
async fn structured_results_are_checked_against_the_published_output_schema() {
    let client = connect(sdk_fixture_server("forecast_server.cjs", "weather")).await;
    let tools = client.tools().await.unwrap();
    let schema = tools.get("forecast").unwrap().output_schema().cloned();
    assert_eq!(
        schema.as_ref().and_then(|schema| schema.get("required")),
        Some(&json!(["temperature", "city"])),
        "the published outputSchema did not reach the client: {schema:?}"
    );

    let model = ScriptedModel::new([
        Turn::tool_call("forecast", json!({"city": "Paris"})),
        Turn::tool_call("forecast", json!({"city": "Atlantis"})),
        Turn::tool_call("forecast", json!({"city": "Nowhere"})),
        Turn::text("Paris will be warm."),
    ]);
    let outcomes = Outcomes::default();
    let seen = outcomes.0.clone();
    let agent = AgentBuilder::new(model.clone())
        .tools(tools)
        .add_hook(outcomes)
        .build();
    let answer = agent.prompt("Tomorrow's weather?").await.unwrap();
    assert_eq!(answer, "Paris will be warm.");

    let results: Vec<String> = model.requests()[3]
        .history
        .iter()
        .filter(|message| matches!(message, Message::Tool(_)))
        .map(Message::text)
        .collect();
    let [matching, mismatching, unstructured] = results.as_slice() else {
        panic!("expected three tool results, got {results:#?}");
    };
    // The matching structured content reaches the model as JSON.
    let value: Value = serde_json::from_str(matching)
        .unwrap_or_else(|error| panic!("not JSON ({error}): {matching}"));
    assert_eq!(value, json!({"temperature": 21.5, "city": "Paris"}));
    // The mismatch: the model is told which tool of which server broke its schema, and where.
    for part in [
        "MCP server `weather`",
        "tool `forecast`",
        "does not match its outputSchema",
        "is not of type \"number\" (at /temperature)",
        "\"city\" is a required property",
    ] {
        assert!(
            mismatching.contains(part),
            "{part:?} missing in {mismatching}"
        );
    }
    // No structured content at all: the content blocks, as text.
    assert_eq!(unstructured, "no forecast for Nowhere");

    let outcomes = seen.lock().unwrap().clone();
    let [first, second, third] = outcomes.as_slice() else {
        panic!("expected three outcomes, got {outcomes:#?}");
    };
    assert_eq!(first, &ToolOutcome::Success);
    let ToolOutcome::Failed(ToolFailure::Execution { message }) = second else {
        panic!("expected an execution failure, got {second:?}");
    };
    assert!(mismatching.contains(message.as_str()), "{message}");
    assert_eq!(third, &ToolOutcome::Success);
}
