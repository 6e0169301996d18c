//! Hooks read tool arguments as typed values, rewrites included.

use crate::common::add_tool;
use reins::agent::*;
use reins::testing::{ScriptedModel, Turn};
use serde::Deserialize;
use serde_json::json;
use std::sync::{Arc, Mutex};

#[derive(Debug, Deserialize, PartialEq)]
struct Add {
    a: i64,
    b: i64,
}

/// Doubles `a` of every `add` call.
struct DoubleA;

impl AgentHook for DoubleA {
    async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.tool_args_as::<Add>() {
            Some(Ok(add)) => {
                DispatchAction::rewrite_tool_args(event.kind, json!({"a": add.a * 2, "b": add.b}))
            }
            _ => DispatchAction::proceed(),
        }
    }
}

/// Keeps what later hooks read.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<String>>>);

impl AgentHook for Seen {
    async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.tool_args_as::<Add>() {
            Some(Ok(add)) => self.0.lock().unwrap().push(format!("dispatch {add:?}")),
            Some(Err(error)) => self.0.lock().unwrap().push(format!("unreadable: {error}")),
            None => {}
        }
        DispatchAction::proceed()
    }
    async fn on_outcome(&self, _: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(Ok(add)) = event.tool_outcome().map(|result| result.args_as::<Add>()) {
            self.0.lock().unwrap().push(format!("ran {add:?}"));
        }
        OutcomeAction::proceed()
    }
}

#[tokio::test]
async fn later_hooks_and_the_outcome_read_rewritten_arguments_as_types() {
    let model = ScriptedModel::new([
        Turn::tool_call("add", json!({"a": 2, "b": 3})),
        Turn::tool_call("add", json!({"a": "two", "b": 3})),
        Turn::text("done"),
    ]);
    let seen = Seen::default();
    let agent = AgentBuilder::new(model.clone())
        .tool(add_tool())
        .add_hook(DoubleA)
        .add_hook(seen.clone())
        .build();
    agent.prompt("add").await.unwrap();
    let seen = seen.0.lock().unwrap();
    assert_eq!(seen[0], "dispatch Add { a: 4, b: 3 }");
    assert_eq!(seen[1], "ran Add { a: 4, b: 3 }");
    assert!(seen[2].starts_with("unreadable: invalid type"), "{seen:?}");
    // The tool ran with the rewritten arguments: the model saw 4 + 3.
    assert_eq!(model.requests()[1].history.last().unwrap().text(), "7");
}
