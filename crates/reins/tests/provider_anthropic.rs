//! The Anthropic Messages API against a mock server: what reins sends, what it reads.

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
use reins::providers::anthropic::{
    self, Anthropic, AnthropicModel, DEFAULT_MAX_TOKENS, REDACTED_THINKING_PREFIX,
};
use reins::tool::ToolDefinition;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-ant-test-very-secret-key";

fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        max_retries: 2,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(5),
    }
}

fn client(server: &MockServer) -> Anthropic {
    Anthropic::builder()
        .api_key(KEY)
        .base_url(server.uri())
        .retry(fast_retries())
        .build()
        .unwrap()
}

fn model(server: &MockServer) -> AnthropicModel {
    client(server).completion(anthropic::CLAUDE_SONNET_4_5)
}

/// A mock of `POST /v1/messages` that checks the authentication and version headers.
fn messages_endpoint() -> wiremock::MockBuilder {
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .and(header("anthropic-version", "2023-06-01"))
}

fn text_reply(text: &str) -> Value {
    json!({
        "id": "msg_text",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": null,
        "usage": {"input_tokens": 12, "output_tokens": 3}
    })
}

fn parallel_tool_reply() -> Value {
    json!({
        "id": "msg_tools",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "text", "text": "I'll add both pairs."},
            {"type": "tool_use", "id": "toolu_a", "name": "add", "input": {"a": 1, "b": 2}},
            {"type": "tool_use", "id": "toolu_b", "name": "add", "input": {"a": 3, "b": 4}}
        ],
        "stop_reason": "tool_use",
        "stop_sequence": null,
        "usage": {"input_tokens": 20, "output_tokens": 9}
    })
}

fn error_body(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|request| serde_json::from_slice(&request.body).unwrap())
        .collect()
}

fn parts(response: &CompletionResponse) -> Vec<AssistantContent> {
    response.content.iter().cloned().collect()
}

fn add_definition() -> ToolDefinition {
    ToolDefinition {
        name: "add".into(),
        description: "Adds two integers.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"]
        }),
    }
}

/// A server-sent event stream of `(event type, data)` pairs, as Anthropic writes them.
fn sse(events: &[Value]) -> String {
    let mut body = String::new();
    for event in events {
        let name = event["type"].as_str().unwrap();
        body.push_str(&format!("event: {name}\ndata: {event}\n\n"));
    }
    body
}

fn sse_response(events: &[Value]) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(sse(events), "text/event-stream")
}

async fn collect_stream(
    model: &AnthropicModel,
    request: &CompletionRequest,
) -> Vec<Result<StreamChunk, CompletionError>> {
    model.stream(request).await.unwrap().collect().await
}

#[tokio::test]
async fn a_text_reply_is_read_with_usage_id_and_raw_json() {
    let server = MockServer::start().await;
    messages_endpoint()
        .respond_with(ResponseTemplate::new(200).set_body_json(text_reply("Hello!")))
        .expect(1)
        .mount(&server)
        .await;
    let response = model(&server)
        .completion(&CompletionRequest::new(vec![Message::user("Hi")]))
        .await
        .unwrap();
    assert_eq!(response.text(), "Hello!");
    assert_eq!(parts(&response), vec![AssistantContent::text("Hello!")]);
    assert_eq!(response.usage, Usage::new(12, 3));
    assert_eq!(response.finish_reason, Some(FinishReason::Stop));
    assert_eq!(response.response_id.as_deref(), Some("msg_text"));
    assert_eq!(response.raw.json().unwrap()["id"], "msg_text");

    let body = &bodies(&server).await[0];
    assert_eq!(
        body,
        &json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": DEFAULT_MAX_TOKENS,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
        }),
        "no system, tools or temperature when the request has none; max_tokens always"
    );
}

