//! The text of a tool's result that hooks read (`ToolResult::output_text`, the step view's
//! `ToolResult::result`) is the text the model is sent, before and after a hook rewrites it.

use reins::agent::*;
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{ToolOutput, tool_fn};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

/// What the hooks of one run saw, in the order they saw it.
type Seen = Arc<Mutex<Vec<String>>>;

/// Records the text of every tool result it sees.
struct ReadsText(Seen);

impl AgentHook for ReadsText {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(result) = event.tool_outcome() {
            self.0
                .lock()
                .unwrap()
                .push(format!("text {}", result.output_text()));
        }
        OutcomeAction::proceed()
    }
}

/// Records the result text of every `ToolResult` step.
struct WatchesSteps(Seen);

impl AgentHook for WatchesSteps {
    async fn on_event(&self, _ctx: &HookContext, event: StepEvent<'_>) -> Flow {
        if let StepEvent::ToolResult { result, .. } = event {
            self.0.lock().unwrap().push(format!("step {result}"));
        }
        Flow::Continue
    }
}

/// Replaces a tool's output with another JSON value.
struct ReplacesOutput(Value);

impl AgentHook for ReplacesOutput {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        OutcomeAction::rewrite_tool_output(&event, ToolOutput::Json(self.0.clone()))
    }
}

/// A model that calls `lookup` once, then answers; and the tool, which answers `answer`.
fn agent_parts(answer: Value) -> (ScriptedModel, AgentBuilder) {
    let model = ScriptedModel::new([
        Turn::tool_call("lookup", json!({"id": 7})),
        Turn::text("done"),
    ]);
    let lookup = tool_fn("lookup", "Looks a record up.", move |_: Value| {
        let answer = answer.clone();
        async move { Ok::<_, Infallible>(answer) }
    });
    let builder = AgentBuilder::new(model.clone()).tool(lookup);
    (model, builder)
}

/// The text of the tool message the model was sent with its second request.
fn sent_tool_text(model: &ScriptedModel) -> String {
    let requests = model.requests();
    match requests[1].history.last() {
        Some(message @ Message::Tool(_)) => message.text(),
        other => panic!("the last message sent is not a tool result: {other:?}"),
    }
}

#[tokio::test]
async fn hooks_read_the_json_text_the_model_is_sent() {
    let answer = json!({"name": "Ada \"the first\"", "tags": ["a", "b"], "n": 1.5});
    let seen = Seen::default();
    let (model, builder) = agent_parts(answer.clone());
    let agent = builder
        .add_hook(ReadsText(seen.clone()))
        .add_hook(WatchesSteps(seen.clone()))
        .add_hook(ReadsText(seen.clone()))
        .build();
    agent.prompt("Who is 7?").await.unwrap();

    let text = serde_json::to_string(&answer).unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            format!("text {text}"),
            format!("step {text}"),
            format!("text {text}")
        ]
    );
    assert_eq!(sent_tool_text(&model), text);
}

#[tokio::test]
async fn after_a_rewrite_hooks_and_the_model_read_the_new_text() {
    let seen = Seen::default();
    let masked = json!({"secret": "***", "masked": true});
    let (model, builder) = agent_parts(json!({"secret": "hunter2"}));
    let agent = builder
        // Reads (and so has written) the tool's own text first.
        .add_hook(ReadsText(seen.clone()))
        .add_hook(ReplacesOutput(masked.clone()))
        .add_hook(WatchesSteps(seen.clone()))
        .add_hook(ReadsText(seen.clone()))
        .build();
    agent.prompt("Show me the secret.").await.unwrap();

    let masked = serde_json::to_string(&masked).unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            r#"text {"secret":"hunter2"}"#.to_owned(),
            format!("step {masked}"),
            format!("text {masked}")
        ]
    );
    assert_eq!(sent_tool_text(&model), masked);
}

#[tokio::test]
async fn a_rewrite_nobody_reads_still_reaches_the_model() {
    let seen = Seen::default();
    let (model, builder) = agent_parts(json!([1, 2, 3]));
    let agent = builder
        .add_hook(ReadsText(seen.clone()))
        .add_hook(ReplacesOutput(json!({"sum": 6})))
        .build();
    agent.prompt("Add them.").await.unwrap();

    assert_eq!(*seen.lock().unwrap(), ["text [1,2,3]"]);
    assert_eq!(sent_tool_text(&model), r#"{"sum":6}"#);
}
