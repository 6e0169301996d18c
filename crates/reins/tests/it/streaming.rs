//! Streamed runs fire the same events as awaited runs, plus the delta events.

use crate::common::{Recorder, add_tool};
use futures::StreamExt;
use reins::agent::*;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::ToolOutcome;
use serde_json::json;
use std::sync::{Arc, Mutex};

fn script() -> Vec<Turn> {
    vec![
        Turn::reasoning("I should add the numbers")
            .then_tool_call("add", json!({"a": 20, "b": 22})),
        Turn::text("The answer is 42, as computed."),
    ]
}

async fn collect(stream: PromptStream) -> Vec<Result<StreamItem, PromptError>> {
    stream.collect().await
}

#[tokio::test]
async fn blocking_and_streaming_fire_the_same_events_in_the_same_order() {
    let blocking = Recorder::default();
    let agent = AgentBuilder::new(ScriptedModel::new(script()))
        .tool(add_tool())
        .add_hook(blocking.clone())
        .build();
    let answer = agent.prompt("20 + 22?").await.unwrap();

    let streaming = Recorder::default();
    let agent = AgentBuilder::new(ScriptedModel::new(script()))
        .tool(add_tool())
        .add_hook(streaming.clone())
        .build();
    let items = collect(agent.prompt("20 + 22?").stream()).await;

    assert_eq!(blocking.without_deltas(), streaming.without_deltas());
    let Some(Ok(StreamItem::Final(response))) = items.last() else {
        panic!("the stream ends with the final response: {items:?}");
    };
    assert_eq!(response.output, answer);

    // Streaming only adds delta events (and the raw stream-finish event).
    let lines = streaming.lines();
    let text_deltas: Vec<_> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("text_delta "))
        .collect();
    assert!(text_deltas.len() > 1, "text arrives in several deltas");
    assert_eq!(text_deltas.concat(), "The answer is 42, as computed.");
    assert!(lines.iter().any(|l| l.starts_with("reasoning_delta")));
    let arg_deltas: Vec<_> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("tool_call_delta "))
        .collect();
    assert_eq!(arg_deltas.concat(), "{\"a\":20,\"b\":22}");
    // A tool-only turn fires no stream-finish; the text turn does.
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("stream_finish"))
            .collect::<Vec<_>>(),
        vec!["stream_finish 2"]
    );
    assert!(!lines.iter().any(|l| l.starts_with("completion_response")));
    // Deltas come before the turn is finished.
    let first_delta = lines
        .iter()
        .position(|l| l.starts_with("text_delta"))
        .unwrap();
    let finished = lines.iter().position(|l| l == "turn_finished 2").unwrap();
    assert!(first_delta < finished);
}

#[tokio::test]
async fn the_stream_yields_deltas_tool_results_and_the_final_response() {
    let agent = AgentBuilder::new(ScriptedModel::new(script()))
        .tool(add_tool())
        .build();
    let items = collect(agent.prompt("20 + 22?").stream()).await;
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut tool_args = String::new();
    let mut results = Vec::new();
    for item in &items {
        match item.as_ref().unwrap() {
            StreamItem::Text(delta) => text.push_str(delta),
            StreamItem::Reasoning(delta) => reasoning.push_str(delta),
            StreamItem::ToolCallDelta { delta, .. } => tool_args.push_str(delta),
            StreamItem::ToolResult {
                tool_name,
                result,
                outcome,
                ..
            } => results.push((tool_name.clone(), result.clone(), outcome.clone())),
            StreamItem::Final(response) => assert_eq!(response.turns(), 2),
            other => panic!("unexpected item {other:?}"),
        }
    }
    assert_eq!(text, "The answer is 42, as computed.");
    assert_eq!(reasoning, "I should add the numbers");
    assert_eq!(tool_args, "{\"a\":20,\"b\":22}");
    assert_eq!(
        results,
        vec![("add".to_string(), "42".to_string(), ToolOutcome::Success)]
    );
}

