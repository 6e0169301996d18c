//! The OpenAI Responses API model against a mock server: request bodies, response shapes,
//! errors and retries, streaming, and whole agent runs.

mod common;

use common::add_tool;
use futures::StreamExt;
use reins::agent::{AgentBuilder, StreamItem};
use reins::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, FinishReason,
    StreamChunk, Usage,
};
use reins::message::{AssistantContent, Document, Message, OneOrMany, Reasoning, ToolChoice};
use reins::providers::RetryPolicy;
use reins::providers::openai::{OpenAI, ResponsesModel};
use reins::tool::ToolDefinition;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-test-very-secret-key";

fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_retries: 2,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(5),
    }
}

fn client(server: &MockServer) -> OpenAI {
    OpenAI::builder()
        .api_key(KEY)
        .base_url(format!("{}/v1/", server.uri()))
        .retry(fast_retry())
        .build()
        .unwrap()
}

fn model(server: &MockServer) -> ResponsesModel {
    client(server).responses("gpt-5")
}

fn ok(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

/// A mock answering every `POST /v1/responses` with `template`.
async fn answer(server: &MockServer, template: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(template)
        .mount(server)
        .await;
}

/// An event stream of the given events, each named by its `type`.
fn sse(events: &[Value]) -> ResponseTemplate {
    let mut body = String::new();
    for event in events {
        let name = event["type"].as_str().unwrap_or("message");
        body.push_str(&format!("event: {name}\ndata: {event}\n\n"));
    }
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

fn message_item(id: &str, text: &str) -> Value {
    json!({
        "type": "message",
        "id": id,
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    })
}

fn call_item(id: &str, call_id: &str, name: &str, arguments: &str) -> Value {
    json!({
        "type": "function_call",
        "id": id,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    })
}

fn response(id: &str, output: Vec<Value>) -> Value {
    json!({
        "id": id,
        "object": "response",
        "created_at": 1_700_000_000,
        "status": "completed",
        "model": "gpt-5",
        "output": output,
        "error": null,
        "incomplete_details": null,
        "usage": {"input_tokens": 11, "output_tokens": 7, "total_tokens": 18},
    })
}

fn parts(response: &CompletionResponse) -> Vec<AssistantContent> {
    response.content.iter().cloned().collect()
}

async fn request_bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|request| request.body_json::<Value>().unwrap())
        .collect()
}

fn add_definition() -> ToolDefinition {
    ToolDefinition {
        name: "add".into(),
        description: "Adds two integers.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        }),
    }
}

async fn collect_stream(
    model: &ResponsesModel,
    request: &CompletionRequest,
) -> Vec<Result<StreamChunk, CompletionError>> {
    model.stream(request).await.unwrap().collect().await
}

/// Asserts two responses are equal in every field (`CompletionResponse` has no `PartialEq`).
fn assert_same_response(streamed: &CompletionResponse, blocking: &CompletionResponse) {
    assert_eq!(parts(streamed), parts(blocking));
    assert_eq!(streamed.usage, blocking.usage);
    assert_eq!(streamed.finish_reason, blocking.finish_reason);
    assert_eq!(streamed.response_id, blocking.response_id);
    assert_eq!(streamed.raw.json(), blocking.raw.json());
}