#[tokio::test]
async fn a_tool_loop_request_has_system_merged_tool_results_tools_and_params() {
    let server = MockServer::start().await;
    messages_endpoint()
        .and(header("x-extra", "1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(text_reply("3 and 7")))
        .expect(1)
        .mount(&server)
        .await;
    let model = Anthropic::builder()
        .api_key(KEY)
        .base_url(format!("{}/", server.uri()))
        .beta("feature-a")
        .beta("feature-b")
        .header("x-extra", "1")
        .retry(fast_retries())
        .build()
        .unwrap()
        .completion(anthropic::CLAUDE_OPUS_4_5);
    let request = CompletionRequest {
        preamble: Some("Be brief.".into()),
        history: vec![
            Message::system("Answer in English."),
            Message::user("What are 1+2 and 3+4?"),
            Message::Assistant {
                content: OneOrMany::many([
                    AssistantContent::reasoning("unsigned thoughts from elsewhere"),
                    AssistantContent::text("Adding."),
                    AssistantContent::tool_call("toolu_a", "add", json!({"a": 1, "b": 2})),
                    AssistantContent::tool_call("toolu_b", "add", json!({"a": 3, "b": 4})),
                ])
                .unwrap(),
            },
            Message::tool_result("toolu_a", "add", "3"),
            Message::tool_result("toolu_b", "add", "7"),
            Message::user("Now answer."),
        ],
        documents: vec![Document::new("d1", "Numbers are fun.")],
        tools: Arc::from(vec![add_definition()]),
        tool_choice: Some(ToolChoice::Specific("add".into())),
        temperature: Some(0.2),
        max_tokens: Some(100),
        additional_params: Some(json!({"top_k": 5, "temperature": 0.3})),
        output_schema: None,
    };
    let response = model.completion(&request).await.unwrap();
    assert_eq!(response.text(), "3 and 7");

    let received = server.received_requests().await.unwrap();
    let beta = received[0].headers.get("anthropic-beta").unwrap();
    assert_eq!(beta.to_str().unwrap(), "feature-a,feature-b");
    let body = &bodies(&server).await[0];
    assert_eq!(
        body,
        &json!({
            "model": "claude-opus-4-5",
            "max_tokens": 100,
            "system": "Be brief.\n\nAnswer in English.\n\nContext documents:\n<document id=\"d1\">\nNumbers are fun.\n</document>\n",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "What are 1+2 and 3+4?"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Adding."},
                    {"type": "tool_use", "id": "toolu_a", "name": "add", "input": {"a": 1, "b": 2}},
                    {"type": "tool_use", "id": "toolu_b", "name": "add", "input": {"a": 3, "b": 4}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a", "content": "3"},
                    {"type": "tool_result", "tool_use_id": "toolu_b", "content": "7"},
                    {"type": "text", "text": "Now answer."}
                ]}
            ],
            "tools": [{
                "name": "add",
                "description": "Adds two integers.",
                "input_schema": add_definition().parameters
            }],
            "tool_choice": {"type": "tool", "name": "add"},
            "temperature": 0.3,
            "top_k": 5
        })
    );
}

#[tokio::test]
async fn tool_choice_maps_to_anthropic_forms() {
    let server = MockServer::start().await;
    let model = model(&server);
    let cases = [
        (ToolChoice::Auto, json!({"type": "auto"})),
        (ToolChoice::Required, json!({"type": "any"})),
        (
            ToolChoice::Specific("add".into()),
            json!({"type": "tool", "name": "add"}),
        ),
        (ToolChoice::None, json!({"type": "none"})),
    ];
    for (choice, expected) in cases {
        let request = CompletionRequest {
            tools: Arc::from(vec![add_definition()]),
            tool_choice: Some(choice),
            ..CompletionRequest::new(vec![Message::user("hi")])
        };
        let body = model.request_body(&request, false).unwrap();
        assert_eq!(body["tool_choice"], expected);
    }
    // Without tools there is nothing to choose from: no tool_choice is sent.
    let request = CompletionRequest {
        tool_choice: Some(ToolChoice::Auto),
        ..CompletionRequest::new(vec![Message::user("hi")])
    };
    let body = model.request_body(&request, true).unwrap();
    assert!(body.get("tool_choice").is_none() && body.get("tools").is_none());
    assert_eq!(body["stream"], true);
}