#[derive(Clone, Default)]
struct Aggregates(Arc<Mutex<Vec<String>>>);
impl AgentHook for Aggregates {
    async fn on_text_delta(
        &self,
        ctx: &HookContext,
        event: TextDeltaEvent<'_>,
    ) -> ObservationAction {
        assert!(ctx.is_streaming());
        self.0.lock().unwrap().push(event.aggregated.to_string());
        if event.aggregated.contains("forbidden") {
            ObservationAction::stop("content policy")
        } else {
            ObservationAction::continue_run()
        }
    }
}

#[tokio::test]
async fn a_delta_hook_sees_the_aggregate_and_can_stop_the_run() {
    let hook = Aggregates::default();
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::text(
        "this is forbidden text that goes on",
    )]))
    .add_hook(hook.clone())
    .build();
    let items = collect(agent.prompt("x").stream()).await;
    assert_eq!(
        *hook.0.lock().unwrap(),
        vec!["this ", "this is ", "this is forbidden "]
    );
    let texts: Vec<_> = items
        .iter()
        .filter_map(|i| match i {
            Ok(StreamItem::Text(t)) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts,
        vec!["this ", "is "],
        "the stopping delta is not handed out"
    );
    // What was shown is withdrawn before the error, as for a stop on the finished turn.
    assert!(
        matches!(
            items.get(items.len().wrapping_sub(2)),
            Some(Ok(StreamItem::TurnDiscarded { turn: 1 }))
        ),
        "{items:?}"
    );
    let Some(Err(PromptError::Cancelled { reason, .. })) = items.last() else {
        panic!("the stream ends with the cancellation: {items:?}");
    };
    assert_eq!(reason, "content policy");
}

#[tokio::test]
async fn a_stream_cut_before_the_end_of_the_turn_is_an_error() {
    use reins::completion::{
        CompletionError, CompletionModel, CompletionRequest, CompletionResponse, CompletionStream,
        StreamChunk,
    };
    struct CutModel;
    impl CompletionModel for CutModel {
        async fn completion(
            &self,
            _request: &CompletionRequest,
        ) -> Result<CompletionResponse, CompletionError> {
            Err(CompletionError::Other("streaming only".into()))
        }
        async fn stream(
            &self,
            _request: &CompletionRequest,
        ) -> Result<CompletionStream, CompletionError> {
            Ok(Box::pin(futures::stream::iter([Ok(StreamChunk::Text(
                "partial".into(),
            ))])))
        }
    }
    let agent = AgentBuilder::new(CutModel).build();
    let items = collect(agent.prompt("x").stream()).await;
    let Some(Err(PromptError::Completion { source, .. })) = items.last() else {
        panic!("expected an error: {items:?}");
    };
    assert!(
        source
            .to_string()
            .contains("ended before the model finished"),
        "{source}"
    );
}

#[tokio::test]
async fn a_model_without_streaming_still_streams() {
    use reins::completion::{
        CompletionError, CompletionModel, CompletionRequest, CompletionResponse,
    };
    use reins::message::{AssistantContent, OneOrMany};
    struct Plain;
    impl CompletionModel for Plain {
        async fn completion(
            &self,
            _request: &CompletionRequest,
        ) -> Result<CompletionResponse, CompletionError> {
            Ok(CompletionResponse::new(OneOrMany::one(
                AssistantContent::text("whole"),
            )))
        }
    }
    let agent = AgentBuilder::new(Plain).build();
    let items = collect(agent.prompt("x").stream()).await;
    assert!(matches!(&items[0], Ok(StreamItem::Text(t)) if t == "whole"));
    assert!(matches!(items.last(), Some(Ok(StreamItem::Final(r))) if r.output == "whole"));
}