#[tokio::test]
async fn a_text_answer_is_read_with_usage_id_and_raw_response() {
    let server = MockServer::start().await;
    let body = response("resp_1", vec![message_item("msg_1", "Hello there.")]);
    answer(&server, ok(body.clone())).await;

    let result = model(&server)
        .completion(&CompletionRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap();

    assert_eq!(parts(&result), vec![AssistantContent::text("Hello there.")]);
    assert_eq!(result.text(), "Hello there.");
    assert_eq!(result.finish_reason, Some(FinishReason::Stop));
    assert_eq!(result.usage, Usage::new(11, 7));
    assert_eq!(result.response_id.as_deref(), Some("resp_1"));
    assert_eq!(result.raw.json(), Some(&body));

    let bodies = request_bodies(&server).await;
    assert_eq!(
        bodies,
        vec![json!({
            "model": "gpt-5",
            "input": [{"role": "user", "content": "hi"}],
        })]
    );
}

#[tokio::test]
async fn a_function_call_turn_sends_the_whole_request_and_reads_the_call() {
    let server = MockServer::start().await;
    answer(
        &server,
        ok(response(
            "resp_2",
            vec![call_item("fc_9", "call_9", "add", r#"{"a":40,"b":2}"#)],
        )),
    )
    .await;

    let request = CompletionRequest {
        preamble: Some("You add numbers.".into()),
        history: vec![
            Message::system("Be brief."),
            Message::user("What is 1 + 2?"),
            Message::Assistant {
                content: OneOrMany::many([
                    AssistantContent::reasoning("unsent reasoning"),
                    AssistantContent::text("Let me add."),
                    AssistantContent::tool_call("call_1", "add", json!({"a": 1, "b": 2})),
                    AssistantContent::tool_call("call_2", "add", json!("{broken")),
                ])
                .unwrap(),
            },
            Message::tool_result("call_1", "add", "3"),
            Message::tool_result("call_2", "add", "bad arguments"),
            Message::assistant("It is 3."),
            Message::user("And 40 + 2?"),
        ],
        documents: vec![Document::new("d1", "Numbers are fun.")],
        tools: Arc::from(vec![add_definition()]),
        tool_choice: Some(ToolChoice::Specific("add".into())),
        temperature: Some(0.5),
        max_tokens: Some(256),
        additional_params: Some(json!({
            "reasoning": {"effort": "low"},
            "temperature": 0.25,
            "parallel_tool_calls": false,
        })),
        output_schema: None,
    };
    let result = model(&server).completion(&request).await.unwrap();

    assert_eq!(
        parts(&result),
        vec![AssistantContent::tool_call(
            "call_9",
            "add",
            json!({"a": 40, "b": 2})
        )]
    );
    assert_eq!(result.finish_reason, Some(FinishReason::ToolCalls));

    let received = server.received_requests().await.unwrap();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].url.path(), "/v1/responses");
    assert_eq!(
        received[0]
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok()),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body: Value = received[0].body_json().unwrap();
    assert_eq!(
        body,
        json!({
            "model": "gpt-5",
            "instructions": "You add numbers.\n\nBe brief.\n\nContext documents:\n\
                             <document id=\"d1\">\nNumbers are fun.\n</document>\n",
            "input": [
                {"role": "user", "content": "What is 1 + 2?"},
                {"role": "assistant", "content": "Let me add."},
                {
                    "type": "function_call",
                    "call_id": "call_1",
                    "name": "add",
                    "arguments": "{\"a\":1,\"b\":2}",
                },
                {
                    "type": "function_call",
                    "call_id": "call_2",
                    "name": "add",
                    "arguments": "{broken",
                },
                {"type": "function_call_output", "call_id": "call_1", "output": "3"},
                {"type": "function_call_output", "call_id": "call_2", "output": "bad arguments"},
                {"role": "assistant", "content": "It is 3."},
                {"role": "user", "content": "And 40 + 2?"},
            ],
            "tools": [{
                "type": "function",
                "name": "add",
                "description": "Adds two integers.",
                "parameters": add_definition().parameters,
                "strict": false,
            }],
            "tool_choice": {"type": "function", "name": "add"},
            // additional_params win over the request's own keys.
            "temperature": 0.25,
            "max_output_tokens": 256,
            "reasoning": {"effort": "low"},
            "parallel_tool_calls": false,
        })
    );
}

#[tokio::test]
async fn tool_choice_and_native_output_are_written_as_the_api_expects() {
    let server = MockServer::start().await;
    answer(
        &server,
        ok(response("r", vec![message_item("m", r#"{"n":1}"#)])),
    )
    .await;
    let model = model(&server);
    assert!(model.supports_native_output());
    assert!(
        !model
            .clone()
            .with_native_output(false)
            .supports_native_output()
    );
    assert_eq!(model.model(), "gpt-5");

    for (choice, expected) in [
        (ToolChoice::Auto, json!("auto")),
        (ToolChoice::None, json!("none")),
        (ToolChoice::Required, json!("required")),
    ] {
        let request = CompletionRequest {
            tool_choice: Some(choice),
            ..CompletionRequest::new(vec![Message::user("x")])
        };
        assert_eq!(model.request_body(&request, false)["tool_choice"], expected);
    }

    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let request = CompletionRequest {
        output_schema: Some(schema.clone()),
        ..CompletionRequest::new(vec![Message::user("x")])
    };
    model.completion(&request).await.unwrap();
    let body = &request_bodies(&server).await[0];
    assert_eq!(
        body["text"],
        json!({"format": {"type": "json_schema", "name": "output", "schema": schema}})
    );
    assert_eq!(body.get("stream"), None);
    assert_eq!(model.request_body(&request, true)["stream"], json!(true));
}

#[tokio::test]
async fn parallel_function_calls_keep_their_order_and_ids() {
    let server = MockServer::start().await;
    answer(
        &server,
        ok(response(
            "resp_3",
            vec![
                message_item("msg_1", "Adding both."),
                call_item("fc_1", "call_a", "add", r#"{"a":1,"b":2}"#),
                call_item("fc_2", "call_b", "add", r#"{"a":3,"b":4}"#),
                call_item("fc_3", "call_c", "add", ""),
            ],
        )),
    )
    .await;

    let result = model(&server)
        .completion(&CompletionRequest::new(vec![Message::user("sums")]))
        .await
        .unwrap();

    assert_eq!(
        parts(&result),
        vec![
            AssistantContent::text("Adding both."),
            AssistantContent::tool_call("call_a", "add", json!({"a": 1, "b": 2})),
            AssistantContent::tool_call("call_b", "add", json!({"a": 3, "b": 4})),
            AssistantContent::tool_call("call_c", "add", json!({})),
        ]
    );
    assert_eq!(result.finish_reason, Some(FinishReason::ToolCalls));
}

fn reasoning_item() -> Value {
    json!({
        "type": "reasoning",
        "id": "rs_1",
        "summary": [
            {"type": "summary_text", "text": "First I look."},
            {"type": "summary_text", "text": "Then I answer."},
        ],
        "encrypted_content": "enc-blob-1",
    })
}

#[tokio::test]
async fn reasoning_summaries_become_reasoning_with_the_encrypted_content_as_signature() {
    let server = MockServer::start().await;
    answer(
        &server,
        ok(response(
            "resp_4",
            vec![
                reasoning_item(),
                json!({"type": "reasoning", "id": "rs_2", "summary": []}),
                message_item("msg_1", "42"),
            ],
        )),
    )
    .await;

    let result = model(&server)
        .completion(&CompletionRequest::new(vec![Message::user("q")]))
        .await
        .unwrap();

    assert_eq!(
        parts(&result),
        vec![
            AssistantContent::Reasoning(Reasoning {
                text: "First I look.\n\nThen I answer.".into(),
                signature: Some("enc-blob-1".into()),
            }),
            AssistantContent::text("42"),
        ]
    );
    assert_eq!(result.finish_reason, Some(FinishReason::Stop));
}

#[tokio::test]
async fn reasoning_is_sent_back_only_with_encrypted_reasoning() {
    let history = vec![
        Message::user("q"),
        Message::Assistant {
            content: OneOrMany::many([
                AssistantContent::Reasoning(Reasoning {
                    text: "thinking".into(),
                    signature: Some("enc-1".into()),
                }),
                AssistantContent::tool_call("call_1", "add", json!({"a": 1, "b": 1})),
            ])
            .unwrap(),
        },
        Message::tool_result("call_1", "add", "2"),
        // Reasoning alone (nothing it led to) is never sent.
        Message::Assistant {
            content: OneOrMany::many([
                AssistantContent::Reasoning(Reasoning {
                    text: String::new(),
                    signature: Some("enc-2".into()),
                }),
                AssistantContent::text(""),
            ])
            .unwrap(),
        },
        Message::user("again"),
    ];
    let request = CompletionRequest::new(history);
    let server = MockServer::start().await;
    let plain = model(&server).request_body(&request, false);
    assert_eq!(plain.get("include"), None);
    assert_eq!(plain.get("store"), None);
    assert_eq!(
        plain["input"],
        json!([
            {"role": "user", "content": "q"},
            {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": "{\"a\":1,\"b\":1}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "2"},
            {"role": "user", "content": "again"},
        ])
    );

    let encrypted = model(&server)
        .with_encrypted_reasoning(true)
        .request_body(&request, false);
    assert_eq!(encrypted["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(encrypted["store"], json!(false));
    assert_eq!(
        encrypted["input"],
        json!([
            {"role": "user", "content": "q"},
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "thinking"}],
                "encrypted_content": "enc-1",
            },
            {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": "{\"a\":1,\"b\":1}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "2"},
            {"role": "user", "content": "again"},
        ])
    );
}

fn incomplete(reason: &str, output: Vec<Value>) -> Value {
    let mut body = response("resp_5", output);
    body["status"] = json!("incomplete");
    body["incomplete_details"] = json!({"reason": reason});
    body
}

#[tokio::test]
async fn an_incomplete_response_reports_why_it_stopped() {
    for (reason, expected) in [
        ("max_output_tokens", FinishReason::Length),
        ("content_filter", FinishReason::ContentFilter),
        ("something_new", FinishReason::Other("something_new".into())),
    ] {
        let server = MockServer::start().await;
        answer(
            &server,
            ok(incomplete(reason, vec![message_item("m", "The answer is")])),
        )
        .await;
        let result = model(&server)
            .completion(&CompletionRequest::new(vec![Message::user("q")]))
            .await
            .unwrap();
        assert_eq!(result.text(), "The answer is");
        assert_eq!(result.finish_reason, Some(expected));
    }
}

#[tokio::test]
async fn a_refusal_is_kept_as_text_and_finishes_as_content_filter() {
    let server = MockServer::start().await;
    answer(
        &server,
        ok(response(
            "resp_6",
            vec![json!({
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "content": [{"type": "refusal", "refusal": "I can't help with that."}],
            })],
        )),
    )
    .await;
    let result = model(&server)
        .completion(&CompletionRequest::new(vec![Message::user("q")]))
        .await
        .unwrap();
    assert_eq!(result.text(), "I can't help with that.");
    assert_eq!(result.finish_reason, Some(FinishReason::ContentFilter));
}

#[tokio::test]
async fn a_client_error_is_not_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "error": {"message": "Unknown parameter: 'bogus'.", "type": "invalid_request_error"}
        })))
        .expect(1)
        .mount(&server)
        .await;
    let error = model(&server)
        .completion(&CompletionRequest::new(vec![Message::user("q")]))
        .await
        .unwrap_err();
    match &error {
        CompletionError::Http { status, body } => {
            assert_eq!(*status, 400);
            assert!(body.contains("Unknown parameter"), "{body}");
        }
        other => panic!("expected an HTTP error, got {other:?}"),
    }
    assert!(!error.to_string().contains(KEY));
}

#[tokio::test]
async fn rate_limits_are_retried_after_the_wait_the_server_asks_for() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_string("slow down"),
        )
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ok(response("resp_7", vec![message_item("m", "ok")])))
        .expect(1)
        .mount(&server)
        .await;
    let started = std::time::Instant::now();
    let result = model(&server)
        .completion(&CompletionRequest::new(vec![Message::user("q")]))
        .await
        .unwrap();
    assert_eq!(result.text(), "ok");
    // Retry-After (1 s) is capped to the policy's 5 ms maximum.
    assert!(started.elapsed() < Duration::from_millis(900));
}

#[tokio::test]
async fn server_errors_are_retried_until_the_policy_gives_up() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ResponseTemplate::new(500).set_body_string("upstream broke"))
        .expect(3)
        .mount(&server)
        .await;
    let error = model(&server)
        .completion(&CompletionRequest::new(vec![Message::user("q")]))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, CompletionError::Http { status: 500, body } if body == "upstream broke"),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_server_error_then_success_recovers() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    answer(&server, ok(response("r", vec![message_item("m", "fine")]))).await;
    let result = model(&server)
        .completion(&CompletionRequest::new(vec![Message::user("q")]))
        .await
        .unwrap();
    assert_eq!(result.text(), "fine");
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_failed_response_is_an_error_naming_the_failure() {
    let server = MockServer::start().await;
    let mut body = response("resp_8", vec![]);
    body["status"] = json!("failed");
    body["error"] = json!({"code": "server_error", "message": "The model crashed."});
    answer(&server, ok(body)).await;
    let error = model(&server)
        .completion(&CompletionRequest::new(vec![Message::user("q")]))
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(text.contains("server_error"), "{text}");
    assert!(text.contains("The model crashed."), "{text}");
}