#[tokio::test]
async fn requests_anthropic_cannot_take_are_refused_before_sending() {
    let server = MockServer::start().await;
    let model = model(&server);
    let native = CompletionRequest {
        output_schema: Some(json!({"type": "object"})),
        ..CompletionRequest::new(vec![Message::user("hi")])
    };
    assert!(!model.supports_native_output());
    assert!(matches!(
        model.completion(&native).await,
        Err(CompletionError::InvalidRequest(_))
    ));
    let bad_params = CompletionRequest {
        additional_params: Some(json!(["not", "an", "object"])),
        ..CompletionRequest::new(vec![Message::user("hi")])
    };
    assert!(matches!(
        model.stream(&bad_params).await,
        Err(CompletionError::InvalidRequest(_))
    ));
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn parallel_tool_calls_are_read_in_order() {
    let server = MockServer::start().await;
    messages_endpoint()
        .respond_with(ResponseTemplate::new(200).set_body_json(parallel_tool_reply()))
        .mount(&server)
        .await;
    let response = model(&server)
        .completion(&CompletionRequest::new(vec![Message::user("1+2, 3+4?")]))
        .await
        .unwrap();
    assert_eq!(
        parts(&response),
        vec![
            AssistantContent::text("I'll add both pairs."),
            AssistantContent::tool_call("toolu_a", "add", json!({"a": 1, "b": 2})),
            AssistantContent::tool_call("toolu_b", "add", json!({"a": 3, "b": 4})),
        ]
    );
    assert_eq!(response.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(response.tool_calls().count(), 2);
}

#[tokio::test]
async fn stop_reasons_map_to_finish_reasons() {
    let cases = [
        ("end_turn", FinishReason::Stop),
        ("stop_sequence", FinishReason::Stop),
        ("max_tokens", FinishReason::Length),
        ("tool_use", FinishReason::ToolCalls),
        ("refusal", FinishReason::ContentFilter),
        ("pause_turn", FinishReason::Other("pause_turn".into())),
    ];
    for (stop_reason, expected) in cases {
        let server = MockServer::start().await;
        let mut reply = text_reply("x");
        reply["stop_reason"] = json!(stop_reason);
        messages_endpoint()
            .respond_with(ResponseTemplate::new(200).set_body_json(reply))
            .mount(&server)
            .await;
        let response = model(&server)
            .completion(&CompletionRequest::new(vec![Message::user("hi")]))
            .await
            .unwrap();
        assert_eq!(response.finish_reason, Some(expected), "{stop_reason}");
    }
}

fn thinking_reply() -> Value {
    json!({
        "id": "msg_think",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "I should add.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
            {"type": "tool_use", "id": "toolu_t", "name": "add", "input": {"a": 20, "b": 22}}
        ],
        "stop_reason": "tool_use",
        "stop_sequence": null,
        "usage": {"input_tokens": 30, "output_tokens": 40, "cache_read_input_tokens": 5}
    })
}

#[tokio::test]
async fn thinking_blocks_round_trip_with_their_signatures() {
    let server = MockServer::start().await;
    messages_endpoint()
        .respond_with(ResponseTemplate::new(200).set_body_json(thinking_reply()))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    messages_endpoint()
        .respond_with(ResponseTemplate::new(200).set_body_json(text_reply("42")))
        .mount(&server)
        .await;
    let model = model(&server);
    let mut history = vec![Message::user("20+22?")];
    let first = model
        .completion(&CompletionRequest::new(history.clone()))
        .await
        .unwrap();
    assert_eq!(
        parts(&first),
        vec![
            AssistantContent::Reasoning(Reasoning {
                text: "I should add.".into(),
                signature: Some("EqQBCgIYAhIM1gbcDa9GJwZA2b3h".into()),
            }),
            AssistantContent::Reasoning(Reasoning {
                text: String::new(),
                signature: Some(format!(
                    "{REDACTED_THINKING_PREFIX}EmwKAhgBEgy3va3pzix/LafPsn4a"
                )),
            }),
            AssistantContent::tool_call("toolu_t", "add", json!({"a": 20, "b": 22})),
        ]
    );
    assert_eq!(
        first.usage,
        Usage::new(35, 40),
        "cache reads count as input"
    );

    history.push(Message::Assistant {
        content: first.content,
    });
    history.push(Message::tool_result("toolu_t", "add", "42"));
    model
        .completion(&CompletionRequest::new(history))
        .await
        .unwrap();
    let body = &bodies(&server).await[1];
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": thinking_reply()["content"]}),
        "the assistant turn goes back exactly as it came"
    );
    assert_eq!(
        body["messages"][2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_t", "content": "42"}
        ]})
    );
}