#[tokio::test]
async fn a_repeated_turn_is_withdrawn_from_the_stream() {
    struct RepeatFirst;
    impl AgentHook for RepeatFirst {
        async fn on_model_turn_finished(
            &self,
            ctx: &HookContext,
            _event: ModelTurnFinished<'_>,
        ) -> ModelTurnAction {
            if ctx.turn() == 1 {
                ModelTurnAction::repeat()
            } else {
                ModelTurnAction::continue_run()
            }
        }
    }
    let agent = AgentBuilder::new(ScriptedModel::new([
        Turn::text("draft"),
        Turn::text("final"),
    ]))
    .add_hook(RepeatFirst)
    .build();
    let items = collect(agent.prompt("x").stream()).await;
    let kinds: Vec<String> = items
        .iter()
        .map(|i| match i.as_ref().unwrap() {
            StreamItem::Text(t) => format!("text {t}"),
            StreamItem::TurnDiscarded { turn } => format!("discarded {turn}"),
            StreamItem::Final(r) => format!("final {}", r.output),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        vec!["text draft", "discarded 1", "text final", "final final"]
    );
}

#[tokio::test]
async fn items_reach_the_consumer_as_they_are_produced() {
    let recorder = Recorder::default();
    let agent = AgentBuilder::new(ScriptedModel::new(script()))
        .tool(add_tool())
        .add_hook(recorder.clone())
        .build();
    let mut stream = agent.prompt("20 + 22?").stream();
    let first = stream.next().await.unwrap().unwrap();
    assert!(matches!(first, StreamItem::Reasoning(_)), "{first:?}");
    let lines = recorder.lines();
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("tool_result") || l.starts_with("settled")),
        "the run must not race ahead of its consumer: {lines:?}"
    );
    // Dropping the stream cancels the run: the tool never runs.
    drop(stream);
    assert!(
        !recorder
            .lines()
            .iter()
            .any(|l| l.starts_with("tool_result"))
    );
}

/// Counts the text deltas the run has produced (its hook sees each one as it is made).
#[derive(Clone, Default)]
struct DeltaCounter(Arc<Mutex<usize>>);

impl AgentHook for DeltaCounter {
    async fn on_text_delta(
        &self,
        _ctx: &HookContext,
        _event: TextDeltaEvent<'_>,
    ) -> ObservationAction {
        *self.0.lock().unwrap() += 1;
        ObservationAction::continue_run()
    }
}

#[tokio::test]
async fn a_model_faster_than_its_consumer_does_not_queue_its_whole_turn() {
    // A scripted model streams one delta per word and never waits, like a fast local model.
    let answer: String = (0..1_000).map(|i| format!("w{i} ")).collect();
    let produced = DeltaCounter::default();
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::text(&answer)]))
        .add_hook(produced.clone())
        .build();
    let mut stream = agent.prompt("Talk.").stream();
    let first = stream.next().await.unwrap().unwrap();
    assert!(matches!(first, StreamItem::Text(_)), "{first:?}");
    let ahead = *produced.0.lock().unwrap();
    assert!(
        ahead < 100,
        "the run made {ahead} of 1,000 deltas before the consumer got the first"
    );
    // Nothing is lost on the way: the consumer reads the whole answer, in order.
    let mut text = match first {
        StreamItem::Text(delta) => delta,
        _ => unreachable!(),
    };
    while let Some(item) = stream.next().await {
        if let Ok(StreamItem::Text(delta)) = item {
            text.push_str(&delta);
        }
    }
    assert_eq!(text, answer);
    assert_eq!(*produced.0.lock().unwrap(), 1_000);
}

