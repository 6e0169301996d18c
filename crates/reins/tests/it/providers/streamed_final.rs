//! What a provider streams is what the run acts on: a hook acting on `on_text_delta` or
//! `on_tool_call_delta`, a streaming UI and the step view's deltas must see the answer the
//! run then executes, not something else the final event carries.

use crate::providers::fixtures::anthropic::{self, Messages};
use crate::providers::fixtures::responses::{self, Responses, call_item, message_item};
use crate::providers::fixtures::{Fixture, Settings, model_at};
use crate::providers::hostile::{Hostile, Reply};
use crate::providers::support::{drain, prompt, streamed_text, within};
use reins::completion::{CompletionError, CompletionResponse, StreamChunk, parse_arguments};
use reins::providers::RetryPolicy;
use serde_json::{Value, json};

/// The chunks and the end of one streamed turn from a server answering `events`.
async fn stream<F: Fixture>(
    events: &[String],
) -> (
    Vec<StreamChunk>,
    Result<CompletionResponse, CompletionError>,
) {
    let reply = Reply::fixed(
        200,
        &[("content-type", "text/event-stream")],
        events.concat(),
    );
    let server = Hostile::always(reply).await;
    let settings = Settings::default().retry(RetryPolicy::none());
    let model = model_at::<F>(&server.url(), &settings);
    within(30, drain(&model, &prompt("Tidy up the drafts."))).await
}

/// Each streamed call, in the order it started: its id, the name it was announced with, and
/// its argument fragments joined.
fn streamed_calls(chunks: &[StreamChunk]) -> Vec<(String, String, String)> {
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for chunk in chunks {
        let StreamChunk::ToolCall { id, name, delta } = chunk else {
            continue;
        };
        match calls.iter_mut().find(|call| &call.0 == id) {
            Some(call) => {
                if let Some(name) = name {
                    call.1.clone_from(name);
                }
                call.2.push_str(delta);
            }
            None => calls.push((id.clone(), name.clone().unwrap_or_default(), delta.clone())),
        }
    }
    calls
}

/// The calls the run acts on, as `streamed_calls` lists them, with their arguments as values.
fn answered_calls(response: &CompletionResponse) -> Vec<(String, String, Value)> {
    response
        .tool_calls()
        .map(|call| (call.id.clone(), call.name.clone(), call.arguments.clone()))
        .collect()
}

/// The streamed calls with their arguments read as the run reads them.
fn streamed_as_read(chunks: &[StreamChunk]) -> Vec<(String, String, Value)> {
    streamed_calls(chunks)
        .into_iter()
        .map(|(id, name, arguments)| (id, name, parse_arguments(&arguments)))
        .collect()
}

fn tool_use_start(index: u64, input: Value) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block":
        {"type": "tool_use", "id": format!("toolu_{index}"), "name": "delete", "input": input}})
}

fn input_delta(index: u64, partial: &str) -> Value {
    json!({"type": "content_block_delta", "index": index,
        "delta": {"type": "input_json_delta", "partial_json": partial}})
}

fn block_stop(index: u64) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

/// A Messages stream: `message_start`, `blocks`, then the `tool_use` stop.
fn messages_stream(blocks: &[Value]) -> Vec<String> {
    let start = anthropic::message("msg_1", json!([]), "tool_use");
    let mut events = vec![json!({"type": "message_start", "message": start})];
    events.extend_from_slice(blocks);
    events.push(
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
        "usage": {"output_tokens": 9}}),
    );
    events.push(json!({"type": "message_stop"}));
    anthropic::events(&events)
}

#[tokio::test]
async fn anthropic_input_given_whole_in_the_block_start_is_streamed() {
    // The second block is never stopped: the message's end streams it too.
    let events = messages_stream(&[
        tool_use_start(0, json!({"path": "a.txt"})),
        block_stop(0),
        tool_use_start(1, json!({"path": "b.txt", "force": true})),
    ]);
    let (chunks, end) = stream::<Messages>(&events).await;
    let response = end.expect("the answer");
    let streamed = streamed_as_read(&chunks);
    assert_eq!(streamed, answered_calls(&response));
    assert_eq!(
        streamed.iter().map(|call| &call.2).collect::<Vec<_>>(),
        [
            &json!({"path": "a.txt"}),
            &json!({"path": "b.txt", "force": true})
        ]
    );
}

