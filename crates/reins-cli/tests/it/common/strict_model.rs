//! A model server on loopback speaking OpenAI's Chat Completions (streamed) that refuses a
//! history as OpenAI does: every assistant message with tool calls must be followed by a tool
//! message answering each call (fakellm takes any history). It calls `save_note` when the
//! last message is the person's and mentions a note, and answers `Answered.` otherwise.

use axum::Json;
use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// What OpenAI says of a tool call left without its result.
pub const UNANSWERED: &str = "An assistant message with 'tool_calls' must be followed by tool \
                              messages responding to each 'tool_call_id'.";

/// Starts the server on a thread of its own: its base URL for an OpenAI client (`…/v1`).
pub fn strict_model() -> String {
    let address = super::sse_server::serve_on_a_thread(Router::new().fallback(answer));
    format!("http://{address}/v1")
}

async fn answer(Json(request): Json<Value>) -> Response {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    if !every_call_answered(&messages) {
        let error = json!({"error": {"message": UNANSWERED, "type": "invalid_request_error"}});
        return (StatusCode::BAD_REQUEST, Json(error)).into_response();
    }
    let last = messages.last().cloned().unwrap_or_default();
    let asks_for_a_note = last["role"] == "user"
        && last["content"]
            .as_str()
            .is_some_and(|text| text.contains("note"));
    let delta = if asks_for_a_note {
        json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "save_note", "arguments": "{\"text\":\"draft\"}"}}]})
    } else {
        json!({"role": "assistant", "content": "Answered."})
    };
    let finish = if asks_for_a_note {
        "tool_calls"
    } else {
        "stop"
    };
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let body = format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        chunk(delta, Value::Null),
        chunk(json!({}), json!(finish))
    );
    ([("content-type", "text/event-stream")], body).into_response()
}

/// Whether each assistant message's tool calls are answered by the tool messages right after
/// it.
fn every_call_answered(messages: &[Value]) -> bool {
    messages.iter().enumerate().all(|(at, message)| {
        let calls = message["tool_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let answered: Vec<&Value> = messages[at + 1..]
            .iter()
            .take_while(|next| next["role"] == "tool")
            .map(|result| &result["tool_call_id"])
            .collect();
        calls.iter().all(|call| answered.contains(&&call["id"]))
    })
}
