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

/// Keeps every finished tool call an outcome hook sees, owned, to look at after the run.
#[derive(Clone, Default)]
struct Finished(Arc<Mutex<Vec<ToolResult<'static>>>>);

impl AgentHook for Finished {
    async fn on_outcome(&self, _: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(result) = event.tool_outcome() {
            self.0.lock().unwrap().push(result.clone().into_owned());
        }
        OutcomeAction::proceed()
    }
}

#[tokio::test]
async fn an_outcome_hook_sees_the_call_as_it_ran_and_the_history_keeps_the_models_call() {
    let model = ScriptedModel::new([
        Turn::tool_call_with_id("call-1", "add", json!({"a": 2, "b": 3})),
        Turn::tool_call_with_id("call-2", "add", json!({"a": 1, "b": 5})),
        Turn::text("done"),
    ]);
    let finished = Finished::default();
    let agent = AgentBuilder::new(model.clone())
        .tool(add_tool())
        .add_hook(DoubleA)
        .add_hook(finished.clone())
        .build();
    let response = agent.prompt("add").extended_details().await.unwrap();

    let finished = finished.0.lock().unwrap();
    // The first call ran with the rewrite, and its result says so, as text and as a type.
    assert_eq!(finished[0].tool_name(), "add");
    assert_eq!(finished[0].tool_call_id(), "call-1");
    assert_eq!(finished[0].args(), r#"{"a":4,"b":3}"#);
    assert_eq!(finished[0].args_as::<Add>().unwrap(), Add { a: 4, b: 3 });
    assert_eq!(finished[1].tool_call_id(), "call-2");
    assert_eq!(finished[1].args(), r#"{"a":2,"b":5}"#);
    assert!(finished[1].args_as::<String>().is_err());
    assert_ne!(
        finished[0].internal_call_id(),
        finished[1].internal_call_id()
    );

    // The history keeps each call as the model made it, each answered under its own id.
    let history = response.history();
    let calls: Vec<_> = history.iter().flat_map(|m| m.tool_calls()).collect();
    assert_eq!(calls[0].id, "call-1");
    assert_eq!(calls[0].name, "add");
    assert_eq!(calls[0].arguments, json!({"a": 2, "b": 3}));
    assert_eq!(calls[1].arguments, json!({"a": 1, "b": 5}));
    let answered: Vec<_> = history
        .iter()
        .filter_map(|m| match m {
            reins::message::Message::Tool(result) => {
                Some((result.tool_call_id.as_str(), result.tool_name.as_str()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(answered, [("call-1", "add"), ("call-2", "add")]);
}

/// Rewrites every call's arguments to `to`.
struct RewriteTo(serde_json::Value);

impl AgentHook for RewriteTo {
    async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        DispatchAction::rewrite_tool_args(event.kind, self.0.clone())
    }
}

/// Arguments a hook rewrote to something other than an object (the model's own would make the
/// call invalid) never reach the tool: the call is answered as not run; a later hook that
/// rewrites them to an object again wins, as rewrites chain.
#[tokio::test]
async fn arguments_rewritten_to_something_other_than_an_object_are_not_run() {
    for (hooks, ran) in [
        (vec![RewriteTo(json!("two and three"))], false),
        (
            vec![RewriteTo(json!([2, 3])), RewriteTo(json!({"a": 2, "b": 3}))],
            true,
        ),
    ] {
        let model = ScriptedModel::new([
            Turn::tool_call("add", json!({"a": 2, "b": 3})),
            Turn::text("done"),
        ]);
        let mut builder = AgentBuilder::new(model.clone()).tool(add_tool());
        for hook in hooks {
            builder = builder.add_hook(hook);
        }
        builder.build().prompt("add").await.unwrap();
        let answer = model.requests()[1].history.last().unwrap().text();
        if ran {
            assert_eq!(answer, "5");
        } else {
            assert!(answer.contains("other than a JSON object"), "{answer}");
        }
    }
}