#[tokio::test]
async fn a_400_is_reported_with_its_body_and_not_retried() {
    let server = MockServer::start().await;
    messages_endpoint()
        .respond_with(ResponseTemplate::new(400).set_body_json(error_body(
            "invalid_request_error",
            "max_tokens: Field required",
        )))
        .expect(1)
        .mount(&server)
        .await;
    let error = model(&server)
        .completion(&CompletionRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap_err();
    let CompletionError::Http { status, body } = &error else {
        panic!("expected an HTTP error, got {error:?}");
    };
    assert_eq!(*status, 400);
    assert!(body.contains("invalid_request_error") && body.contains("max_tokens"));
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried_then_succeeds() {
    let server = MockServer::start().await;
    messages_endpoint()
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_json(error_body("rate_limit_error", "Slow down")),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    messages_endpoint()
        .respond_with(ResponseTemplate::new(200).set_body_json(text_reply("ok")))
        .mount(&server)
        .await;
    let response = model(&server)
        .completion(&CompletionRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap();
    assert_eq!(response.text(), "ok");
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_529_overloaded_is_retried_and_reported_when_it_persists() {
    let server = MockServer::start().await;
    messages_endpoint()
        .respond_with(
            ResponseTemplate::new(529).set_body_json(error_body("overloaded_error", "Overloaded")),
        )
        .up_to_n_times(2)
        .mount(&server)
        .await;
    messages_endpoint()
        .respond_with(ResponseTemplate::new(200).set_body_json(text_reply("ok")))
        .mount(&server)
        .await;
    let model = model(&server);
    let request = CompletionRequest::new(vec![Message::user("hi")]);
    assert_eq!(model.completion(&request).await.unwrap().text(), "ok");
    assert_eq!(server.received_requests().await.unwrap().len(), 3);

    let server = MockServer::start().await;
    messages_endpoint()
        .respond_with(
            ResponseTemplate::new(529).set_body_json(error_body("overloaded_error", "Overloaded")),
        )
        .expect(3)
        .mount(&server)
        .await;
    let error = self::model(&server)
        .stream(&request)
        .await
        .err()
        .expect("the stream is refused");
    assert!(
        matches!(&error, CompletionError::Http { status: 529, body } if body.contains("overloaded_error")),
        "{error:?}"
    );
}

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
async fn a_full_stream_yields_chunks_and_ends_with_the_blocking_response() {
    let (events, blocking) = full_stream();
    let server = MockServer::start().await;
    messages_endpoint()
        .respond_with(sse_response(&events))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    messages_endpoint()
        .respond_with(ResponseTemplate::new(200).set_body_json(blocking))
        .mount(&server)
        .await;
    let model = model(&server);
    let request = CompletionRequest::new(vec![Message::user("1+2, 3+4?")]);
    let mut chunks = collect_stream(&model, &request).await;
    let expected = model.completion(&request).await.unwrap();
    let bodies = bodies(&server).await;
    assert_eq!(bodies[0]["stream"], true);
    assert!(bodies[1].get("stream").is_none());

    let Some(Ok(StreamChunk::Done(done))) = chunks.pop() else {
        panic!("the stream ends with Done: {chunks:?}");
    };
    assert_eq!(parts(&done), parts(&expected));
    assert_eq!(done.usage, expected.usage);
    assert_eq!(done.usage, Usage::new(25, 57));
    assert_eq!(done.finish_reason, expected.finish_reason);
    assert_eq!(done.response_id, expected.response_id);
    let (done_raw, expected_raw) = (done.raw.json().unwrap(), expected.raw.json().unwrap());
    assert_eq!(done_raw["content"], expected_raw["content"]);
    assert_eq!(done_raw["usage"], expected_raw["usage"]);

    let deltas: Vec<String> = chunks
        .into_iter()
        .map(|chunk| match chunk.unwrap() {
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
async fn a_stream_cut_before_message_stop_is_an_error_saying_what_arrived() {
    let (mut events, _) = full_stream();
    events.truncate(13); // through the second text delta
    let server = MockServer::start().await;
    messages_endpoint()
        .respond_with(sse_response(&events))
        .mount(&server)
        .await;
    let mut chunks = collect_stream(
        &model(&server),
        &CompletionRequest::new(vec![Message::user("hi")]),
    )
    .await;
    let Some(Err(CompletionError::Decode(message))) = chunks.pop() else {
        panic!("a cut stream ends with an error: {chunks:?}");
    };
    assert!(message.contains("message_stop"), "{message}");
    assert!(message.contains("13 event(s)"), "{message}");
    assert!(message.contains("text (12 bytes)"), "{message}");
    assert!(
        chunks
            .iter()
            .all(|chunk| !matches!(chunk, Ok(StreamChunk::Done(_)))),
        "no shorter answer is made up"
    );
    assert!(chunks.iter().all(Result::is_ok));
}

#[tokio::test]
async fn an_error_event_mid_stream_is_an_error_naming_it() {
    let (mut events, _) = full_stream();
    events.truncate(4);
    events.push(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    );
    let server = MockServer::start().await;
    messages_endpoint()
        .respond_with(sse_response(&events))
        .mount(&server)
        .await;
    let chunks = collect_stream(
        &model(&server),
        &CompletionRequest::new(vec![Message::user("hi")]),
    )
    .await;
    let errors: Vec<String> = chunks
        .iter()
        .filter_map(|chunk| chunk.as_ref().err().map(ToString::to_string))
        .collect();
    assert_eq!(errors.len(), 1, "{chunks:?}");
    assert!(errors[0].contains("error` event"), "{}", errors[0]);
    assert!(
        errors[0].contains("overloaded_error: Overloaded"),
        "{}",
        errors[0]
    );
    assert!(
        matches!(chunks.last(), Some(Err(_))),
        "the error ends the stream"
    );
}

#[tokio::test]
async fn a_malformed_event_is_a_decode_error_quoting_it() {
    let server = MockServer::start().await;
    let body = format!(
        "{}event: content_block_delta\ndata: {{\"type\": \"content_block_delta\", oops}}\n\n",
        sse(&full_stream().0[..1])
    );
    messages_endpoint()
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
        .mount(&server)
        .await;
    let chunks = collect_stream(
        &model(&server),
        &CompletionRequest::new(vec![Message::user("hi")]),
    )
    .await;
    let Some(Err(CompletionError::Decode(message))) = chunks.last() else {
        panic!("a malformed event is a decode error: {chunks:?}");
    };
    assert!(message.contains("oops"), "{message}");
    assert!(message.contains("content_block_delta"), "{message}");
}

#[tokio::test]
async fn the_api_key_never_shows_in_debug_output_or_errors() {
    let server = MockServer::start().await;
    messages_endpoint()
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_json(error_body("authentication_error", "invalid x-api-key")),
        )
        .mount(&server)
        .await;
    let builder = Anthropic::builder().api_key(KEY).base_url(server.uri());
    assert!(!format!("{builder:?}").contains(KEY));
    let client = client(&server);
    let model = client.completion(anthropic::CLAUDE_HAIKU_4_5);
    assert!(!format!("{client:?}").contains(KEY));
    assert!(!format!("{model:?}").contains(KEY));

    let request = CompletionRequest::new(vec![Message::user("hi")]);
    let error = model.completion(&request).await.unwrap_err();
    assert!(matches!(error, CompletionError::Http { status: 401, .. }));
    let streamed = model.stream(&request).await.err().unwrap();

    // A connection failure, after retries.
    let unreachable = Anthropic::builder()
        .api_key(KEY)
        .base_url("http://127.0.0.1:9")
        .retry(fast_retries())
        .build()
        .unwrap()
        .completion(anthropic::CLAUDE_HAIKU_4_5);
    let transport = unreachable.completion(&request).await.unwrap_err();
    for error in [error, streamed, transport] {
        let text = format!("{error} {error:?}");
        assert!(!text.contains(KEY), "{text}");
    }
}

#[tokio::test]
async fn an_invalid_key_or_header_fails_the_build() {
    assert!(Anthropic::builder().api_key("bad\nkey").build().is_err());
    assert!(
        Anthropic::builder()
            .api_key(KEY)
            .header("bad header", "x")
            .build()
            .is_err()
    );
    let built = Anthropic::builder().build();
    assert!(built.is_ok(), "a key is optional (e.g. behind a gateway)");
}

/// The agent's first model call asks for a tool; the second answers.
async fn mount_agent_turns(server: &MockServer, stream: bool) {
    let tool_turn = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "text", "text": "Let me add."},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 20, "b": 22}}
        ],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 50, "output_tokens": 20}
    });
    let answer_turn = text_reply("The sum is 42.");
    let (first, second) = if stream {
        (
            sse_response(&message_as_events(&tool_turn)),
            sse_response(&message_as_events(&answer_turn)),
        )
    } else {
        (
            ResponseTemplate::new(200).set_body_json(tool_turn),
            ResponseTemplate::new(200).set_body_json(answer_turn),
        )
    };
    messages_endpoint()
        .respond_with(first)
        .up_to_n_times(1)
        .mount(server)
        .await;
    messages_endpoint()
        .respond_with(second)
        .up_to_n_times(1)
        .mount(server)
        .await;
}

