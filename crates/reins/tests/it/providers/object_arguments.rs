//! Some servers speaking an OpenAI protocol send a tool call's arguments as a JSON object
//! rather than as JSON text. A whole answer keeps such arguments; a streamed one must keep
//! them too, not run the call with none (`{}`): the same call would otherwise do something
//! else depending on whether its answer was streamed.

use crate::providers::fixtures::chat::{self, Chat};
use crate::providers::fixtures::responses::Responses;
use crate::providers::fixtures::{Settings, data_event, model_at};
use crate::providers::hostile::{Hostile, Reply};
use crate::providers::support::{drain, prompt, within};
use reins::completion::CompletionResponse;
use reins::providers::RetryPolicy;
use serde_json::{Value, json};

/// The arguments of the answer's calls, by name.
fn arguments(response: &CompletionResponse) -> Vec<(String, Value)> {
    response
        .tool_calls()
        .map(|call| (call.name.clone(), call.arguments.clone()))
        .collect()
}

async fn streamed_answer<F: crate::providers::fixtures::Fixture>(
    events: &[String],
) -> CompletionResponse {
    let body: String = events.concat();
    let reply = Reply::fixed(200, &[("content-type", "text/event-stream")], body);
    let server = Hostile::always(reply).await;
    let settings = Settings::default().retry(RetryPolicy::none());
    let model = model_at::<F>(&server.url(), &settings);
    let (_, end) = within(30, drain(&model, &prompt("Delete the draft."))).await;
    end.expect("a streamed answer")
}

#[tokio::test]
async fn chat_arguments_streamed_as_an_object_are_kept() {
    let call = json!({"index": 0, "id": "call_1", "type": "function",
        "function": {"name": "delete", "arguments": {"path": "draft.txt"}}});
    let events = [
        chat::chunk(json!({"role": "assistant", "tool_calls": [call]}), None),
        chat::chunk(json!({}), Some("tool_calls")),
        data_event("[DONE]"),
    ];
    let response = streamed_answer::<Chat>(&events).await;
    assert_eq!(
        arguments(&response),
        [("delete".to_owned(), json!({"path": "draft.txt"}))]
    );
}

#[tokio::test]
async fn responses_arguments_of_a_finished_item_sent_as_an_object_are_kept() {
    let item = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1",
        "name": "delete", "arguments": {"path": "draft.txt"}, "status": "completed"});
    let events = [
        data_event(
            &json!({"type": "response.output_item.done", "output_index": 0, "item": item})
                .to_string(),
        ),
        data_event(
            &json!({"type": "response.completed",
                "response": {"id": "resp_1", "status": "completed", "output": []}})
            .to_string(),
        ),
    ];
    let response = streamed_answer::<Responses>(&events).await;
    assert_eq!(
        arguments(&response),
        [("delete".to_owned(), json!({"path": "draft.txt"}))]
    );
}
