//! Streamed Anthropic turns: every event type (pings, thinking with its signature, redacted
//! thinking, JSON fragments), and what a cut or failing stream reports.

use crate::providers::fixtures::anthropic::{Messages, events};
use crate::providers::fixtures::model_of;
use crate::providers::support::{
    answering, bodies, drain, json_response, parts, prompt, sse_response,
};
use reins::completion::{CompletionError, CompletionModel, StreamChunk, Usage};
use serde_json::{Value, json};

/// Every event type of a streamed turn, and the blocking response with the same content.
fn full_stream() -> (Vec<Value>, Value) {
    let events = vec![
        json!({"type": "message_start", "message": {
            "id": "msg_stream", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": 25, "output_tokens": 1}
        }}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Two sums, "}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "two calls."}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIMsig"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1,
            "content_block": {"type": "redacted_thinking", "data": "EmwKAhgBEgyredacted"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2,
            "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 2,
            "delta": {"type": "text_delta", "text": "Adding "}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_delta", "index": 2,
            "delta": {"type": "text_delta", "text": "both."}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "content_block_start", "index": 3,
            "content_block": {"type": "tool_use", "id": "toolu_a", "name": "add", "input": {}}}),
        json!({"type": "content_block_delta", "index": 3,
            "delta": {"type": "input_json_delta", "partial_json": ""}}),
        json!({"type": "content_block_delta", "index": 3,
            "delta": {"type": "input_json_delta", "partial_json": "{\"a\": 1, "}}),
        json!({"type": "content_block_delta", "index": 3,
            "delta": {"type": "input_json_delta", "partial_json": "\"b\": 2}"}}),
        json!({"type": "content_block_stop", "index": 3}),
        json!({"type": "content_block_start", "index": 4,
            "content_block": {"type": "tool_use", "id": "toolu_b", "name": "add", "input": {}}}),
        json!({"type": "content_block_delta", "index": 4,
            "delta": {"type": "input_json_delta", "partial_json": "{\"a\":3,\"b\":4}"}}),
        json!({"type": "content_block_stop", "index": 4}),
        json!({"type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": null},
            "usage": {"output_tokens": 57}}),
        json!({"type": "message_stop"}),
    ];
    let blocking = json!({
        "id": "msg_stream", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "Two sums, two calls.", "signature": "EqQBCgIYAhIMsig"},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgyredacted"},
            {"type": "text", "text": "Adding both."},
            {"type": "tool_use", "id": "toolu_a", "name": "add", "input": {"a": 1, "b": 2}},
            {"type": "tool_use", "id": "toolu_b", "name": "add", "input": {"a": 3, "b": 4}}
        ],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 25, "output_tokens": 57}
    });
    (events, blocking)
}

#[tokio::test]
async fn a_full_stream_yields_every_fragment_and_ends_as_the_blocking_response() {
    let (stream, blocking) = full_stream();
    let server = answering(sse_response(&events(&stream))).await;
    let (chunks, done) = drain(&model_of::<Messages>(&server.uri()), &prompt("1+2, 3+4?")).await;
    let done = done.unwrap();
    let blocking_server = answering(json_response(blocking)).await;
    let expected = model_of::<Messages>(&blocking_server.uri())
        .completion(&prompt("1+2, 3+4?"))
        .await
        .unwrap();
    assert_eq!(bodies(&server).await[0]["stream"], true);
    assert!(bodies(&blocking_server).await[0].get("stream").is_none());

    assert_eq!(parts(&done), parts(&expected));
    assert_eq!(done.usage, Usage::new(25, 57));
    assert_eq!(done.finish_reason, expected.finish_reason);
    assert_eq!(done.response_id, expected.response_id);
    let (done_raw, expected_raw) = (done.raw.json().unwrap(), expected.raw.json().unwrap());
    assert_eq!(done_raw["content"], expected_raw["content"]);
    assert_eq!(done_raw["usage"], expected_raw["usage"]);

    let deltas: Vec<String> = chunks
        .into_iter()
        .map(|chunk| match chunk {
            StreamChunk::Text(text) => format!("text {text}"),
            StreamChunk::Reasoning(text) => format!("reasoning {text}"),
            StreamChunk::ToolCall { id, name, delta } => format!("call {id} {name:?} {delta}"),
            StreamChunk::Done(_) => "done".to_owned(),
        })
        .collect();
    assert_eq!(
        deltas,
        vec![
            "reasoning Two sums, ",
            "reasoning two calls.",
            "text Adding ",
            "text both.",
            "call toolu_a Some(\"add\") ",
            "call toolu_a None {\"a\": 1, ",
            "call toolu_a None \"b\": 2}",
            "call toolu_b Some(\"add\") ",
            "call toolu_b None {\"a\":3,\"b\":4}",
        ]
    );
}

