//! The OpenAI-compatible presets: what each service is sent (path, credential, the output
//! limit's field, stream options, an assistant turn without text) and Azure's deployment URL.

use crate::common::without_env_var;
use futures::StreamExt;
use reins::completion::{CompletionModel, CompletionRequest};
use reins::message::{AssistantContent, Message, OneOrMany};
use reins::providers::openai_compatible::{self as compatible, OpenAICompatible, Service};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const KEY: &str = "preset-test-key";

/// A request with an output limit and an assistant turn that is only a tool call.
fn request() -> CompletionRequest {
    let mut request = CompletionRequest::new(vec![
        Message::user("add 1 and 2"),
        Message::Assistant {
            content: OneOrMany::one(AssistantContent::tool_call("c1", "add", json!({"a": 1}))),
        },
        Message::tool_result("c1", "add", "3"),
    ]);
    request.max_tokens = Some(64);
    request
}

fn stream_body() -> String {
    let chunk = json!({"id": "r1", "choices": [{"index": 0, "delta": {"content": "3"}, "finish_reason": "stop"}]});
    format!("data: {chunk}\n\ndata: [DONE]\n\n")
}

/// Streams one answer from `model` and returns the one request the server received.
async fn sent(server: &MockServer, model: &impl CompletionModel) -> Request {
    let mut stream = model.stream(&request()).await.expect("the stream opens");
    while let Some(chunk) = stream.next().await {
        chunk.expect("every chunk arrives");
    }
    let requests = server
        .received_requests()
        .await
        .expect("requests are recorded");
    assert_eq!(requests.len(), 1);
    requests.into_iter().next().expect("one request")
}

async fn sse_server(at: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(at))
        .respond_with(ResponseTemplate::new(200).set_body_raw(stream_body(), "text/event-stream"))
        .mount(&server)
        .await;
    server
}

fn assistant_content(body: &Value) -> &Value {
    &body["messages"][1]["content"]
}

async fn check_service(service: &Service) {
    let server = sse_server("/chat/completions").await;
    let client = OpenAICompatible::service(service)
        .base_url(server.uri())
        .api_key(KEY)
        .build()
        .expect("the client builds");
    let request = sent(&server, &client.completion("some-model")).await;
    let name = service.name;
    assert_eq!(
        request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok()),
        Some(format!("Bearer {KEY}").as_str()),
        "{name}: the key is a bearer token"
    );
    let body: Value = serde_json::from_slice(&request.body).expect("a JSON body");
    let quirks = service.quirks;
    assert_eq!(body[quirks.max_tokens_field], 64, "{name}: {body}");
    let other_field = if quirks.max_tokens_field == "max_tokens" {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    assert!(
        body.get(other_field).is_none(),
        "{name}: only one limit field: {body}"
    );
    assert_eq!(
        body.get("stream_options").is_some(),
        quirks.stream_usage_option,
        "{name}: stream_options: {body}"
    );
    let expected_content = if quirks.empty_content_as_text {
        json!("")
    } else {
        Value::Null
    };
    assert_eq!(
        assistant_content(&body),
        &expected_content,
        "{name}: {body}"
    );
    assert_eq!(body["model"], "some-model");
}

#[tokio::test]
async fn every_preset_sends_its_own_dialect() {
    let services = [
        compatible::OLLAMA,
        compatible::LLAMA_CPP,
        compatible::LM_STUDIO,
        compatible::VLLM,
        compatible::OPENROUTER,
        compatible::GROQ,
        compatible::DEEPSEEK,
        compatible::MISTRAL,
        compatible::TOGETHER,
        compatible::FIREWORKS,
        compatible::XAI,
    ];
    for service in &services {
        check_service(service).await;
    }
}