#[tokio::test]
async fn anthropic_input_streamed_in_deltas_is_streamed_once() {
    // Anthropic's own shape: `"input": {}` at the start, the input in deltas. A server that
    // gives an input at the start and deltas too is read by its deltas, as they streamed.
    let events = messages_stream(&[
        tool_use_start(0, json!({})),
        input_delta(0, ""),
        input_delta(0, r#"{"path": "#),
        input_delta(0, r#""a.txt"}"#),
        block_stop(0),
        tool_use_start(1, json!({"path": "ignored.txt"})),
        input_delta(1, r#"{"path": "b.txt"}"#),
        block_stop(1),
    ]);
    let (chunks, end) = stream::<Messages>(&events).await;
    let response = end.expect("the answer");
    let calls = streamed_calls(&chunks);
    let texts: Vec<&str> = calls.iter().map(|call| call.2.as_str()).collect();
    assert_eq!(texts, [r#"{"path": "a.txt"}"#, r#"{"path": "b.txt"}"#]);
    assert_eq!(streamed_as_read(&chunks), answered_calls(&response));
}

fn responses_events(events: &[Value]) -> Vec<String> {
    responses::events(events)
}

fn text_delta(index: u64, text: &str) -> Value {
    json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": index,
        "content_index": 0, "delta": text})
}

fn completed(output: Vec<Value>) -> Value {
    json!({"type": "response.completed", "response": responses::response("resp_1", output)})
}

fn assert_disagreement(end: Result<CompletionResponse, CompletionError>, names: &str) {
    let error = end.expect_err("a final output contradicting the stream fails the turn");
    let message = error.to_string();
    assert!(
        matches!(error, CompletionError::Decode(_))
            && message.contains("final output disagrees with what it streamed")
            && message.contains(names),
        "{message}"
    );
}

#[tokio::test]
async fn responses_final_output_replacing_the_streamed_text_with_a_call_fails_the_turn() {
    let events = responses_events(&[
        text_delta(0, "Nothing to do here."),
        completed(vec![call_item(
            "fc_1",
            "call_1",
            "delete",
            r#"{"path": "/"}"#,
        )]),
    ]);
    let (chunks, end) = stream::<Responses>(&events).await;
    assert!(
        streamed_calls(&chunks).is_empty(),
        "no call was announced before the turn failed: {chunks:?}"
    );
    assert_disagreement(end, "Nothing to do here.");
}

#[tokio::test]
async fn responses_final_output_with_other_text_or_arguments_fails_the_turn() {
    let other_text = responses_events(&[
        text_delta(0, "I will not delete anything."),
        completed(vec![message_item("msg_1", "I deleted everything.")]),
    ]);
    let (_, end) = stream::<Responses>(&other_text).await;
    assert_disagreement(end, "I deleted everything.");

    let call = call_item("fc_1", "call_1", "delete", "");
    let other_arguments = responses_events(&[
        json!({"type": "response.output_item.added", "output_index": 0, "item": call}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
            "output_index": 0, "delta": r#"{"path": "draft.txt"}"#}),
        completed(vec![call_item(
            "fc_1",
            "call_1",
            "delete",
            r#"{"path": "/"}"#,
        )]),
    ]);
    let (_, end) = stream::<Responses>(&other_arguments).await;
    assert_disagreement(end, "tool call `call_1`");
}

#[tokio::test]
async fn responses_final_output_adding_to_the_stream_is_streamed_before_the_end() {
    // A server that streams part of the text, then lists the whole answer only at the end.
    let events = responses_events(&[
        text_delta(0, "Deleting "),
        completed(vec![
            message_item("msg_1", "Deleting the draft."),
            call_item("fc_1", "call_1", "delete", r#"{"path":"draft.txt"}"#),
        ]),
    ]);
    let (chunks, end) = stream::<Responses>(&events).await;
    let response = end.expect("the answer");
    assert_eq!(streamed_text(&chunks), "Deleting the draft.");
    assert_eq!(response.text(), "Deleting the draft.");
    assert_eq!(streamed_as_read(&chunks), answered_calls(&response));
    assert_eq!(
        streamed_calls(&chunks),
        [(
            "call_1".to_owned(),
            "delete".to_owned(),
            r#"{"path":"draft.txt"}"#.to_owned()
        )]
    );
}

#[tokio::test]
async fn responses_honest_stream_streams_each_part_once() {
    let events = Responses::tool_calls_stream();
    let (chunks, end) = stream::<Responses>(&events).await;
    let response = end.expect("the answer");
    assert_eq!(streamed_text(&chunks), response.text());
    assert_eq!(streamed_as_read(&chunks), answered_calls(&response));
    assert_eq!(response.tool_calls().count(), 2);
}
