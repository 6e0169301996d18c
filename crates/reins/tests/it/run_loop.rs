//! The agent loop: model call, tool calls, model call again, and the events it fires.

use crate::common::{Recorder, add_tool};
use reins::agent::{AgentBuilder, PromptError};
use reins::completion::{CompletionError, Usage};
use reins::message::{AssistantContent, Message};
use reins::testing::{ScriptedModel, Turn};
use serde_json::json;

#[tokio::test]
async fn a_tool_loop_fires_every_event_in_order() {
    let model = ScriptedModel::new([
        Turn::tool_call("add", json!({"a": 2, "b": 3})),
        Turn::text("The sum is 5."),
    ]);
    let recorder = Recorder::default();
    let agent = AgentBuilder::new(model.clone())
        .tool(add_tool())
        .add_hook(recorder.clone())
        .build();

    let answer = agent.prompt("What is 2 + 3?").await.unwrap();

    assert_eq!(answer, "The sum is 5.");
    assert_eq!(
        recorder.lines(),
        vec![
            "run_start What is 2 + 3?",
            "completion_call 1",
            "completion_dispatch 1 default",
            "completion_response 1",
            "turn_finished 1",
            "tool_call add {\"a\":2,\"b\":3}",
            "tool_result add 5",
            "completion_call 2",
            "completion_dispatch 2 default",
            "completion_response 2",
            "turn_finished 2",
            "settled ok The sum is 5.",
        ]
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1].history.last(),
        Some(&Message::tool_result("call_1_0", "add", "5"))
    );
}

#[tokio::test]
async fn extended_details_return_history_usage_and_run_id() {
    let model = ScriptedModel::new([
        Turn::tool_call("add", json!({"a": 1, "b": 1})).usage(Usage::new(10, 2)),
        Turn::text("2").usage(Usage::new(15, 1)),
    ]);
    let agent = AgentBuilder::new(model).tool(add_tool()).build();
    let response = agent
        .prompt("1+1?")
        .with_history(vec![Message::user("earlier"), Message::assistant("ok")])
        .extended_details()
        .await
        .unwrap();
    assert_eq!(response.output, "2");
    assert_eq!(response.usage(), Usage::new(25, 3));
    assert_eq!(response.turns(), 2);
    assert!(!response.run_id().is_empty());
    let history = response.history();
    assert_eq!(history.len(), 6);
    assert_eq!(history[0], Message::user("earlier"));
    assert_eq!(history[2], Message::user("1+1?"));
    assert_eq!(history[5], Message::assistant("2"));
}

#[tokio::test]
async fn each_run_gets_its_own_id_unless_given_one() {
    let model = ScriptedModel::new([Turn::text("a"), Turn::text("b"), Turn::text("c")]);
    let agent = AgentBuilder::new(model).build();
    let first = agent.prompt("x").extended_details().await.unwrap();
    let second = agent.prompt("x").extended_details().await.unwrap();
    assert_ne!(first.run_id(), second.run_id());
    let named = agent
        .prompt("x")
        .run_id("order-42")
        .extended_details()
        .await
        .unwrap();
    assert_eq!(named.run_id(), "order-42");
}

#[tokio::test]
async fn max_turns_counts_model_calls_and_keeps_the_history() {
    let model = ScriptedModel::new([
        Turn::tool_call("add", json!({"a": 1, "b": 1})),
        Turn::tool_call("add", json!({"a": 2, "b": 2})),
        Turn::text("never reached"),
    ]);
    let agent = AgentBuilder::new(model.clone()).tool(add_tool()).build();
    let error = agent.prompt("loop").max_turns(2).await.unwrap_err();
    let PromptError::MaxTurns {
        max_turns, history, ..
    } = error
    else {
        panic!("expected MaxTurns, got {error:?}");
    };
    assert_eq!(max_turns, 2);
    assert_eq!(model.requests().len(), 2);
    // The second turn's calls are not executed: no model call is left to read them.
    assert!(matches!(history.last(), Some(Message::Assistant { .. })));
    assert_eq!(history.len(), 4);
}

#[tokio::test]
async fn a_model_error_ends_the_run_with_the_history() {
    let model = ScriptedModel::new([
        Turn::tool_call("add", json!({"a": 1, "b": 1})),
        Turn::error(CompletionError::Http {
            status: 500,
            body: "overloaded".into(),
        }),
    ]);
    let agent = AgentBuilder::new(model).tool(add_tool()).build();
    let error = agent.prompt("x").await.unwrap_err();
    let PromptError::Completion {
        source, history, ..
    } = &error
    else {
        panic!("expected a completion error, got {error:?}");
    };
    assert!(matches!(source, CompletionError::Http { status: 500, .. }));
    assert_eq!(history.len(), 3);
    assert!(error.to_string().contains("overloaded"));
}

#[tokio::test]
async fn an_exhausted_script_is_an_error_not_a_panic() {
    let model = ScriptedModel::new([]);
    let agent = AgentBuilder::new(model).build();
    let error = agent.prompt("x").await.unwrap_err();
    let PromptError::Completion {
        source: CompletionError::Other(message),
        ..
    } = error
    else {
        panic!("expected a completion error, got {error:?}");
    };
    assert!(
        message.contains("no turn left") && message.contains("turn 1"),
        "{message}"
    );
}

#[tokio::test]
async fn reasoning_and_text_are_kept_in_the_history() {
    let model = ScriptedModel::new([Turn::reasoning("thinking").then_text("answer")]);
    let agent = AgentBuilder::new(model).build();
    let response = agent.prompt("q").extended_details().await.unwrap();
    assert_eq!(response.output, "answer");
    let Some(Message::Assistant { content }) = response.history().last() else {
        panic!("no assistant message");
    };
    assert_eq!(content.first(), &AssistantContent::reasoning("thinking"));
}

#[tokio::test]
async fn runs_are_send_and_can_be_spawned() {
    let model = ScriptedModel::new([Turn::text("spawned")]);
    let agent = AgentBuilder::new(model).build();
    let handle = tokio::spawn(agent.prompt("x").into_future());
    assert_eq!(handle.await.unwrap().unwrap(), "spawned");
}

#[tokio::test]
async fn the_request_carries_the_agent_settings() {
    let model = ScriptedModel::new([Turn::text("ok")]);
    let agent = AgentBuilder::new(model.clone())
        .preamble("Be terse.")
        .temperature(0.3)
        .max_tokens(64)
        .additional_params(json!({"seed": 7}))
        .context(reins::message::Document::new("d1", "doc text"))
        .tool(add_tool())
        .build();
    agent.prompt("x").await.unwrap();
    let request = &model.requests()[0];
    assert_eq!(request.preamble.as_deref(), Some("Be terse."));
    assert_eq!(request.temperature, Some(0.3));
    assert_eq!(request.max_tokens, Some(64));
    assert_eq!(request.additional_params, Some(json!({"seed": 7})));
    assert_eq!(request.documents.len(), 1);
    assert_eq!(request.tool_names().collect::<Vec<_>>(), vec!["add"]);
    assert_eq!(
        request.tools[0].parameters["properties"]["a"]["type"],
        "integer"
    );
}

use std::future::IntoFuture;
