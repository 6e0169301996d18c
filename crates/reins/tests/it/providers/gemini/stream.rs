//! Streamed Gemini turns: one part per event, the turn complete only once an event gave a
//! finish reason, signatures placed where a blocking call puts them.

use super::{assert_key_not_in_urls, body_of, full_request, model, prompt, requests, signature};
use crate::providers::fixtures::gemini::{event, reply};
use crate::providers::hostile::{Hostile, Reply};
use crate::providers::support::{KEY, drain, json_response};
use reins::completion::{CompletionError, CompletionModel, FinishReason, Usage};
use reins::message::AssistantContent;
use reins::providers::RetryPolicy;
use reins::providers::gemini::{GEMINI_2_5_FLASH, GEMINI_3_PRO_PREVIEW, Gemini};
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn sse(events: &[Value]) -> String {
    events.iter().map(event).collect()
}

fn chunk(parts: Value, extra: Value) -> Value {
    let mut event = json!({
        "candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0}],
        "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
        "modelVersion": "gemini-3-pro-preview",
        "responseId": "resp-s"
    });
    if let (Some(event), Value::Object(extra)) = (event.as_object_mut(), extra) {
        for (key, value) in extra {
            if key == "finishReason" {
                event["candidates"][0]["finishReason"] = value;
            } else {
                event.insert(key, value);
            }
        }
    }
    event
}

fn stream_events() -> Vec<Value> {
    vec![
        chunk(json!([{"text": "Let me ", "thought": true}]), json!({})),
        chunk(json!([{"text": "add.", "thought": true}]), json!({})),
        chunk(json!([{"text": "Adding "}]), json!({})),
        chunk(json!([{"text": "now."}]), json!({})),
        chunk(
            json!([{"functionCall": {"id": "fc-1", "name": "add", "args": {"a": 1, "b": 2}}, "thoughtSignature": "sig-1"}]),
            json!({}),
        ),
        chunk(
            json!([{"functionCall": {"id": "fc-2", "name": "add", "args": {"a": 3, "b": 4}}}]),
            json!({
                "finishReason": "STOP",
                "usageMetadata": {
                    "promptTokenCount": 9, "candidatesTokenCount": 12,
                    "thoughtsTokenCount": 4, "totalTokenCount": 25
                }
            }),
        ),
    ]
}

fn blocking_equivalent() -> Value {
    json!({
        "candidates": [{
            "content": {"role": "model", "parts": [
                {"text": "Let me add.", "thought": true},
                {"text": "Adding now."},
                {"functionCall": {"id": "fc-1", "name": "add", "args": {"a": 1, "b": 2}}, "thoughtSignature": "sig-1"},
                {"functionCall": {"id": "fc-2", "name": "add", "args": {"a": 3, "b": 4}}}
            ]},
            "finishReason": "STOP",
            "index": 0
        }],
        "usageMetadata": {
            "promptTokenCount": 9, "candidatesTokenCount": 12,
            "thoughtsTokenCount": 4, "totalTokenCount": 25
        },
        "modelVersion": "gemini-3-pro-preview",
        "responseId": "resp-s"
    })
}

#[tokio::test]
async fn a_stream_assembles_into_what_the_blocking_call_returns() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(
            "/v1beta/models/gemini-3-pro-preview:streamGenerateContent",
        ))
        .and(query_param("alt", "sse"))
        .and(header("x-goog-api-key", KEY))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(sse(&stream_events()), "text/event-stream"),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1beta/models/gemini-3-pro-preview:generateContent"))
        .respond_with(json_response(blocking_equivalent()))
        .mount(&server)
        .await;
    let model = model(&server, GEMINI_3_PRO_PREVIEW);
    let request = full_request();
    let (chunks, done) = drain(&model, &request).await;
    let streamed = done.unwrap();
    let rendered: Vec<String> = chunks.iter().map(|chunk| format!("{chunk:?}")).collect();
    assert_eq!(
        rendered,
        vec![
            r#"Reasoning("Let me ")"#,
            r#"Reasoning("add.")"#,
            r#"Text("Adding ")"#,
            r#"Text("now.")"#,
            r#"ToolCall { id: "fc-1", name: Some("add"), delta: "{\"a\":1,\"b\":2}" }"#,
            r#"ToolCall { id: "fc-2", name: Some("add"), delta: "{\"a\":3,\"b\":4}" }"#,
        ]
    );
    let blocking = model.completion(&request).await.unwrap();
    assert_eq!(streamed.content, blocking.content);
    assert_eq!(streamed.usage, blocking.usage);
    assert_eq!(streamed.usage, Usage::new(9, 16));
    assert_eq!(streamed.finish_reason, blocking.finish_reason);
    assert_eq!(streamed.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(streamed.response_id, blocking.response_id);
    assert_eq!(
        streamed.raw.json().unwrap(),
        stream_events().last().unwrap(),
        "the raw response of a stream is its last event"
    );
    assert_eq!(
        streamed.content.as_slice(),
        &[
            AssistantContent::reasoning("Let me add."),
            AssistantContent::text("Adding now."),
            AssistantContent::tool_call("fc-1", "add", json!({"a": 1, "b": 2})),
            signature("sig-1"),
            AssistantContent::tool_call("fc-2", "add", json!({"a": 3, "b": 4})),
        ]
    );
    let sent = requests(&server).await;
    assert_key_not_in_urls(&sent);
    assert_eq!(
        body_of(&server, 0).await,
        body_of(&server, 1).await,
        "one body for both forms"
    );
}

