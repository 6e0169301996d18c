//! A Chat stream must say how its answer finished, as the other protocols' streams must: text
//! or a call ended by `[DONE]` before any `finish_reason` is a cut stream (a proxy whose
//! upstream broke ends a stream so), never an answer the run would act on.

use super::empty_answers::{assert_no_answer, streamed};
use crate::providers::fixtures::chat::{self, Chat};
use crate::providers::fixtures::data_event;
use reins::completion::FinishReason;
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
