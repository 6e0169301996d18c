//! A reply that ends without any answer is an error, not an empty answer the run would take
//! for the model's: a stream of nothing but its end marker (a gateway whose upstream failed
//! ends a stream so), and a Responses response that has not finished (a background one).
//! An empty answer the model gave, with its reason, still is one.

use crate::providers::fixtures::anthropic::{self, Messages};
use crate::providers::fixtures::chat::{self, Chat};
use crate::providers::fixtures::responses::{self, Responses};
use crate::providers::fixtures::{Fixture, Settings, data_event, model_at};
use crate::providers::hostile::{Hostile, Reply};
use crate::providers::support::{call, drain, prompt, within};
use reins::completion::{CompletionError, CompletionResponse, FinishReason};
use reins::providers::RetryPolicy;
use serde_json::{Value, json};

pub(super) async fn streamed<F: Fixture>(
    events: &[String],
) -> Result<CompletionResponse, CompletionError> {
    let server = Hostile::always(Reply::events(events).finish()).await;
    let settings = Settings::default().retry(RetryPolicy::none());
    let model = model_at::<F>(&server.url(), &settings);
    within(10, drain(&model, &prompt("hi"))).await.1
}

pub(super) fn assert_no_answer(end: Result<CompletionResponse, CompletionError>, names: &str) {
    match end {
        Err(CompletionError::Decode(message)) => assert!(message.contains(names), "{message}"),
        other => panic!("expected a decode error naming `{names}`, got {other:?}"),
    }
}

#[tokio::test]
async fn a_chat_stream_of_nothing_but_done_is_an_error() {
    // Only a usage chunk, then the end: no choice said anything.
    let usage = json!({"id": "chatcmpl-1", "choices": [],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 0}});
    for events in [
        vec![data_event("[DONE]")],
        vec![data_event(&usage.to_string()), data_event("[DONE]")],
    ] {
        assert_no_answer(streamed::<Chat>(&events).await, "[DONE] before any answer");
    }
    // An empty answer with its reason is the model's.
    let events = [chat::chunk(json!({}), Some("stop")), data_event("[DONE]")];
    let answer = streamed::<Chat>(&events).await.unwrap();
    assert_eq!(answer.text(), "");
    assert_eq!(answer.finish_reason, Some(FinishReason::Stop));
}

#[tokio::test]
async fn an_anthropic_stream_stopped_before_any_message_started_is_an_error() {
    let events = anthropic::events(&[json!({"type": "ping"}), json!({"type": "message_stop"})]);
    assert_no_answer(
        streamed::<Messages>(&events).await,
        "before any `message_start`",
    );
    // A message that started and ended empty is the model's.
    let mut start = anthropic::message("msg_1", json!([]), "end_turn");
    start["stop_reason"] = Value::Null;
    let events = anthropic::events(&[
        json!({"type": "message_start", "message": start}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
        json!({"type": "message_stop"}),
    ]);
    let answer = streamed::<Messages>(&events).await.unwrap();
    assert_eq!(answer.finish_reason, Some(FinishReason::Stop));
}

/// A stream that stops with no `stop_reason` (its `message_delta` lost, as a proxy whose
/// upstream broke may end it) never said why the answer ended: a cut stream, as a Chat stream
/// ended by `[DONE]` before any `finish_reason` is, not an answer the run would act on.
#[tokio::test]
async fn an_anthropic_stream_stopped_before_any_stop_reason_is_an_error() {
    let mut start = anthropic::message("msg_1", json!([]), "end_turn");
    start["stop_reason"] = Value::Null;
    let events = anthropic::events(&[
        json!({"type": "message_start", "message": start}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": "The answer is"}}),
        json!({"type": "message_stop"}),
    ]);
    assert_no_answer(
        streamed::<Messages>(&events).await,
        "before any `stop_reason`",
    );
}

#[tokio::test]
async fn a_responses_response_not_finished_yet_is_an_error_naming_its_status() {
    for status in ["queued", "in_progress"] {
        let mut unfinished = responses::response("resp_1", vec![]);
        unfinished["status"] = json!(status);
        let server = Hostile::always(Reply::json(&unfinished)).await;
        let settings = Settings::default().retry(RetryPolicy::none());
        let model = model_at::<Responses>(&server.url(), &settings);
        assert_no_answer(within(10, call(&model, &prompt("hi"), false)).await, status);
        let completed = json!({"type": "response.completed", "response": unfinished});
        let events = responses::events(&[completed]);
        assert_no_answer(streamed::<Responses>(&events).await, status);
    }
}