/// The events Anthropic streams for a message of text and tool_use blocks.
fn message_as_events(message: &Value) -> Vec<Value> {
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    let mut events = vec![json!({"type": "message_start", "message": start})];
    for (index, block) in message["content"].as_array().unwrap().iter().enumerate() {
        match block["type"].as_str().unwrap() {
            "text" => {
                events.push(json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "text", "text": ""}}));
                events.push(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": block["text"]}}));
            }
            _ => {
                events.push(json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}));
                events.push(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": block["input"].to_string()}}));
            }
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(json!({"type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": null},
        "usage": {"output_tokens": message["usage"]["output_tokens"]}}));
    events.push(json!({"type": "message_stop"}));
    events
}

async fn assert_agent_requests(server: &MockServer) {
    let bodies = bodies(server).await;
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["system"], "You add numbers with the add tool.");
    assert_eq!(bodies[0]["tools"][0]["name"], "add");
    assert_eq!(bodies[0]["max_tokens"], 256);
    let messages = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["content"][1]["type"], "tool_use");
    assert_eq!(
        messages[1]["content"][1]["input"],
        json!({"a": 20, "b": 22})
    );
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(messages[2]["content"][0]["type"], "tool_result");
    assert_eq!(messages[2]["content"][0]["tool_use_id"], "toolu_1");
    assert_eq!(messages[2]["content"][0]["content"], "42");
}