/// A tool that streams a run of an agent of its own, item by item, while the outer run is
/// streamed too: each stream hands out its own run's items and nothing of the other's.
#[tokio::test]
async fn a_stream_polled_inside_another_streamed_run_keeps_its_items_apart() {
    let inner_texts = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&inner_texts);
    let research = reins::tool::tool_fn(
        "research",
        "Asks a sub-agent.",
        move |_: serde_json::Value| {
            let seen = Arc::clone(&seen);
            async move {
                let inner = AgentBuilder::new(ScriptedModel::new([Turn::text(
                    "inner words streamed one by one",
                )]))
                .build();
                let mut stream = inner.prompt("dig").stream();
                let mut answer = String::new();
                while let Some(item) = stream.next().await {
                    match item {
                        Ok(StreamItem::Text(delta)) => seen.lock().unwrap().push(delta),
                        Ok(StreamItem::Final(response)) => answer = response.output,
                        Ok(_) => {}
                        Err(error) => return Err(error.to_string()),
                    }
                }
                Ok::<_, String>(answer)
            }
        },
    );
    let outer = AgentBuilder::new(ScriptedModel::new([
        Turn::text("outer before ").then_tool_call("research", json!({})),
        Turn::text("outer after"),
    ]))
    .tool(research)
    .build();
    let items = collect(outer.prompt("go").stream()).await;
    let mut outer_text = String::new();
    let mut results = Vec::new();
    for item in &items {
        match item {
            Ok(StreamItem::Text(delta)) => outer_text.push_str(delta),
            Ok(StreamItem::ToolResult { result, .. }) => results.push(result.clone()),
            _ => {}
        }
    }
    assert_eq!(outer_text, "outer before outer after");
    assert_eq!(results, ["inner words streamed one by one"]);
    assert_eq!(
        inner_texts.lock().unwrap().concat(),
        "inner words streamed one by one"
    );
    assert!(matches!(items.last(), Some(Ok(StreamItem::Final(_)))));
}

/// Answers every model call itself, without the model.
struct ServesTheModelCall;
impl AgentHook for ServesTheModelCall {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if event.tool_name().is_some() {
            return DispatchAction::proceed();
        }
        let content = reins::message::OneOrMany::one(reins::message::AssistantContent::text(
            "served by a hook",
        ));
        DispatchAction::respond(reins::completion::CompletionResponse::new(content))
    }
}

/// Records each text delta with the text so far, and stops the run on a delta holding `stop_on`.
#[derive(Clone, Default)]
struct Deltas {
    seen: Arc<Mutex<Vec<(String, String)>>>,
    stop_on: Option<&'static str>,
}
impl AgentHook for Deltas {
    async fn on_text_delta(
        &self,
        _ctx: &HookContext,
        event: TextDeltaEvent<'_>,
    ) -> ObservationAction {
        let seen = (event.delta.to_owned(), event.aggregated.to_owned());
        self.seen.lock().unwrap().push(seen);
        match self.stop_on {
            Some(word) if event.delta.contains(word) => {
                ObservationAction::stop(StopReason::new("a served word"))
            }
            _ => ObservationAction::continue_run(),
        }
    }
}

#[tokio::test]
async fn a_turn_served_by_a_hook_streams_as_one_delta_that_delta_hooks_see() {
    let deltas = Deltas::default();
    let model = ScriptedModel::new([]);
    let agent = AgentBuilder::new(model.clone())
        .add_hook(ServesTheModelCall)
        .add_hook(deltas.clone())
        .build();
    let items = collect(agent.prompt("hi").stream()).await;
    let texts: Vec<_> = items
        .iter()
        .filter_map(|item| match item {
            Ok(StreamItem::Text(delta)) => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["served by a hook"]);
    assert!(
        matches!(items.last(), Some(Ok(StreamItem::Final(r))) if r.output == "served by a hook")
    );
    let both = "served by a hook".to_owned();
    assert_eq!(*deltas.seen.lock().unwrap(), [(both.clone(), both)]);
    assert!(model.requests().is_empty(), "the model was never called");

    let stopping = Deltas {
        stop_on: Some("served"),
        ..Deltas::default()
    };
    let agent = AgentBuilder::new(ScriptedModel::new([]))
        .add_hook(ServesTheModelCall)
        .add_hook(stopping)
        .build();
    let items = collect(agent.prompt("hi").stream()).await;
    assert!(
        matches!(items.last(), Some(Err(PromptError::Cancelled { .. }))),
        "{:?}",
        items.last()
    );
    assert!(
        !items
            .iter()
            .any(|item| matches!(item, Ok(StreamItem::Text(_))))
    );
}
