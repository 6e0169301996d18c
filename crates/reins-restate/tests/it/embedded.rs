//! The same agent-building function runs embedded: `Steps::embedded()` passes model and tool
//! calls straight through, and the run's store journals them as usual.

use reins::agent::{Agent, AgentBuilder};
use reins::store::{MemoryStore, RunStore};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{ToolCallContext, tool_fn};
use reins_restate::Steps;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

fn agent(steps: &Steps, model: ScriptedModel, seen: Arc<Mutex<Vec<String>>>) -> Agent {
    let record = tool_fn("record", "Records an item.", move |args: Value| {
        let seen = Arc::clone(&seen);
        async move {
            let effect_id = ToolCallContext::current()
                .map(|call| call.effect_id())
                .unwrap_or_default();
            seen.lock()
                .map_err(|_| "poisoned")?
                .push(format!("{effect_id} {}", args["item"]));
            Ok::<_, &str>("recorded")
        }
    });
    AgentBuilder::new(steps.model(model))
        .tool(steps.tool(record))
        .build()
}

#[tokio::test]
async fn the_same_agent_runs_embedded_on_a_store() {
    let model = ScriptedModel::new([
        Turn::tool_call("record", json!({"item": "x"})),
        Turn::text("done"),
    ]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let store = MemoryStore::new();
    let answer = agent(&Steps::embedded(), model.clone(), Arc::clone(&seen))
        .prompt("go")
        .run_id("embedded-1")
        .durable(store.clone())
        .await
        .expect("the run completes");
    assert_eq!(answer, "done");
    assert_eq!(*seen.lock().expect("the log"), ["embedded-1/t1c0 \"x\""]);
    assert_eq!(model.requests().len(), 2);
    let kinds: Vec<String> = store
        .journal("embedded-1")
        .await
        .expect("the run's journal")
        .into_iter()
        .map(|entry| format!("{} {}", entry.kind, entry.effect_id))
        .collect();
    assert_eq!(
        kinds,
        [
            "model_turn embedded-1/t1",
            "tool_call_started embedded-1/t1c0",
            "tool_call embedded-1/t1c0",
            "model_turn embedded-1/t2"
        ]
    );
}

#[tokio::test]
async fn recording_a_value_embedded_runs_the_work_each_time() {
    let steps = Steps::embedded();
    assert!(!steps.is_journaled());
    let mut calls = 0;
    for expected in [1, 2] {
        let value: u32 = steps
            .record("counter", || {
                calls += 1;
                let value = calls;
                async move { value }
            })
            .await
            .expect("an embedded record never fails");
        assert_eq!(value, expected);
    }
}

/// A model with names for telemetry, streaming through a scripted model.
struct Named(ScriptedModel);

impl reins::completion::CompletionModel for Named {
    async fn completion(
        &self,
        request: &reins::completion::CompletionRequest,
    ) -> Result<reins::completion::CompletionResponse, reins::completion::CompletionError> {
        self.0.completion(request).await
    }
    async fn stream(
        &self,
        request: &reins::completion::CompletionRequest,
    ) -> Result<reins::completion::CompletionStream, reins::completion::CompletionError> {
        self.0.stream(request).await
    }
    fn model_name(&self) -> Option<&str> {
        Some("named-1")
    }
    fn provider_name(&self) -> Option<&str> {
        Some("scripted")
    }
}

#[tokio::test]
async fn embedded_wrappers_keep_what_the_model_and_tool_say_and_how_the_model_streams() {
    use futures::StreamExt;
    use reins::agent::StreamItem;
    use reins::completion::CompletionModel;
    use reins::tool::{RetrySafety, Tool};

    let steps = Steps::embedded();
    let model = steps.model(Named(ScriptedModel::new([Turn::text("one two three")])));
    assert_eq!(
        (model.model_name(), model.provider_name()),
        (Some("named-1"), Some("scripted"))
    );
    // Streamed as the model streams (a word at a time), not replayed as one chunk.
    let agent = AgentBuilder::new(model).build();
    let deltas = agent
        .prompt("Count.")
        .stream()
        .filter(|item| futures::future::ready(matches!(item, Ok(StreamItem::Text(_)))))
        .count()
        .await;
    assert!(deltas > 1, "{deltas} text deltas");

    // A tool safe to repeat stays so: a durable run runs it again after a crash.
    let fetch = tool_fn("fetch", "Fetches.", |_: Value| async {
        Ok::<_, std::convert::Infallible>("fetched")
    })
    .retry_safety(RetrySafety::Idempotent);
    assert_eq!(steps.tool(fetch).retry_safety(), RetrySafety::Idempotent);
}