#[tokio::test]
async fn a_cut_stream_says_how_many_events_and_how_much_text_arrived() {
    let (mut stream, _) = full_stream();
    stream.truncate(13); // through the second text delta
    let server = answering(sse_response(&events(&stream))).await;
    let (_, end) = drain(&model_of::<Messages>(&server.uri()), &prompt("hi")).await;
    let Err(CompletionError::Decode(message)) = end else {
        panic!("a cut stream ends with a decode error: {end:?}");
    };
    assert!(message.contains("13 event(s)"), "{message}");
    assert!(message.contains("text (12 bytes)"), "{message}");
}

#[tokio::test]
async fn a_cut_stream_of_countless_blocks_gives_a_short_error() {
    // A server starts block after block (as many as an answer may have), then cuts the
    // stream: the error names a few.
    let (mut stream, _) = full_stream();
    stream.truncate(1);
    stream.extend((0..500).map(|index| {
        json!({"type": "content_block_start", "index": index,
               "content_block": {"type": "text", "text": ""}})
    }));
    let server = answering(sse_response(&events(&stream))).await;
    let (_, end) = drain(&model_of::<Messages>(&server.uri()), &prompt("hi")).await;
    let message = end.unwrap_err().to_string();
    assert!(message.contains("and 492 more"), "{message}");
    assert!(message.len() < 4096, "{} bytes of error", message.len());
}

#[tokio::test]
async fn an_error_event_mid_stream_is_an_error_naming_it() {
    let (mut stream, _) = full_stream();
    stream.truncate(4);
    stream.push(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    );
    let server = answering(sse_response(&events(&stream))).await;
    let (_, end) = drain(&model_of::<Messages>(&server.uri()), &prompt("hi")).await;
    let message = end.unwrap_err().to_string();
    assert!(message.contains("error` event"), "{message}");
    assert!(
        message.contains("overloaded_error: Overloaded"),
        "{message}"
    );
}

/// A `tool_use` block start at `index` for the call `id`.
fn call_start(index: u64, id: &str) -> Value {
    json!({"type": "content_block_start", "index": index,
           "content_block": {"type": "tool_use", "id": id, "name": "add", "input": {}}})
}

#[tokio::test]
async fn calls_started_out_of_index_order_end_in_the_order_they_streamed() {
    let (full, _) = full_stream();
    let mut stream = vec![
        full[0].clone(),
        call_start(1, "toolu_b"),
        call_start(0, "toolu_a"),
    ];
    stream.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}));
    stream.push(json!({"type": "message_stop"}));
    let server = answering(sse_response(&events(&stream))).await;
    let (chunks, done) = drain(&model_of::<Messages>(&server.uri()), &prompt("hi")).await;
    let streamed: Vec<String> = chunks
        .iter()
        .filter_map(|chunk| match chunk {
            StreamChunk::ToolCall { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    let done: Vec<String> = done.unwrap().tool_calls().map(|c| c.id.clone()).collect();
    assert_eq!(streamed, ["toolu_b", "toolu_a"]);
    assert_eq!(
        done, streamed,
        "the streamed calls are the answer's, in order"
    );
}

#[tokio::test]
async fn text_streamed_into_a_block_that_keeps_none_is_an_error() {
    let (full, _) = full_stream();
    let stream = vec![
        full[0].clone(),
        call_start(0, "toolu_a"),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "text_delta", "text": "shown, then lost"}}),
        json!({"type": "message_stop"}),
    ];
    let server = answering(sse_response(&events(&stream))).await;
    let (chunks, end) = drain(&model_of::<Messages>(&server.uri()), &prompt("hi")).await;
    let Err(CompletionError::Decode(message)) = end else {
        panic!("expected a decode error, got {end:?}");
    };
    assert!(
        message.contains("`text_delta` for block 0, a `tool_use` block"),
        "{message}"
    );
    assert!(
        !chunks
            .iter()
            .any(|chunk| matches!(chunk, StreamChunk::Text(_))),
        "{chunks:?}"
    );
}
