//! The Chat Completions wire format against a mock server: what reins sends, what it reads.

use futures::StreamExt;
use reins::agent::{AgentBuilder, PromptError, StreamItem};
use reins::completion::{
    CompletionError, CompletionModel, CompletionRequest, FinishReason, StreamChunk, Usage,
};
use reins::message::{AssistantContent, Document, Message, OneOrMany, ToolChoice};
use reins::providers::RetryPolicy;
use reins::providers::openai::OpenAI;
use reins::providers::openai_compatible::OpenAICompatible;
use reins::tool::{ToolDefinition, tool_fn};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-test-very-secret-key";

fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        max_retries: 2,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(5),
    }
}

fn client(server: &MockServer) -> OpenAI {
    OpenAI::builder()
        .api_key(KEY)
        .base_url(format!("{}/v1", server.uri()))
        .organization("org-1")
        .retry(fast_retries())
        .build()
        .unwrap()
}

fn text_reply(text: &str) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop"
        }],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    })
}

fn tool_reply() -> Value {
    json!({
        "id": "chatcmpl-2",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "add", "arguments": "{\"a\":1,\"b\":2}"}},
                    {"id": "call_b", "type": "function", "function": {"name": "add", "arguments": "{\"a\":3,\"b\":4}"}}
                ]
            },
            "finish_reason": "tool_calls"
        }],
        "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}
    })
}

async fn body_of(server: &MockServer, index: usize) -> Value {
    let requests = server.received_requests().await.unwrap();
    serde_json::from_slice(&requests[index].body).unwrap()
}

fn full_request() -> CompletionRequest {
    CompletionRequest {
        preamble: Some("Be brief.".into()),
        history: vec![
            Message::user("What is 1+2?"),
            Message::Assistant {
                content: OneOrMany::many([
                    AssistantContent::reasoning("private thoughts"),
                    AssistantContent::tool_call("call_0", "add", json!({"a": 1, "b": 2})),
                ])
                .unwrap(),
            },
            Message::tool_result("call_0", "add", "3"),
        ],
        documents: vec![Document::new("d1", "Numbers are fun.")],
        tools: Arc::from(vec![ToolDefinition {
            name: "add".into(),
            description: "Adds.".into(),
            parameters: json!({"type": "object", "properties": {"a": {"type": "integer"}}}),
        }]),
        tool_choice: Some(ToolChoice::Specific("add".into())),
        temperature: Some(0.2),
        max_tokens: Some(100),
        additional_params: Some(json!({"seed": 7, "temperature": 0.3})),
        output_schema: None,
    }
}

#[tokio::test]
async fn the_request_body_follows_the_chat_completions_format() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .and(header("openai-organization", "org-1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(text_reply("3")))
        .mount(&server)
        .await;
    let model = client(&server).completion("gpt-5.5");
    let response = model.completion(&full_request()).await.unwrap();
    assert_eq!(response.text(), "3");
    assert_eq!(response.usage, Usage::new(12, 3));
    assert_eq!(response.finish_reason, Some(FinishReason::Stop));
    assert_eq!(response.response_id.as_deref(), Some("chatcmpl-1"));
    assert_eq!(response.raw.json().unwrap()["id"], "chatcmpl-1");

    let body = body_of(&server, 0).await;
    assert_eq!(
        body,
        json!({
            "model": "gpt-5.5",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Context documents:\n<document id=\"d1\">\nNumbers are fun.\n</document>\n"},
                {"role": "user", "content": "What is 1+2?"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_0", "type": "function", "function": {"name": "add", "arguments": "{\"a\":1,\"b\":2}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_0", "content": "3"}
            ],
            "tools": [{"type": "function", "function": {
                "name": "add", "description": "Adds.",
                "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}
            }}],
            "tool_choice": {"type": "function", "function": {"name": "add"}},
            "temperature": 0.3,
            "max_completion_tokens": 100,
            "seed": 7
        })
    );
}

