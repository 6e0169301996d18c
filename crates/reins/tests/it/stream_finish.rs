//! `PromptStream::finish`: a streamed run run to its end for its response, its hooks seeing
//! every delta on the way.

use crate::common::{Recorder, add_tool};
use futures::StreamExt;
use reins::agent::*;
use reins::testing::{ScriptedModel, Turn};
use serde_json::json;

fn script() -> Vec<Turn> {
    vec![
        Turn::tool_call("add", json!({"a": 20, "b": 22})),
        Turn::text("The answer is 42, as computed."),
    ]
}

#[tokio::test]
async fn finish_returns_the_response_and_the_hooks_see_every_delta() {
    let recorder = Recorder::default();
    let agent = AgentBuilder::new(ScriptedModel::new(script()))
        .tool(add_tool())
        .add_hook(recorder.clone())
        .build();

    let response = agent.prompt("20 + 22?").stream().finish().await.unwrap();

    assert_eq!(response.output, "The answer is 42, as computed.");
    assert_eq!(response.turns(), 2);
    let deltas: String = recorder
        .lines()
        .iter()
        .filter_map(|line| line.strip_prefix("text_delta "))
        .collect();
    assert_eq!(deltas, "The answer is 42, as computed.");
}

#[tokio::test]
async fn finish_goes_on_from_the_items_already_taken() {
    let agent = AgentBuilder::new(ScriptedModel::new(script()))
        .tool(add_tool())
        .build();
    let mut stream = agent.prompt("20 + 22?").stream();
    let first = stream.next().await.unwrap().unwrap();
    assert!(!matches!(first, StreamItem::Final(_)), "{first:?}");

    let response = stream.finish().await.unwrap();
    assert_eq!(response.output, "The answer is 42, as computed.");
}

#[tokio::test]
async fn finish_returns_the_runs_error() {
    let agent = AgentBuilder::new(ScriptedModel::new(script()))
        .tool(add_tool())
        .build();

    let error = agent
        .prompt("20 + 22?")
        .max_turns(1)
        .stream()
        .finish()
        .await
        .unwrap_err();

    assert!(
        matches!(error, PromptError::MaxTurns { max_turns: 1, .. }),
        "{error:?}"
    );
    // The prompt and the model's call, which was not run: no model call was left to read it.
    assert_eq!(error.history().map(<[_]>::len), Some(2), "{error:?}");
}

#[tokio::test]
async fn finish_on_a_stream_that_ended_says_so() {
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("Hi.")])).build();
    let mut stream = agent.prompt("Hello?").stream();
    while let Some(item) = stream.next().await {
        item.unwrap();
    }

    let error = stream.finish().await.unwrap_err();
    assert!(matches!(error, PromptError::StreamEnded), "{error:?}");
    assert!(error.to_string().contains("already ended"), "{error}");
}
