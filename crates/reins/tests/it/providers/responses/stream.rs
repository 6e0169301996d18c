//! Streamed Responses: every event type in the order OpenAI sends them, items that arrive
//! whole, and the events that end a stream early.

use super::incomplete;
use crate::providers::fixtures::model_of;
use crate::providers::fixtures::responses::{
    Responses, call_item, events, message_item, reasoning_item, response,
};
use crate::providers::support::{
    answering, bodies, drain, json_response, parts, prompt, sse_response, streamed_reasoning,
    streamed_text,
};
use reins::completion::{
    CompletionError, CompletionModel, CompletionResponse, FinishReason, StreamChunk, Usage,
};
use reins::message::{AssistantContent, Reasoning};
use serde_json::{Value, json};

fn reasoning() -> Value {
    reasoning_item(&["First I look.", "Then I answer."], "enc-blob-1")
}

/// The final response of the full stream: reasoning, text and two function calls.
fn full_final_response() -> Value {
    response(
        "resp_s",
        vec![
            reasoning(),
            message_item("msg_1", "Let me add both."),
            call_item("fc_1", "call_a", "add", r#"{"a":1,"b":2}"#),
            call_item("fc_2", "call_b", "add", r#"{"a":3,"b":4}"#),
        ],
    )
}

/// Every event type of a streamed response, in the order OpenAI sends them; the two calls'
/// argument fragments interleave.
fn full_stream() -> Vec<Value> {
    let mut created = full_final_response();
    created["status"] = json!("in_progress");
    created["output"] = json!([]);
    created["usage"] = Value::Null;
    let mut added_reasoning = reasoning();
    added_reasoning["summary"] = json!([]);
    let mut added_message = message_item("msg_1", "");
    added_message["content"] = json!([]);
    added_message["status"] = json!("in_progress");
    let mut added_a = call_item("fc_1", "call_a", "add", "");
    added_a["status"] = json!("in_progress");
    let mut added_b = call_item("fc_2", "call_b", "add", "");
    added_b["status"] = json!("in_progress");
    let summary = |index: usize, kind: &str, extra: Value| {
        let mut event =
            json!({"type": kind, "item_id": "rs_1", "output_index": 0, "summary_index": index});
        event
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        event
    };
    let text = |kind: &str, extra: Value| {
        let mut event =
            json!({"type": kind, "item_id": "msg_1", "output_index": 1, "content_index": 0});
        event
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        event
    };
    let args = |item: &str, index: usize, delta: &str| json!({"type": "response.function_call_arguments.delta", "item_id": item, "output_index": index, "delta": delta});
    vec![
        json!({"type": "response.created", "sequence_number": 0, "response": created}),
        json!({"type": "response.in_progress", "sequence_number": 1, "response": created}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": added_reasoning}),
        summary(
            0,
            "response.reasoning_summary_part.added",
            json!({"part": {"type": "summary_text", "text": ""}}),
        ),
        summary(
            0,
            "response.reasoning_summary_text.delta",
            json!({"delta": "First "}),
        ),
        summary(
            0,
            "response.reasoning_summary_text.delta",
            json!({"delta": "I look."}),
        ),
        summary(
            0,
            "response.reasoning_summary_text.done",
            json!({"text": "First I look."}),
        ),
        summary(
            0,
            "response.reasoning_summary_part.done",
            json!({"part": {"type": "summary_text", "text": "First I look."}}),
        ),
        summary(
            1,
            "response.reasoning_summary_part.added",
            json!({"part": {"type": "summary_text", "text": ""}}),
        ),
        summary(
            1,
            "response.reasoning_summary_text.delta",
            json!({"delta": "Then I answer."}),
        ),
        summary(
            1,
            "response.reasoning_summary_text.done",
            json!({"text": "Then I answer."}),
        ),
        json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning()}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": added_message}),
        text(
            "response.content_part.added",
            json!({"part": {"type": "output_text", "text": "", "annotations": []}}),
        ),
        text("response.output_text.delta", json!({"delta": "Let me "})),
        text("response.output_text.delta", json!({"delta": "add both."})),
        text(
            "response.output_text.done",
            json!({"text": "Let me add both."}),
        ),
        text(
            "response.content_part.done",
            json!({"part": {"type": "output_text", "text": "Let me add both.", "annotations": []}}),
        ),
        json!({"type": "response.output_item.done", "output_index": 1, "item": message_item("msg_1", "Let me add both.")}),
        json!({"type": "response.output_item.added", "output_index": 2, "item": added_a}),
        json!({"type": "response.output_item.added", "output_index": 3, "item": added_b}),
        args("fc_1", 2, "{\"a\":1,"),
        args("fc_2", 3, "{\"a\":3,"),
        args("fc_1", 2, "\"b\":2}"),
        args("fc_2", 3, "\"b\":4}"),
        json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 2, "arguments": "{\"a\":1,\"b\":2}"}),
        json!({"type": "response.output_item.done", "output_index": 2, "item": call_item("fc_1", "call_a", "add", r#"{"a":1,"b":2}"#)}),
        json!({"type": "response.function_call_arguments.done", "item_id": "fc_2", "output_index": 3, "arguments": "{\"a\":3,\"b\":4}"}),
        json!({"type": "response.output_item.done", "output_index": 3, "item": call_item("fc_2", "call_b", "add", r#"{"a":3,"b":4}"#)}),
        json!({"type": "response.completed", "sequence_number": 30, "response": full_final_response()}),
    ]
}

/// The chunks and the final response of a stream of `stream` events.
async fn stream(
    stream: &[Value],
) -> (
    Vec<StreamChunk>,
    Result<CompletionResponse, CompletionError>,
) {
    let server = answering(sse_response(&events(stream))).await;
    drain(&model_of::<Responses>(&server.uri()), &prompt("q")).await
}

async fn blocking(body: Value) -> CompletionResponse {
    let server = answering(json_response(body)).await;
    model_of::<Responses>(&server.uri())
        .completion(&prompt("q"))
        .await
        .unwrap()
}

#[tokio::test]
async fn a_full_stream_maps_item_ids_to_call_ids_and_ends_as_the_blocking_response() {
    let server = answering(sse_response(&events(&full_stream()))).await;
    let (chunks, done) = drain(&model_of::<Responses>(&server.uri()), &prompt("q")).await;
    let streamed = done.unwrap();
    let expected = blocking(full_final_response()).await;
    assert_eq!(parts(&streamed), parts(&expected));
    assert_eq!(streamed.raw.json(), expected.raw.json());
    assert_eq!(
        parts(&streamed)[0],
        AssistantContent::Reasoning(Reasoning {
            text: "First I look.\n\nThen I answer.".into(),
            signature: Some("enc-blob-1".into()),
        })
    );
    assert_eq!(streamed.usage, Usage::new(11, 7).with_cached_input(5, 0));
    assert_eq!(streamed.response_id.as_deref(), Some("resp_s"));

    assert_eq!(
        streamed_reasoning(&chunks),
        "First I look.\n\nThen I answer."
    );
    assert_eq!(streamed_text(&chunks), "Let me add both.");
    let calls: Vec<(String, Option<String>, String)> = chunks
        .into_iter()
        .filter_map(|chunk| match chunk {
            StreamChunk::ToolCall { id, name, delta } => Some((id, name, delta)),
            _ => None,
        })
        .collect();
    // Calls are announced with their name, then fragments name the call id, not the item id.
    assert_eq!(
        calls,
        vec![
            ("call_a".into(), Some("add".into()), String::new()),
            ("call_b".into(), Some("add".into()), String::new()),
            ("call_a".into(), None, "{\"a\":1,".into()),
            ("call_b".into(), None, "{\"a\":3,".into()),
            ("call_a".into(), None, "\"b\":2}".into()),
            ("call_b".into(), None, "\"b\":4}".into()),
        ]
    );
    assert_eq!(bodies(&server).await[0]["stream"], json!(true));
}

#[tokio::test]
async fn a_stream_of_whole_items_without_deltas_still_streams_their_content() {
    let mut final_response = full_final_response();
    // Some servers list no output in the final event.
    final_response["output"] = json!([]);
    let (chunks, done) = stream(&[
        json!({"type": "response.created", "response": {"id": "resp_s", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning()}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": message_item("msg_1", "Let me add both.")}),
        json!({"type": "response.output_item.done", "output_index": 2, "item": call_item("fc_1", "call_a", "add", r#"{"a":1,"b":2}"#)}),
        json!({"type": "response.output_item.done", "output_index": 3, "item": call_item("fc_2", "call_b", "add", r#"{"a":3,"b":4}"#)}),
        json!({"type": "response.completed", "response": final_response}),
    ])
    .await;
    let streamed = done.unwrap();
    assert_eq!(streamed_text(&chunks), "Let me add both.");
    assert!(chunks.iter().any(|chunk| matches!(
        chunk,
        StreamChunk::ToolCall { id, name: Some(name), delta }
            if id == "call_b" && name == "add" && delta == "{\"a\":3,\"b\":4}"
    )));
    let expected = blocking(full_final_response()).await;
    assert_eq!(parts(&streamed), parts(&expected));
    assert_eq!(streamed.finish_reason, Some(FinishReason::ToolCalls));
}

#[tokio::test]
async fn an_incomplete_stream_finishes_with_length() {
    let (_, done) = stream(&[
        json!({"type": "response.created", "response": {"id": "resp_5", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "m", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0, "delta": "Trunc"}),
        json!({"type": "response.incomplete", "response": incomplete("max_output_tokens", vec![message_item("m", "Trunc")])}),
    ])
    .await;
    let streamed = done.unwrap();
    assert_eq!(streamed.text(), "Trunc");
    assert_eq!(streamed.finish_reason, Some(FinishReason::Length));
}

#[tokio::test]
async fn a_cut_stream_says_how_many_events_arrived_and_the_last() {
    let (_, end) = stream(&full_stream()[..16]).await;
    let error = end.unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, CompletionError::Decode(_)), "{error:?}");
    assert!(text.contains("16 event(s)"), "{text}");
    assert!(text.contains("response.output_text.delta"), "{text}");
}

#[tokio::test]
async fn failure_and_error_events_end_the_stream_with_their_message() {
    let mut failed = response("resp_f", vec![]);
    failed["status"] = json!("failed");
    failed["error"] = json!({"code": "rate_limit_exceeded", "message": "Too many tokens."});
    let (_, end) = stream(&[
        json!({"type": "response.created", "response": {"id": "resp_f", "status": "in_progress", "output": []}}),
        json!({"type": "response.failed", "response": failed}),
    ])
    .await;
    let text = end.unwrap_err().to_string();
    assert!(
        text.contains("rate_limit_exceeded") && text.contains("Too many tokens."),
        "{text}"
    );

    let (_, end) = stream(&[
        json!({"type": "error", "code": "server_error", "message": "Stream broke.", "param": null}),
    ])
    .await;
    let text = end.unwrap_err().to_string();
    assert!(
        text.contains("server_error") && text.contains("Stream broke."),
        "{text}"
    );
}

#[tokio::test]
async fn two_calls_given_one_item_id_keep_their_own_arguments() {
    // The server gives both call items the id `fc_1`; their fragments, told apart by
    // `output_index`, must not join into one call. The final event lists no output, so the
    // response is what the fragments assembled.
    let added = |index: usize, call_id: &str| {
        json!({"type": "response.output_item.added", "output_index": index,
               "item": call_item("fc_1", call_id, "add", "")})
    };
    let args = |index: usize, delta: &str| {
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
               "output_index": index, "delta": delta})
    };
    let mut completed = response("resp_d", vec![]);
    completed["output"] = json!([]);
    let (_, done) = stream(&[
        added(0, "call_a"),
        added(1, "call_b"),
        args(0, r#"{"a":1,"#),
        args(1, r#"{"a":3,"#),
        args(0, r#""b":2}"#),
        args(1, r#""b":4}"#),
        json!({"type": "response.completed", "response": completed}),
    ])
    .await;
    let calls: Vec<(String, Value)> = done
        .expect("the stream ends with Done")
        .tool_calls()
        .map(|call| (call.id.clone(), call.arguments.clone()))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("call_a".to_owned(), json!({"a": 1, "b": 2})),
            ("call_b".to_owned(), json!({"a": 3, "b": 4})),
        ]
    );
}