#[tokio::test]
async fn parallel_tool_calls_are_read_in_order() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(tool_reply()))
        .mount(&server)
        .await;
    let model = client(&server).completion("gpt-5.5");
    let response = model
        .completion(&CompletionRequest::new(vec![Message::user("x")]))
        .await
        .unwrap();
    let calls: Vec<_> = response
        .tool_calls()
        .map(|c| (c.id.clone(), c.arguments.clone()))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("call_a".to_string(), json!({"a": 1, "b": 2})),
            ("call_b".to_string(), json!({"a": 3, "b": 4}))
        ]
    );
    assert_eq!(response.finish_reason, Some(FinishReason::ToolCalls));
}

#[tokio::test]
async fn reasoning_content_is_read_as_reasoning() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "x",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "42", "reasoning_content": "6 times 7"}, "finish_reason": "stop"}]
        })))
        .mount(&server)
        .await;
    let model = client(&server).completion("deepseek-reasoner");
    let response = model
        .completion(&CompletionRequest::new(vec![Message::user("x")]))
        .await
        .unwrap();
    assert_eq!(
        response.content.first(),
        &AssistantContent::reasoning("6 times 7")
    );
    assert_eq!(response.text(), "42");
}

#[tokio::test]
async fn client_errors_are_not_retried_and_keep_the_provider_body() {
    let server = MockServer::start().await;
    let body = json!({"error": {"message": "Invalid 'messages'", "type": "invalid_request_error"}});
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_json(body))
        .mount(&server)
        .await;
    let model = client(&server).completion("gpt-5.5");
    let error = model
        .completion(&CompletionRequest::new(vec![Message::user("x")]))
        .await
        .unwrap_err();
    let CompletionError::Http { status, body } = &error else {
        panic!("expected an HTTP error, got {error:?}");
    };
    assert_eq!(*status, 400);
    assert!(body.contains("invalid_request_error"));
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    assert!(!format!("{error:?} {error}").contains(KEY));
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "0"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_string("overloaded"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(text_reply("finally")))
        .mount(&server)
        .await;
    let model = client(&server).completion("gpt-5.5");
    let response = model
        .completion(&CompletionRequest::new(vec![Message::user("x")]))
        .await
        .unwrap();
    assert_eq!(response.text(), "finally");
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn retries_are_bounded() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("boom"))
        .mount(&server)
        .await;
    let model = client(&server).completion("gpt-5.5");
    let error = model
        .completion(&CompletionRequest::new(vec![Message::user("x")]))
        .await
        .unwrap_err();
    assert!(matches!(error, CompletionError::Http { status: 500, ref body } if body == "boom"));
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        3,
        "1 try + 2 retries"
    );
}

#[tokio::test]
async fn a_body_that_is_not_json_is_a_decode_error_quoting_it() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>gateway</html>"))
        .mount(&server)
        .await;
    let model = client(&server).completion("gpt-5.5");
    let error = model
        .completion(&CompletionRequest::new(vec![Message::user("x")]))
        .await
        .unwrap_err();
    assert!(matches!(&error, CompletionError::Decode(m) if m.contains("<html>gateway</html>")));
}

fn sse(events: &[Value]) -> String {
    let mut body = String::new();
    for event in events {
        body.push_str(&format!("data: {event}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    body
}

fn stream_events() -> Vec<Value> {
    let chunk = |delta: Value, finish: Value| json!({"id": "chatcmpl-s", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    vec![
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(json!({"reasoning_content": "Let me add."}), Value::Null),
        chunk(json!({"content": "Adding "}), Value::Null),
        chunk(json!({"content": "now."}), Value::Null),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "add", "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"a\":1,"}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "add", "arguments": "{\"a\":3,\"b\":4}"}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"b\":2}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
        json!({"id": "chatcmpl-s", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}}),
    ]
}

fn blocking_equivalent() -> Value {
    json!({
        "id": "chatcmpl-s",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Adding now.", "reasoning_content": "Let me add.",
            "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "add", "arguments": "{\"a\":1,\"b\":2}"}},
                {"id": "call_b", "type": "function", "function": {"name": "add", "arguments": "{\"a\":3,\"b\":4}"}}
            ]
        }}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}
    })
}

