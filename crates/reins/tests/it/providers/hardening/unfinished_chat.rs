//! A Chat stream must say how its answer finished, as the other protocols' streams must: text
//! or a call ended by `[DONE]` before any `finish_reason` is a cut stream (a proxy whose
//! upstream broke ends a stream so), never an answer the run would act on. And a call whose
//! fragments never named its function is an error, as it is when not streamed.

use super::empty_answers::{assert_no_answer, streamed};
use crate::providers::fixtures::chat::{self, Chat};
use crate::providers::fixtures::{Settings, data_event, model_at};
use crate::providers::hostile::{Hostile, Reply};
use crate::providers::support::{call, prompt, within};
use reins::completion::FinishReason;
use reins::providers::RetryPolicy;
use serde_json::{Value, json};

fn call_chunk(call: Value) -> String {
    chat::chunk(json!({"tool_calls": [call]}), None)
}

#[tokio::test]
async fn a_chat_stream_ended_by_done_before_any_finish_reason_is_an_error() {
    let text = chat::chunk(json!({"content": "The answer is"}), None);
    let started_call = call_chunk(json!({"index": 0, "id": "call_1", "type": "function",
        "function": {"name": "add", "arguments": "{\"a\":"}}));
    for answer in [text, started_call] {
        let events = [answer, data_event("[DONE]")];
        assert_no_answer(
            streamed::<Chat>(&events).await,
            "[DONE] before any finish_reason",
        );
    }
    // With its reason, the same text is the model's answer.
    let events = [
        chat::chunk(json!({"content": "The answer is"}), None),
        chat::chunk(json!({}), Some("length")),
        data_event("[DONE]"),
    ];
    let answer = streamed::<Chat>(&events).await.unwrap();
    assert_eq!(answer.text(), "The answer is");
    assert_eq!(answer.finish_reason, Some(FinishReason::Length));
}

#[tokio::test]
async fn a_streamed_chat_tool_call_never_named_is_an_error_as_when_not_streamed() {
    let nameless = json!({"id": "call_1", "type": "function",
        "function": {"arguments": "{\"a\":1}"}});
    let mut fragment = nameless.clone();
    fragment["index"] = json!(0);
    let events = [
        call_chunk(fragment),
        chat::chunk(json!({}), Some("tool_calls")),
        data_event("[DONE]"),
    ];
    assert_no_answer(streamed::<Chat>(&events).await, "a tool call has no name");

    let reply = chat::reply(
        json!({"role": "assistant", "tool_calls": [nameless]}),
        "tool_calls",
    );
    let server = Hostile::always(Reply::json(&reply)).await;
    let settings = Settings::default().retry(RetryPolicy::none());
    let model = model_at::<Chat>(&server.url(), &settings);
    assert_no_answer(
        within(10, call(&model, &prompt("hi"), false)).await,
        "a tool call has no name",
    );

    // A name that comes in a later fragment names the call.
    let events = [
        call_chunk(json!({"index": 0, "id": "call_1", "function": {"arguments": "{\"a\":"}})),
        call_chunk(json!({"index": 0, "function": {"name": "add", "arguments": "1}"}})),
        chat::chunk(json!({}), Some("tool_calls")),
        data_event("[DONE]"),
    ];
    let answer = streamed::<Chat>(&events).await.unwrap();
    let calls: Vec<_> = answer
        .tool_calls()
        .map(|call| (call.name.clone(), call.arguments.clone()))
        .collect();
    assert_eq!(calls, vec![("add".to_owned(), json!({"a": 1}))]);
}