#[tokio::test]
async fn a_signature_in_a_last_empty_event_ends_up_where_blocking_puts_it() {
    let server = MockServer::start().await;
    let events = vec![
        chunk(json!([{"text": "Hel"}]), json!({})),
        chunk(json!([{"text": "lo."}]), json!({})),
        chunk(
            json!([{"text": "", "thoughtSignature": "sig-E"}]),
            json!({"finishReason": "STOP"}),
        ),
    ];
    Mock::given(method("POST"))
        .and(path(
            "/v1beta/models/gemini-3-pro-preview:streamGenerateContent",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_raw(sse(&events), "text/event-stream"))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1beta/models/gemini-3-pro-preview:generateContent"))
        .respond_with(json_response(reply(
            json!([{"text": "Hello.", "thoughtSignature": "sig-E"}]),
            "STOP",
        )))
        .mount(&server)
        .await;
    let model = model(&server, GEMINI_3_PRO_PREVIEW);
    let (_, done) = drain(&model, &prompt("hi")).await;
    let streamed = done.unwrap();
    let blocking = model.completion(&prompt("hi")).await.unwrap();
    assert_eq!(streamed.content, blocking.content);
    assert_eq!(
        streamed.content.as_slice(),
        &[AssistantContent::text("Hello."), signature("sig-E")]
    );
    assert_eq!(streamed.finish_reason, Some(FinishReason::Stop));
}

#[tokio::test]
async fn a_stream_closed_before_a_finish_reason_is_an_error_not_a_shorter_answer() {
    let server = MockServer::start().await;
    let events = stream_events();
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(sse(&events[..3]), "text/event-stream"),
        )
        .mount(&server)
        .await;
    let (chunks, end) = drain(&model(&server, GEMINI_3_PRO_PREVIEW), &prompt("x")).await;
    assert_eq!(chunks.len(), 3, "what arrived was streamed");
    let error = end.unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, CompletionError::Decode(_)), "{error:?}");
    assert!(message.contains("finishReason"), "{message}");
    assert!(
        message.contains(
            "3 event(s) with 7 characters of text, 11 of thoughts and 0 function call(s)"
        ),
        "{message}"
    );
}

#[tokio::test]
async fn a_broken_connection_mid_stream_says_what_arrived() {
    let half = event(&chunk(json!([{"text": "Half an"}]), json!({})));
    let server = Hostile::always(Reply::events(&[half])).await;
    let model = Gemini::builder()
        .api_key(KEY)
        .base_url(format!("{}/v1beta", server.url()))
        .retry(RetryPolicy::none())
        .build()
        .unwrap()
        .completion(GEMINI_2_5_FLASH);
    let (chunks, end) = drain(&model, &prompt("x")).await;
    let requests = server.requests();
    assert_eq!(
        requests[0].target,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(requests[0].header("x-goog-api-key"), Some(KEY));
    assert_eq!(chunks.len(), 1, "what arrived was streamed");
    let error = end.unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("broke") && message.contains("1 event(s) with 7 characters of text"),
        "{message}"
    );
    assert!(!message.contains(KEY));
}

#[tokio::test]
async fn an_error_event_mid_stream_is_an_error() {
    let server = MockServer::start().await;
    let events = vec![
        stream_events()[2].clone(),
        json!({"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}}),
    ];
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(sse(&events), "text/event-stream"))
        .mount(&server)
        .await;
    let (_, end) = drain(&model(&server, GEMINI_2_5_FLASH), &prompt("x")).await;
    let error = end.unwrap_err();
    assert!(
        error.to_string().contains("Internal error encountered."),
        "{error}"
    );
}
