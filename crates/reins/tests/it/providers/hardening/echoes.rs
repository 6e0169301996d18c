//! The key echoed where the other secret tests do not look: in a response header an error
//! quotes (the content type), and in tool-call arguments spelled with JSON escapes and split
//! across fragments, so that no fragment holds a form of it the filter knows, while the
//! fragments joined (as whoever acts on the stream joins them) spell it whole.

use crate::providers::fixtures::anthropic::{self, Messages};
use crate::providers::fixtures::chat::{self, Chat};
use crate::providers::fixtures::responses::{self, Responses};
use crate::providers::fixtures::{Fixture, Settings, model_at};
use crate::providers::hostile::{Hostile, Reply};
use crate::providers::support::{call, drain, prompt, within};
use reins::completion::StreamChunk;
use reins::providers::RetryPolicy;
use serde_json::{Value, json};

const LIVE_KEY: &str = "sk-live-XYZ0123456789abcdef";

/// The most an error's text may take, however long the header it quotes.
const MAX_ERROR_TEXT: usize = 16 * 1024;

fn settings() -> Settings {
    Settings::default().key(LIVE_KEY).retry(RetryPolicy::none())
}

pub async fn a_content_type_echoing_the_key_does_not_show_it<F: Fixture>() {
    // A page that is neither JSON nor an event stream: every error quotes its type.
    let content_type = format!("text/html; charset={LIVE_KEY}; pad={}", "x".repeat(40_000));
    let reply = Reply::fixed(200, &[("content-type", content_type.as_str())], "<html>");
    let server = Hostile::always(reply).await;
    let model = model_at::<F>(&server.url(), &settings());
    for stream in [false, true] {
        let error = within(10, call(&model, &prompt("hi"), stream))
            .await
            .unwrap_err();
        let shown = format!("{error} {error:?}");
        assert!(shown.contains("text/html"), "the type still shows: {shown}");
        assert!(!shown.contains(LIVE_KEY), "stream: {stream}: {shown}");
        assert!(shown.len() <= 2 * MAX_ERROR_TEXT, "{} bytes", shown.len());
    }
}

/// The arguments `{"k":"<the key>"}`, its first letter spelled `\u0073`, cut at each of
/// `cuts` (byte offsets into the text): inside the escape, right after it, inside the key.
fn escaped_key_fragments(cut: usize) -> [String; 2] {
    let text = format!(r#"{{"k":"\u0073{}"}}"#, &LIVE_KEY[1..]);
    let (head, tail) = text.split_at(cut);
    [head.to_owned(), tail.to_owned()]
}

/// Offsets into the text of [`escaped_key_fragments`]: `{"k":"` is 6 bytes, the escape 6.
const CUTS: [usize; 4] = [7, 9, 12, 16];

/// Streams `events`; asserts the streamed arguments, joined, hold the key in no spelling,
/// and the answer's neither.
async fn assert_streamed_without_the_key<F: Fixture>(events: &[String]) {
    let server = Hostile::always(Reply::events(events).finish()).await;
    let model = model_at::<F>(&server.url(), &settings());
    let (chunks, end) = within(10, drain(&model, &prompt("hi"))).await;
    let joined: String = chunks
        .iter()
        .filter_map(|chunk| match chunk {
            StreamChunk::ToolCall { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    let parsed: Value = serde_json::from_str(&joined).unwrap_or(Value::String(joined.clone()));
    let shown = format!("{joined} {parsed}");
    assert!(!shown.contains(&LIVE_KEY[1..]), "streamed: {shown}");
    let answer = format!("{:?}", end.unwrap());
    assert!(!answer.contains(&LIVE_KEY[1..]), "{answer}");
}

#[tokio::test]
async fn a_chat_call_streaming_the_key_escaped_and_split_does_not_show_it() {
    for cut in CUTS {
        let events = chat::streamed_call("add", &escaped_key_fragments(cut));
        assert_streamed_without_the_key::<Chat>(&events).await;
    }
}

#[tokio::test]
async fn an_anthropic_call_streaming_the_key_escaped_and_split_does_not_show_it() {
    for cut in CUTS {
        let mut start = anthropic::message("msg_1", json!([]), "tool_use");
        start["stop_reason"] = Value::Null;
        let mut events = vec![
            json!({"type": "message_start", "message": start}),
            json!({"type": "content_block_start", "index": 0, "content_block":
                   {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}}),
        ];
        events.extend(escaped_key_fragments(cut).iter().map(|piece| {
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "input_json_delta", "partial_json": piece}})
        }));
        events.push(json!({"type": "content_block_stop", "index": 0}));
        events.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}));
        events.push(json!({"type": "message_stop"}));
        assert_streamed_without_the_key::<Messages>(&anthropic::events(&events)).await;
    }
}

#[tokio::test]
async fn a_responses_call_streaming_the_key_escaped_and_split_does_not_show_it() {
    for cut in CUTS {
        let mut item = responses::call_item("fc_1", "call_1", "add", "");
        item["status"] = json!("in_progress");
        let mut events = vec![
            json!({"type": "response.output_item.added", "output_index": 0,
                                     "item": item}),
        ];
        events.extend(escaped_key_fragments(cut).iter().map(|piece| {
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
                   "output_index": 0, "delta": piece})
        }));
        // The final output lists the call as it streamed, as OpenAI does.
        let whole = escaped_key_fragments(cut).concat();
        let done = responses::call_item("fc_1", "call_1", "add", &whole);
        let completed = responses::response("resp_1", vec![done]);
        events.push(json!({"type": "response.completed", "response": completed}));
        assert_streamed_without_the_key::<Responses>(&responses::events(&events)).await;
    }
}
