//! What a decoder keeps without streaming it (thinking signatures, the input of a block that is
//! not a tool call, call ids, finished items) is bounded like the answer it streams: a server
//! growing such a field without end gets `TooLarge`, not a client that grows with it.
//!
//! Each stream below is otherwise well formed and properly ended, so a client that did not
//! bound the field would return an answer instead.

use crate::providers::fixtures::anthropic::{self, Messages};
use crate::providers::fixtures::chat::{self, Chat};
use crate::providers::fixtures::gemini::{self, Google};
use crate::providers::fixtures::responses::{self, Responses};
use crate::providers::fixtures::{Fixture, Settings, data_event, model_at};
use crate::providers::hostile::{Hostile, Reply};
use crate::providers::support::{drain, prompt, within};
use reins::completion::CompletionError;
use reins::providers::{Limits, RetryPolicy};
use serde_json::{Value, json};
use std::time::Duration;

const LIMIT: usize = 1024 * 1024;

/// A piece of a kept field: 128 of them are twice the limit, each well within an event.
fn piece() -> String {
    "x".repeat(16 * 1024)
}

/// Streams `head`, then `repeated` 128 times, then `tail`, to a model of `F` whose body limit
/// is [`LIMIT`]; asserts the stream ends with `TooLarge` at that limit.
async fn assert_kept_bytes_are_bounded<F: Fixture>(
    head: &[String],
    repeated: &str,
    tail: &[String],
) {
    let reply = Reply::events(head).repeat(repeated.as_bytes(), Duration::ZERO, 128);
    let reply = tail
        .iter()
        .fold(reply, |reply, event| reply.chunk(event.as_bytes()))
        .finish();
    let server = Hostile::always(reply).await;
    let limits = Limits {
        body: LIMIT,
        event: 64 * 1024,
        line: 64 * 1024,
    };
    let settings = Settings::default()
        .retry(RetryPolicy::none())
        .limits(limits);
    let model = model_at::<F>(&server.url(), &settings);
    let (_, end) = within(30, drain(&model, &prompt("hi"))).await;
    match end {
        Err(CompletionError::TooLarge { limit, .. }) => assert_eq!(limit, LIMIT),
        other => panic!("expected TooLarge, got {other:?}"),
    }
}

/// The start of an Anthropic message, and its end.
fn anthropic_frame() -> (Value, Vec<Value>) {
    let mut start = anthropic::message("msg_1", json!([]), "end_turn");
    start["stop_reason"] = Value::Null;
    let end = vec![
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
               "usage": {"output_tokens": 3}}),
        json!({"type": "message_stop"}),
    ];
    (json!({"type": "message_start", "message": start}), end)
}

#[tokio::test]
async fn an_anthropic_thinking_signature_grown_past_the_limit_is_too_large() {
    let (start, end) = anthropic_frame();
    let head = anthropic::events(&[
        start,
        json!({"type": "content_block_start", "index": 0,
               "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
    ]);
    let delta = anthropic::events(&[json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "signature_delta", "signature": piece()}})]);
    assert_kept_bytes_are_bounded::<Messages>(&head, &delta[0], &anthropic::events(&end)).await;
}

#[tokio::test]
async fn anthropic_input_of_a_block_that_is_not_a_tool_call_grown_past_the_limit_is_too_large() {
    let (start, end) = anthropic_frame();
    let head = anthropic::events(&[
        start,
        json!({"type": "content_block_start", "index": 0, "content_block":
               {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}}),
    ]);
    let fragment = format!("\"{}", piece());
    let delta = anthropic::events(&[json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": fragment}})]);
    assert_kept_bytes_are_bounded::<Messages>(&head, &delta[0], &anthropic::events(&end)).await;
}

#[tokio::test]
async fn gemini_thought_signatures_grown_past_the_limit_are_too_large() {
    let signed = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"text": "", "thought": true, "thoughtSignature": piece()}]}}]});
    let last = gemini::reply(json!([{"text": "done"}]), "STOP");
    let tail = [gemini::event(&last)];
    assert_kept_bytes_are_bounded::<Google>(&[], &gemini::event(&signed), &tail).await;
}

#[tokio::test]
async fn responses_finished_items_grown_past_the_limit_are_too_large() {
    // An item of a kind reins does not stream, finished again and again.
    let item = json!({"type": "web_search_call", "id": "ws_1", "status": "completed",
                      "action": {"type": "search", "query": piece()}});
    let done = responses::events(&[json!({"type": "response.output_item.done",
        "output_index": 0, "item": item})]);
    let completed = responses::response("resp_1", vec![responses::message_item("m", "done")]);
    let tail = responses::events(&[json!({"type": "response.completed", "response": completed})]);
    assert_kept_bytes_are_bounded::<Responses>(&[], &done[0], &tail).await;
}

#[tokio::test]
async fn chat_call_ids_grown_past_the_limit_are_too_large() {
    // Calls with long ids and no arguments: nothing streamed counts, every id is kept.
    let head: Vec<String> = (0..128)
        .map(|index| {
            let id = format!("call_{index}_{}", piece());
            chat::chunk(
                json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                       "function": {"arguments": ""}}]}),
                None,
            )
        })
        .collect();
    let tail = [
        chat::chunk(json!({}), Some("tool_calls")),
        data_event("[DONE]"),
    ];
    // `repeat` needs a piece: an empty delta, which adds nothing.
    let nothing = chat::chunk(json!({}), None);
    assert_kept_bytes_are_bounded::<Chat>(&head, &nothing, &tail).await;
}