#[test]
fn hosted_presets_use_tls_and_name_their_key_local_ones_need_none() {
    for service in [
        compatible::OPENROUTER,
        compatible::GROQ,
        compatible::DEEPSEEK,
        compatible::MISTRAL,
        compatible::TOGETHER,
        compatible::FIREWORKS,
        compatible::XAI,
    ] {
        assert!(service.base_url.starts_with("https://"), "{}", service.name);
        assert!(
            service.key_env.is_some_and(|v| v.ends_with("_API_KEY")),
            "{}",
            service.name
        );
    }
    for service in [
        compatible::OLLAMA,
        compatible::LLAMA_CPP,
        compatible::LM_STUDIO,
        compatible::VLLM,
    ] {
        assert!(
            service.base_url.starts_with("http://localhost:"),
            "{}",
            service.name
        );
        assert_eq!(service.key_env, None, "{}", service.name);
    }
}

#[test]
fn a_hosted_preset_without_its_key_says_which_variable() {
    let test = "a_hosted_preset_without_its_key_says_which_variable";
    without_env_var("FIREWORKS_API_KEY", module_path!(), test, || {
        let error = OpenAICompatible::fireworks_from_env().expect_err("no key");
        assert_eq!(error.to_string(), "FIREWORKS_API_KEY is not set");
    });
}

#[tokio::test]
async fn azure_sends_to_the_deployment_with_api_version_and_api_key_header() {
    let server = sse_server("/openai/deployments/my-gpt/chat/completions").await;
    let client = OpenAICompatible::azure(&server.uri(), "my-gpt")
        .api_key(KEY)
        .build()
        .expect("the client builds");
    let request = sent(&server, &client.completion("gpt-4.1")).await;
    assert_eq!(
        request.url.query(),
        Some(format!("api-version={}", compatible::AZURE_API_VERSION).as_str())
    );
    assert_eq!(
        request.headers.get("api-key").and_then(|v| v.to_str().ok()),
        Some(KEY)
    );
    assert!(
        request.headers.get("authorization").is_none(),
        "no bearer token for Azure"
    );
    let body: Value = serde_json::from_slice(&request.body).expect("a JSON body");
    assert_eq!(
        body["max_completion_tokens"], 64,
        "OpenAI's own field: {body}"
    );
}

#[tokio::test]
async fn azure_api_version_can_be_chosen() {
    let server = sse_server("/openai/deployments/d/chat/completions").await;
    let client = OpenAICompatible::azure(&format!("{}/", server.uri()), "d")
        .query("api-version", "2025-01-01-preview")
        .api_key(KEY)
        .build()
        .expect("the client builds");
    let request = sent(&server, &client.completion("m")).await;
    assert_eq!(request.url.query(), Some("api-version=2025-01-01-preview"));
}

/// A query written into the base URL (a gateway's `?api-version=`, a function's `?code=`)
/// is sent with every request, after the request's own path rather than inside it; a query
/// set on the builder wins on the name both give. Neither the builder's `Debug` nor the
/// client's shows the values.
#[tokio::test]
async fn a_query_in_the_base_url_is_sent_with_the_requests_path() {
    let server = sse_server("/v1/chat/completions").await;
    let builder = OpenAICompatible::builder(format!(
        "{}/v1/?api-version=2024-10-21&code=fn-key-8f2d6b1c0e9a&region=eu#part",
        server.uri()
    ))
    .query("region", "us")
    .api_key(KEY);
    let debug = format!("{builder:?}");
    let client = builder.build().expect("the client builds");
    let request = sent(&server, &client.completion("m")).await;
    let mut pairs: Vec<(String, String)> = request.url.query_pairs().into_owned().collect();
    pairs.sort();
    assert_eq!(
        pairs,
        [
            ("api-version".to_owned(), "2024-10-21".to_owned()),
            ("code".to_owned(), "fn-key-8f2d6b1c0e9a".to_owned()),
            ("region".to_owned(), "us".to_owned()),
        ]
    );
    for shown in [debug, format!("{client:?}")] {
        assert!(!shown.contains("fn-key-8f2d6b1c0e9a"), "{shown}");
    }
}
