//! An answer of more parts (content blocks, output items, tool calls) than reins takes is an
//! error, streamed or whole: each streamed event finds its part among those before it, so a
//! server opening parts without end would make every event cost more, and each tool call is
//! one the agent would run.

use crate::providers::fixtures::anthropic::{self, Messages};
use crate::providers::fixtures::chat::{self, Chat};
use crate::providers::fixtures::gemini::{self, Google};
use crate::providers::fixtures::responses::{self, Responses};
use crate::providers::fixtures::{Fixture, Settings, data_event, model_at};
use crate::providers::hostile::{Hostile, Reply};
use crate::providers::support::{drain, prompt, within};
use reins::completion::{CompletionError, CompletionModel, StreamChunk};
use reins::providers::RetryPolicy;
use serde_json::{Value, json};

/// More parts than an answer may have (512).
const TOO_MANY: usize = 600;

fn settings() -> Settings {
    Settings::default().retry(RetryPolicy::none())
}

fn assert_too_many_parts(end: Result<impl std::fmt::Debug, CompletionError>) {
    match end {
        Err(CompletionError::Decode(message)) => {
            assert!(message.contains("more than 512 parts"), "{message}");
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
}

/// Streams `events` to a model of `F`; asserts the stream ends with the parts error, and
/// that no more than 512 tool calls reached the caller before it.
async fn assert_streamed_parts_are_bounded<F: Fixture>(events: &[String]) {
    let reply = Reply::events(events).finish();
    let server = Hostile::always(reply).await;
    let model = model_at::<F>(&server.url(), &settings());
    let (chunks, end) = within(30, drain(&model, &prompt("hi"))).await;
    let calls = chunks
        .iter()
        .filter(|chunk| matches!(chunk, StreamChunk::ToolCall { name: Some(_), .. }))
        .count();
    assert!(calls <= 512, "{calls} calls reached the caller");
    assert_too_many_parts(end);
}

#[tokio::test]
async fn a_chat_event_starting_countless_calls_is_an_error() {
    let calls: Vec<Value> = (0..TOO_MANY)
        .map(|index| {
            json!({"index": index, "id": format!("call_{index}"), "type": "function",
                   "function": {"name": "add", "arguments": "{}"}})
        })
        .collect();
    let events = [
        chat::chunk(json!({"tool_calls": calls}), None),
        chat::chunk(json!({}), Some("tool_calls")),
        data_event("[DONE]"),
    ];
    assert_streamed_parts_are_bounded::<Chat>(&events).await;
}

#[tokio::test]
async fn an_anthropic_stream_of_countless_blocks_is_an_error() {
    let mut start = anthropic::message("msg_1", json!([]), "end_turn");
    start["stop_reason"] = Value::Null;
    let mut events = vec![json!({"type": "message_start", "message": start})];
    events.extend((0..TOO_MANY).map(|index| {
        json!({"type": "content_block_start", "index": index,
               "content_block": {"type": "tool_use", "id": format!("toolu_{index}"),
                                 "name": "add", "input": {}}})
    }));
    events.push(json!({"type": "message_stop"}));
    assert_streamed_parts_are_bounded::<Messages>(&anthropic::events(&events)).await;
}

#[tokio::test]
async fn a_responses_stream_of_countless_items_is_an_error() {
    let mut events: Vec<Value> = (0..TOO_MANY)
        .map(|index| {
            let item = responses::call_item(
                &format!("fc_{index}"),
                &format!("call_{index}"),
                "add",
                "{}",
            );
            json!({"type": "response.output_item.added", "output_index": index, "item": item})
        })
        .collect();
    let completed = responses::response("resp_1", vec![responses::message_item("m", "done")]);
    events.push(json!({"type": "response.completed", "response": completed}));
    assert_streamed_parts_are_bounded::<Responses>(&responses::events(&events)).await;
}

#[tokio::test]
async fn a_gemini_event_of_countless_calls_is_an_error() {
    let parts: Vec<Value> = (0..TOO_MANY)
        .map(|_| json!({"functionCall": {"name": "add", "args": {}}}))
        .collect();
    let events = [gemini::event(&gemini::reply(Value::Array(parts), "STOP"))];
    assert_streamed_parts_are_bounded::<Google>(&events).await;
}

/// A whole (not streamed) chat answer of `count` tool calls.
async fn chat_answer_of(count: usize) -> Result<usize, CompletionError> {
    let calls: Vec<Value> = (0..count)
        .map(|index| chat::call(&format!("call_{index}"), "{}"))
        .collect();
    let message = json!({"role": "assistant", "content": null, "tool_calls": calls});
    let server = Hostile::always(Reply::json(&chat::reply(message, "tool_calls"))).await;
    let model = model_at::<Chat>(&server.url(), &settings());
    let response = within(30, model.completion(&prompt("hi"))).await?;
    Ok(response.content.len())
}

#[tokio::test]
async fn a_whole_answer_of_countless_calls_is_an_error_and_one_at_the_limit_is_not() {
    assert_too_many_parts(chat_answer_of(TOO_MANY).await);
    assert_eq!(chat_answer_of(512).await.unwrap(), 512);
}

/// Streams `events` to a model of `F`; asserts the stream ends with the parts error.
async fn assert_streamed_answer_is_refused<F: Fixture>(events: &[String]) {
    let server = Hostile::always(Reply::events(events).finish()).await;
    let model = model_at::<F>(&server.url(), &settings());
    let (_, end) = within(30, drain(&model, &prompt("hi"))).await;
    assert_too_many_parts(end);
}

#[tokio::test]
async fn a_responses_answer_listing_countless_calls_only_at_its_end_is_an_error() {
    // Nothing streamed: every call is in `response.completed`, which the answer is read from.
    let items: Vec<Value> = (0..TOO_MANY)
        .map(|index| {
            responses::call_item(
                &format!("fc_{index}"),
                &format!("call_{index}"),
                "add",
                "{}",
            )
        })
        .collect();
    let completed = responses::response("resp_1", items);
    let events = [json!({"type": "response.completed", "response": completed})];
    assert_streamed_answer_is_refused::<Responses>(&responses::events(&events)).await;
}

#[tokio::test]
async fn a_chat_stream_of_text_and_reasoning_taking_turns_countless_times_is_an_error() {
    // Each change from reasoning to text starts a part of the answer.
    let mut events: Vec<String> = (0..TOO_MANY)
        .map(|_| chat::chunk(json!({"reasoning_content": "r", "content": "t"}), None))
        .collect();
    events.push(chat::chunk(json!({}), Some("stop")));
    events.push(data_event("[DONE]"));
    assert_streamed_answer_is_refused::<Chat>(&events).await;
}