fn agent(server: &MockServer) -> reins::agent::Agent {
    AgentBuilder::new(model(server))
        .preamble("You add numbers with the add tool.")
        .max_tokens(256)
        .tool(add_tool())
        .build()
}

#[tokio::test]
async fn an_agent_runs_a_tool_loop_against_the_api() {
    let server = MockServer::start().await;
    mount_agent_turns(&server, false).await;
    let response = agent(&server)
        .prompt("What is 20 + 22?")
        .extended_details()
        .await
        .unwrap();
    assert_eq!(response.output, "The sum is 42.");
    assert_eq!(response.turns(), 2);
    assert_eq!(response.usage(), Usage::new(62, 23));
    assert_agent_requests(&server).await;
}

#[tokio::test]
async fn an_agent_streams_a_tool_loop_against_the_api() {
    let server = MockServer::start().await;
    mount_agent_turns(&server, true).await;
    let items: Vec<_> = agent(&server)
        .prompt("What is 20 + 22?")
        .stream()
        .collect()
        .await;
    let Some(Ok(StreamItem::Final(response))) = items.last() else {
        panic!("the stream ends with the final response: {items:?}");
    };
    assert_eq!(response.output, "The sum is 42.");
    assert_eq!(response.usage(), Usage::new(62, 23));
    assert!(items.iter().any(|item| matches!(
        item,
        Ok(StreamItem::ToolResult { tool_name, result, .. }) if tool_name == "add" && result == "42"
    )));
    let text: String = items
        .iter()
        .filter_map(|item| match item {
            Ok(StreamItem::Text(delta)) => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Let me add.The sum is 42.");
    assert_agent_requests(&server).await;
}