#[tokio::test]
async fn a_stream_assembles_into_what_the_blocking_call_returns() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(sse(&stream_events()), "text/event-stream"),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(blocking_equivalent()))
        .mount(&server)
        .await;
    let model = client(&server).completion("gpt-5.5");
    let request = CompletionRequest::new(vec![Message::user("x")]);
    let mut stream = model.stream(&request).await.unwrap();
    let mut text = String::new();
    let mut fragments = Vec::new();
    let mut done = None;
    while let Some(chunk) = stream.next().await {
        match chunk.unwrap() {
            StreamChunk::Text(delta) => text.push_str(&delta),
            StreamChunk::ToolCall { id, name, delta } => fragments.push((id, name, delta)),
            StreamChunk::Reasoning(_) => {}
            StreamChunk::Done(response) => done = Some(response),
        }
    }
    assert_eq!(text, "Adding now.");
    assert_eq!(
        fragments[0],
        ("call_a".into(), Some("add".into()), String::new())
    );
    assert_eq!(fragments[1], ("call_a".into(), None, "{\"a\":1,".into()));
    let streamed = done.expect("the stream ends with Done");
    let blocking = model.completion(&request).await.unwrap();
    assert_eq!(streamed.content, blocking.content);
    assert_eq!(streamed.usage, blocking.usage);
    assert_eq!(streamed.finish_reason, blocking.finish_reason);
    assert_eq!(streamed.response_id, blocking.response_id);
    let sent = body_of(&server, 0).await;
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["stream_options"], json!({"include_usage": true}));
}

#[tokio::test]
async fn a_cut_stream_is_an_error_not_a_shorter_answer() {
    let server = MockServer::start().await;
    let cut =
        "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Half an\"}}]}\n\n";
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(cut, "text/event-stream"))
        .mount(&server)
        .await;
    let model = client(&server).completion("gpt-5.5");
    let mut stream = model
        .stream(&CompletionRequest::new(vec![Message::user("x")]))
        .await
        .unwrap();
    let mut last = None;
    while let Some(chunk) = stream.next().await {
        last = Some(chunk);
    }
    let error = last.unwrap().unwrap_err();
    assert!(error.to_string().contains("without [DONE]"), "{error}");
}

#[tokio::test]
async fn malformed_stream_json_is_an_error_quoting_it() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw("data: {not json\n\n", "text/event-stream"),
        )
        .mount(&server)
        .await;
    let model = client(&server).completion("gpt-5.5");
    let mut stream = model
        .stream(&CompletionRequest::new(vec![Message::user("x")]))
        .await
        .unwrap();
    let error = stream.next().await.unwrap().unwrap_err();
    assert!(
        matches!(&error, CompletionError::Decode(m) if m.contains("{not json")),
        "{error}"
    );
}

#[tokio::test]
async fn a_silent_server_times_out() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(sse(&stream_events()), "text/event-stream")
                .set_delay(Duration::from_millis(300)),
        )
        .mount(&server)
        .await;
    let model = OpenAI::builder()
        .api_key(KEY)
        .base_url(format!("{}/v1", server.uri()))
        .retry(RetryPolicy::none())
        .timeouts(reins::providers::Timeouts {
            connect: Duration::from_secs(1),
            first_byte: Duration::from_millis(50),
            idle: Duration::from_millis(50),
        })
        .build()
        .unwrap()
        .completion("gpt-5.5");
    let error = model
        .completion(&CompletionRequest::new(vec![Message::user("x")]))
        .await
        .unwrap_err();
    assert!(matches!(error, CompletionError::Timeout(_)), "{error:?}");
}

