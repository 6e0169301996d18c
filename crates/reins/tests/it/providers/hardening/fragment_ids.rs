//! A tool call's id comes with every fragment of its arguments a stream hands out: a server
//! giving one call a huge id, then its arguments a byte at a time, must not make reins hand
//! out (and copy) that id once per byte. What a stream hands out stays within the body limit.

use crate::providers::fixtures::anthropic::{self, Messages};
use crate::providers::fixtures::chat::{self, Chat};
use crate::providers::fixtures::responses::{self, Responses};
use crate::providers::fixtures::{Fixture, Settings, data_event, model_at};
use crate::providers::hostile::{Hostile, Reply};
use crate::providers::support::{drain, prompt, within};
use reins::completion::{CompletionError, StreamChunk};
use reins::providers::{Limits, RetryPolicy};
use serde_json::{Value, json};

const LIMIT: usize = 1024 * 1024;

/// An id of a quarter of the limit: each event carrying it fits, and four copies reach it.
fn huge_id() -> String {
    "i".repeat(LIMIT / 4)
}

/// Fragments of one call's arguments, each a byte: far fewer bytes than the limit on the
/// wire, forty ids' worth handed out.
const FRAGMENTS: usize = 40;

/// Streams `events` to a model of `F` whose body limit is [`LIMIT`]; asserts the stream ends
/// `TooLarge` before the bytes of the tool-call chunks it handed out pass the limit.
async fn assert_handed_out_within_the_limit<F: Fixture>(events: &[String]) {
    let reply = Reply::events(events).finish();
    let server = Hostile::always(reply).await;
    let limits = Limits {
        body: LIMIT,
        event: LIMIT,
        line: LIMIT,
    };
    let settings = Settings::default()
        .retry(RetryPolicy::none())
        .limits(limits);
    let model = model_at::<F>(&server.url(), &settings);
    let (chunks, end) = within(30, drain(&model, &prompt("hi"))).await;
    let handed_out: usize = chunks
        .iter()
        .map(|chunk| match chunk {
            StreamChunk::ToolCall { id, name, delta } => {
                id.len() + delta.len() + name.as_ref().map_or(0, String::len)
            }
            _ => 0,
        })
        .sum();
    assert!(handed_out <= LIMIT, "{handed_out} bytes handed out");
    match end {
        Err(CompletionError::TooLarge { limit, .. }) => assert_eq!(limit, LIMIT),
        other => panic!("expected TooLarge, got {other:?}"),
    }
}

#[tokio::test]
async fn a_chat_call_of_a_huge_id_streamed_byte_by_byte_is_too_large() {
    let calls = |call: Value| chat::chunk(json!({"tool_calls": [call]}), None);
    let mut events = vec![calls(
        json!({"index": 0, "id": huge_id(), "type": "function",
        "function": {"name": "add", "arguments": ""}}),
    )];
    events
        .extend((0..FRAGMENTS).map(|_| calls(json!({"index": 0, "function": {"arguments": " "}}))));
    events.push(calls(json!({"index": 0, "function": {"arguments": "{}"}})));
    events.push(chat::chunk(json!({}), Some("tool_calls")));
    events.push(data_event("[DONE]"));
    assert_handed_out_within_the_limit::<Chat>(&events).await;
}

#[tokio::test]
async fn an_anthropic_call_of_a_huge_id_streamed_byte_by_byte_is_too_large() {
    let mut start = anthropic::message("msg_1", json!([]), "tool_use");
    start["stop_reason"] = Value::Null;
    let mut events = vec![
        json!({"type": "message_start", "message": start}),
        json!({"type": "content_block_start", "index": 0,
               "content_block": {"type": "tool_use", "id": huge_id(), "name": "add", "input": {}}}),
    ];
    events.extend((0..FRAGMENTS).map(|_| {
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "input_json_delta", "partial_json": " "}})
    }));
    events.push(json!({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "input_json_delta", "partial_json": "{}"}}));
    events.push(json!({"type": "content_block_stop", "index": 0}));
    events.push(json!({"type": "message_stop"}));
    assert_handed_out_within_the_limit::<Messages>(&anthropic::events(&events)).await;
}

#[tokio::test]
async fn a_responses_call_of_a_huge_id_streamed_byte_by_byte_is_too_large() {
    let mut item = responses::call_item("fc_1", &huge_id(), "add", "");
    item["status"] = json!("in_progress");
    let mut events = vec![
        json!({"type": "response.output_item.added", "output_index": 0,
                                 "item": item}),
    ];
    events.extend((0..FRAGMENTS).map(|_| {
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
               "output_index": 0, "delta": " "})
    }));
    let done = responses::call_item("fc_1", "call_1", "add", "{}");
    let completed = responses::response("resp_1", vec![done]);
    events.push(json!({"type": "response.completed", "response": completed}));
    assert_handed_out_within_the_limit::<Responses>(&responses::events(&events)).await;
}