#[tokio::test]
async fn a_body_that_is_not_json_is_a_decode_error_quoting_it() {
    let server = MockServer::start().await;
    answer(
        &server,
        ResponseTemplate::new(200).set_body_string("<html>gateway</html>"),
    )
    .await;
    let error = model(&server)
        .completion(&CompletionRequest::new(vec![Message::user("q")]))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, CompletionError::Decode(text) if text.contains("<html>gateway</html>")),
        "{error:?}"
    );

    let server = MockServer::start().await;
    answer(&server, ok(json!({"id": "r", "status": "completed"}))).await;
    let error = model(&server)
        .completion(&CompletionRequest::new(vec![Message::user("q")]))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, CompletionError::Decode(text) if text.contains("no output")),
        "{error:?}"
    );
}

/// The final response of the full stream: reasoning, text and two function calls.
fn full_final_response() -> Value {
    response(
        "resp_s",
        vec![
            reasoning_item(),
            message_item("msg_1", "Let me add both."),
            call_item("fc_1", "call_a", "add", r#"{"a":1,"b":2}"#),
            call_item("fc_2", "call_b", "add", r#"{"a":3,"b":4}"#),
        ],
    )
}

/// Every event type of a streamed response, in the order OpenAI sends them.
fn full_stream() -> Vec<Value> {
    let mut created = full_final_response();
    created["status"] = json!("in_progress");
    created["output"] = json!([]);
    created["usage"] = Value::Null;
    let mut added_reasoning = reasoning_item();
    added_reasoning["summary"] = json!([]);
    let mut added_message = message_item("msg_1", "");
    added_message["content"] = json!([]);
    added_message["status"] = json!("in_progress");
    let mut added_a = call_item("fc_1", "call_a", "add", "");
    added_a["status"] = json!("in_progress");
    let mut added_b = call_item("fc_2", "call_b", "add", "");
    added_b["status"] = json!("in_progress");
    vec![
        json!({"type": "response.created", "sequence_number": 0, "response": created}),
        json!({"type": "response.in_progress", "sequence_number": 1, "response": created}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": added_reasoning}),
        json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "First "}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "I look."}),
        json!({"type": "response.reasoning_summary_text.done", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "text": "First I look."}),
        json!({"type": "response.reasoning_summary_part.done", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": "First I look."}}),
        json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "output_index": 0, "summary_index": 1, "part": {"type": "summary_text", "text": ""}}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0, "summary_index": 1, "delta": "Then I answer."}),
        json!({"type": "response.reasoning_summary_text.done", "item_id": "rs_1", "output_index": 0, "summary_index": 1, "text": "Then I answer."}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning_item()}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": added_message}),
        json!({"type": "response.content_part.added", "item_id": "msg_1", "output_index": 1, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": "Let me "}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": "add both."}),
        json!({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 1, "content_index": 0, "text": "Let me add both."}),
        json!({"type": "response.content_part.done", "item_id": "msg_1", "output_index": 1, "content_index": 0, "part": {"type": "output_text", "text": "Let me add both.", "annotations": []}}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": message_item("msg_1", "Let me add both.")}),
        json!({"type": "response.output_item.added", "output_index": 2, "item": added_a}),
        json!({"type": "response.output_item.added", "output_index": 3, "item": added_b}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 2, "delta": "{\"a\":1,"}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_2", "output_index": 3, "delta": "{\"a\":3,"}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 2, "delta": "\"b\":2}"}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_2", "output_index": 3, "delta": "\"b\":4}"}),
        json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 2, "arguments": "{\"a\":1,\"b\":2}"}),
        json!({"type": "response.output_item.done", "output_index": 2, "item": call_item("fc_1", "call_a", "add", r#"{"a":1,"b":2}"#)}),
        json!({"type": "response.function_call_arguments.done", "item_id": "fc_2", "output_index": 3, "arguments": "{\"a\":3,\"b\":4}"}),
        json!({"type": "response.output_item.done", "output_index": 3, "item": call_item("fc_2", "call_b", "add", r#"{"a":3,"b":4}"#)}),
        json!({"type": "response.completed", "sequence_number": 30, "response": full_final_response()}),
    ]
}

/// The chunks of a stream, split into deltas and the final response.
fn split(
    chunks: Vec<Result<StreamChunk, CompletionError>>,
) -> (Vec<StreamChunk>, CompletionResponse) {
    let mut deltas = Vec::new();
    let mut done = None;
    for chunk in chunks {
        match chunk.unwrap() {
            StreamChunk::Done(response) => {
                assert!(done.is_none(), "one Done chunk");
                done = Some(response);
            }
            other => {
                assert!(done.is_none(), "Done is the last chunk");
                deltas.push(other);
            }
        }
    }
    (deltas, done.expect("the stream ends with Done"))
}

#[tokio::test]
async fn a_full_stream_yields_every_fragment_and_the_blocking_response() {
    let streaming = MockServer::start().await;
    answer(&streaming, sse(&full_stream())).await;
    let blocking = MockServer::start().await;
    answer(&blocking, ok(full_final_response())).await;
    let request = CompletionRequest::new(vec![Message::user("1+2 and 3+4?")]);

    let (deltas, streamed) = split(collect_stream(&model(&streaming), &request).await);
    let expected = model(&blocking).completion(&request).await.unwrap();

    assert_same_response(&streamed, &expected);
    assert_eq!(
        parts(&streamed),
        vec![
            AssistantContent::Reasoning(Reasoning {
                text: "First I look.\n\nThen I answer.".into(),
                signature: Some("enc-blob-1".into()),
            }),
            AssistantContent::text("Let me add both."),
            AssistantContent::tool_call("call_a", "add", json!({"a": 1, "b": 2})),
            AssistantContent::tool_call("call_b", "add", json!({"a": 3, "b": 4})),
        ]
    );
    assert_eq!(streamed.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(streamed.usage, Usage::new(11, 7));
    assert_eq!(streamed.response_id.as_deref(), Some("resp_s"));

    let mut reasoning = String::new();
    let mut text = String::new();
    let mut calls: Vec<(String, Option<String>, String)> = Vec::new();
    for delta in &deltas {
        match delta {
            StreamChunk::Reasoning(fragment) => reasoning.push_str(fragment),
            StreamChunk::Text(fragment) => text.push_str(fragment),
            StreamChunk::ToolCall { id, name, delta } => {
                calls.push((id.clone(), name.clone(), delta.clone()))
            }
            StreamChunk::Done(_) => unreachable!(),
        }
    }
    assert_eq!(reasoning, "First I look.\n\nThen I answer.");
    assert_eq!(text, "Let me add both.");
    // Calls are announced with their name, then fragments map to the call id, not the item id.
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

    let body = &request_bodies(&streaming).await[0];
    assert_eq!(body["stream"], json!(true));
}

#[tokio::test]
async fn a_stream_of_whole_items_without_deltas_still_streams_their_content() {
    let server = MockServer::start().await;
    let mut final_response = full_final_response();
    // Some servers list no output in the final event.
    final_response["output"] = json!([]);
    let events = vec![
        json!({"type": "response.created", "response": {"id": "resp_s", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning_item()}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": message_item("msg_1", "Let me add both.")}),
        json!({"type": "response.output_item.done", "output_index": 2, "item": call_item("fc_1", "call_a", "add", r#"{"a":1,"b":2}"#)}),
        json!({"type": "response.output_item.done", "output_index": 3, "item": call_item("fc_2", "call_b", "add", r#"{"a":3,"b":4}"#)}),
        json!({"type": "response.completed", "response": final_response}),
    ];
    answer(&server, sse(&events)).await;
    let request = CompletionRequest::new(vec![Message::user("q")]);
    let (deltas, streamed) = split(collect_stream(&model(&server), &request).await);

    let text: String = deltas
        .iter()
        .filter_map(|d| match d {
            StreamChunk::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Let me add both.");
    assert!(deltas.iter().any(|d| matches!(
        d,
        StreamChunk::ToolCall { id, name: Some(name), delta }
            if id == "call_b" && name == "add" && delta == "{\"a\":3,\"b\":4}"
    )));
    let blocking = MockServer::start().await;
    answer(&blocking, ok(full_final_response())).await;
    let expected = model(&blocking).completion(&request).await.unwrap();
    assert_eq!(parts(&streamed), parts(&expected));
    assert_eq!(streamed.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(streamed.response_id.as_deref(), Some("resp_s"));
}

#[tokio::test]
async fn an_incomplete_stream_finishes_with_length() {
    let server = MockServer::start().await;
    let final_response = incomplete("max_output_tokens", vec![message_item("m", "Trunc")]);
    answer(
        &server,
        sse(&[
            json!({"type": "response.created", "response": {"id": "resp_5", "status": "in_progress", "output": []}}),
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "m", "role": "assistant", "content": []}}),
            json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0, "delta": "Trunc"}),
            json!({"type": "response.incomplete", "response": final_response}),
        ]),
    )
    .await;
    let request = CompletionRequest::new(vec![Message::user("q")]);
    let (_, streamed) = split(collect_stream(&model(&server), &request).await);
    assert_eq!(streamed.text(), "Trunc");
    assert_eq!(streamed.finish_reason, Some(FinishReason::Length));
}

/// The stream's error, after checking nothing follows it.
fn stream_error(chunks: Vec<Result<StreamChunk, CompletionError>>) -> CompletionError {
    let position = chunks
        .iter()
        .position(Result::is_err)
        .expect("the stream reports an error");
    assert_eq!(position, chunks.len() - 1, "the error ends the stream");
    assert!(
        !chunks.iter().any(|c| matches!(c, Ok(StreamChunk::Done(_)))),
        "no Done after a failure"
    );
    chunks.into_iter().last().unwrap().unwrap_err()
}

#[tokio::test]
async fn a_stream_cut_before_completion_is_an_error_saying_what_arrived() {
    let server = MockServer::start().await;
    let events = full_stream();
    answer(&server, sse(&events[..16])).await;
    let request = CompletionRequest::new(vec![Message::user("q")]);
    let error = stream_error(collect_stream(&model(&server), &request).await);
    let text = error.to_string();
    assert!(matches!(error, CompletionError::Decode(_)), "{error:?}");
    assert!(text.contains("response.completed"), "{text}");
    assert!(text.contains("16 event(s)"), "{text}");
    assert!(text.contains("response.output_text.delta"), "{text}");
}

#[tokio::test]
async fn failure_events_and_malformed_events_end_the_stream_with_an_error() {
    let request = CompletionRequest::new(vec![Message::user("q")]);

    let server = MockServer::start().await;
    let mut failed = response("resp_f", vec![]);
    failed["status"] = json!("failed");
    failed["error"] = json!({"code": "rate_limit_exceeded", "message": "Too many tokens."});
    answer(
        &server,
        sse(&[
            json!({"type": "response.created", "response": {"id": "resp_f", "status": "in_progress", "output": []}}),
            json!({"type": "response.failed", "response": failed}),
        ]),
    )
    .await;
    let text = stream_error(collect_stream(&model(&server), &request).await).to_string();
    assert!(
        text.contains("rate_limit_exceeded") && text.contains("Too many tokens."),
        "{text}"
    );

    let server = MockServer::start().await;
    answer(
        &server,
        sse(&[
            json!({"type": "error", "code": "server_error", "message": "Stream broke.", "param": null}),
        ]),
    )
    .await;
    let text = stream_error(collect_stream(&model(&server), &request).await).to_string();
    assert!(
        text.contains("server_error") && text.contains("Stream broke."),
        "{text}"
    );

    let server = MockServer::start().await;
    answer(
        &server,
        ResponseTemplate::new(200).set_body_raw(
            "event: response.created\ndata: {\"type\": \"response.created\", oops\n\n",
            "text/event-stream",
        ),
    )
    .await;
    let error = stream_error(collect_stream(&model(&server), &request).await);
    assert!(
        matches!(&error, CompletionError::Decode(text) if text.contains("{\"type\": \"response.created\", oops")),
        "{error:?}"
    );
}

#[tokio::test]
async fn the_api_key_never_shows_in_debug_output_or_errors() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ResponseTemplate::new(401).set_body_string("bad key"))
        .mount(&server)
        .await;
    let client = client(&server);
    let model = client.responses("gpt-5");
    assert!(!format!("{client:?}").contains(KEY));
    assert!(!format!("{model:?}").contains(KEY));
    assert!(!format!("{model:#?}").contains("very-secret"));

    let request = CompletionRequest::new(vec![Message::user("q")]);
    let error = model.completion(&request).await.unwrap_err();
    assert!(matches!(error, CompletionError::Http { status: 401, .. }));
    assert!(!format!("{error} {error:?}").contains(KEY));
    let error = model.stream(&request).await.err().unwrap();
    assert!(!format!("{error} {error:?}").contains(KEY));

    // A connection that fails: nothing listens on the port any more.
    let uri = server.uri();
    drop(server);
    let unreachable = OpenAI::builder()
        .api_key(KEY)
        .base_url(uri)
        .retry(RetryPolicy::none())
        .build()
        .unwrap()
        .responses("gpt-5");
    let error = unreachable.completion(&request).await.unwrap_err();
    assert!(!format!("{error} {error:?}").contains(KEY));
}

/// A tool call on the first model call, the answer on the second.
async fn agent_server(first: ResponseTemplate, second: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(first)
        .up_to_n_times(1)
        .mount(&server)
        .await;
    answer(&server, second).await;
    server
}

/// What the agent sent on its second call: the tool call and its result.
async fn assert_second_request_carries_the_tool_round(server: &MockServer) {
    let bodies = request_bodies(server).await;
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["instructions"], json!("You add."));
    assert_eq!(bodies[0]["tools"][0]["name"], json!("add"));
    assert_eq!(bodies[0]["tools"][0]["type"], json!("function"));
    let input = bodies[1]["input"].as_array().unwrap();
    assert_eq!(
        input[1..],
        [
            json!({
                "type": "function_call",
                "call_id": "call_1",
                "name": "add",
                "arguments": "{\"a\":20,\"b\":22}",
            }),
            json!({"type": "function_call_output", "call_id": "call_1", "output": "42"}),
        ]
    );
}

#[tokio::test]
async fn an_agent_runs_a_tool_loop_through_the_responses_api() {
    let server = agent_server(
        ok(response(
            "resp_a",
            vec![call_item("fc_1", "call_1", "add", r#"{"a":20,"b":22}"#)],
        )),
        ok(response("resp_b", vec![message_item("m", "It is 42.")])),
    )
    .await;
    let agent = AgentBuilder::new(model(&server))
        .preamble("You add.")
        .tool(add_tool())
        .build();
    let answer = agent.prompt("20 + 22?").extended_details().await.unwrap();
    assert_eq!(answer.output, "It is 42.");
    assert_eq!(answer.turns(), 2);
    assert_eq!(answer.usage(), Usage::new(22, 14));
    assert_second_request_carries_the_tool_round(&server).await;
}

#[tokio::test]
async fn an_agent_streams_a_tool_loop_through_the_responses_api() {
    let call_response = response(
        "resp_a",
        vec![call_item("fc_1", "call_1", "add", r#"{"a":20,"b":22}"#)],
    );
    let mut added = call_item("fc_1", "call_1", "add", "");
    added["status"] = json!("in_progress");
    let first = sse(&[
        json!({"type": "response.created", "response": {"id": "resp_a", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": added}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": "{\"a\":20,"}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": "\"b\":22}"}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": call_item("fc_1", "call_1", "add", r#"{"a":20,"b":22}"#)}),
        json!({"type": "response.completed", "response": call_response}),
    ]);
    let second = sse(&[
        json!({"type": "response.created", "response": {"id": "resp_b", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "m", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0, "delta": "It is "}),
        json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0, "delta": "42."}),
        json!({"type": "response.completed", "response": response("resp_b", vec![message_item("m", "It is 42.")])}),
    ]);
    let server = agent_server(first, second).await;
    let agent = AgentBuilder::new(model(&server))
        .preamble("You add.")
        .tool(add_tool())
        .build();
    let items: Vec<_> = agent.prompt("20 + 22?").stream().collect().await;

    let mut text = String::new();
    let mut arguments = String::new();
    let mut results = Vec::new();
    let mut last = None;
    for item in items {
        match item.unwrap() {
            StreamItem::Text(delta) => text.push_str(&delta),
            StreamItem::ToolCallDelta {
                tool_call_id,
                delta,
                ..
            } => {
                assert_eq!(tool_call_id, "call_1");
                arguments.push_str(&delta);
            }
            StreamItem::ToolResult {
                tool_call_id,
                result,
                ..
            } => results.push((tool_call_id, result)),
            StreamItem::Final(response) => last = Some(response),
            _ => {}
        }
    }
    assert_eq!(text, "It is 42.");
    assert_eq!(arguments, "{\"a\":20,\"b\":22}");
    assert_eq!(results, vec![("call_1".to_owned(), "42".to_owned())]);
    let last = last.expect("the run ends with its final response");
    assert_eq!(last.output, "It is 42.");
    assert_eq!(last.usage(), Usage::new(22, 14));
    assert_second_request_carries_the_tool_round(&server).await;
}