#[tokio::test]
async fn keys_never_appear_in_debug_output() {
    let server = MockServer::start().await;
    let openai = client(&server);
    let model = openai.completion("gpt-5.5");
    let shown = format!("{openai:?} {model:?}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(shown.contains("redacted"));
}

#[tokio::test]
async fn compatible_servers_get_max_tokens_and_empty_content() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(text_reply("ok")))
        .mount(&server)
        .await;
    let compatible = OpenAICompatible::builder(format!("{}/v1/", server.uri()))
        .retry(fast_retries())
        .build()
        .unwrap();
    let model = compatible.completion("qwen");
    assert!(!model.supports_native_output());
    model.completion(&full_request()).await.unwrap();
    let body = body_of(&server, 0).await;
    assert_eq!(body["max_tokens"], 100);
    assert!(body.get("max_completion_tokens").is_none());
    assert_eq!(
        body["messages"][3]["content"], "",
        "llama.cpp rejects a null content"
    );
    let requests = server.received_requests().await.unwrap();
    assert!(requests[0].headers.get("authorization").is_none());
}

#[tokio::test]
async fn an_agent_runs_a_tool_loop_over_the_wire_blocking_and_streaming() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct AddArgs {
        a: i64,
        b: i64,
    }
    for streaming in [false, true] {
        let server = MockServer::start().await;
        let first = if streaming {
            ResponseTemplate::new(200).set_body_raw(sse(&stream_events()), "text/event-stream")
        } else {
            ResponseTemplate::new(200).set_body_json(tool_reply())
        };
        Mock::given(method("POST"))
            .respond_with(first)
            .up_to_n_times(1)
            .mount(&server)
            .await;
        let final_events = vec![
            json!({"id": "f", "choices": [{"index": 0, "delta": {"content": "3 and 7"}, "finish_reason": "stop"}]}),
        ];
        let second = if streaming {
            ResponseTemplate::new(200).set_body_raw(sse(&final_events), "text/event-stream")
        } else {
            ResponseTemplate::new(200).set_body_json(text_reply("3 and 7"))
        };
        Mock::given(method("POST"))
            .respond_with(second)
            .mount(&server)
            .await;

        let add = tool_fn("add", "Adds.", |args: AddArgs| async move {
            Ok::<_, std::convert::Infallible>(args.a + args.b)
        });
        let agent = AgentBuilder::new(client(&server).completion("gpt-5.5"))
            .tool(add)
            .build();
        let answer = if streaming {
            let mut stream = agent.prompt("add twice").stream();
            let mut answer = None;
            while let Some(item) = stream.next().await {
                if let StreamItem::Final(response) = item.unwrap() {
                    answer = Some(response.output);
                }
            }
            answer.unwrap()
        } else {
            agent.prompt("add twice").await.unwrap()
        };
        assert_eq!(answer, "3 and 7");
        let second_body = body_of(&server, 1).await;
        let messages = second_body["messages"].as_array().unwrap();
        assert_eq!(
            messages[2],
            json!({"role": "tool", "tool_call_id": "call_a", "content": "3"})
        );
        assert_eq!(
            messages[3],
            json!({"role": "tool", "tool_call_id": "call_b", "content": "7"})
        );
    }
}

#[tokio::test]
async fn a_model_error_reaches_the_agent_as_a_completion_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(401).set_body_string("{\"error\":{\"message\":\"bad key\"}}"),
        )
        .mount(&server)
        .await;
    let agent = AgentBuilder::new(client(&server).completion("gpt-5.5")).build();
    let error = agent.prompt("x").await.unwrap_err();
    assert!(matches!(
        &error,
        PromptError::Completion {
            source: CompletionError::Http { status: 401, .. },
            ..
        }
    ));
    assert!(!error.to_string().contains(KEY));
}

#[test]
fn from_env_names_the_missing_variable() {
    // Only this test touches the variable, so the process-wide environment stays consistent.
    // SAFETY: no other test in this binary reads or writes OPENAI_API_KEY.
    unsafe { std::env::remove_var("OPENAI_API_KEY") };
    let error = OpenAI::from_env().unwrap_err();
    assert_eq!(error.to_string(), "OPENAI_API_KEY is not set");
    fn is_std_error<E: std::error::Error + Send + Sync + 'static>(_: &E) {}
    is_std_error(&error);
}
