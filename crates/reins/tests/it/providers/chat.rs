//! The Chat Completions wire format: what reins sends, and what only this protocol does.

use crate::common::without_env_var;
use crate::providers::fixtures::chat::{Chat, ID, call, chunk, reply};
use crate::providers::fixtures::{Fixture, Settings, data_event, model_of};
use crate::providers::support::{
    KEY, answering, bodies, drain, fast_retries, json_response, prompt, sse_response,
};
use reins::completion::{CompletionModel, CompletionRequest, FinishReason, StreamChunk, Usage};
use reins::message::{AssistantContent, Document, Message, OneOrMany, ToolChoice};
use reins::providers::openai::OpenAI;
use reins::providers::openai_compatible::OpenAICompatible;
use reins::tool::ToolDefinition;
use serde_json::{Value, json};
use std::sync::Arc;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer};

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
        .respond_with(json_response(Chat::text_reply("3")))
        .mount(&server)
        .await;
    let model = Chat::builder(&server.uri(), &Settings::default())
        .organization("org-1")
        .build()
        .unwrap()
        .completion("gpt-5.5");
    let response = model.completion(&full_request()).await.unwrap();
    assert_eq!(response.text(), "3");
    assert_eq!(response.response_id.as_deref(), Some(ID));
    assert_eq!(response.raw.json().unwrap()["id"], ID);

    assert_eq!(
        bodies(&server).await[0],
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

/// Text, reasoning and two calls whose fragments interleave: the call of index 1 arrives
/// between two fragments of the call of index 0.
fn interleaved_stream() -> Vec<String> {
    vec![
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(json!({"reasoning_content": "Let me add."}), None),
        chunk(json!({"content": "Adding "}), None),
        chunk(json!({"content": "now."}), None),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "add", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"a\":1,"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "add", "arguments": "{\"a\":3,\"b\":4}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"b\":2}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        data_event(
            &json!({"id": ID, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}})
                .to_string(),
        ),
        data_event("[DONE]"),
    ]
}

#[tokio::test]
async fn a_stream_asks_for_usage_and_joins_interleaved_call_fragments_by_index() {
    let server = answering(sse_response(&interleaved_stream())).await;
    let model = model_of::<Chat>(&server.uri());
    let (chunks, done) = drain(&model, &prompt("x")).await;
    let streamed = done.unwrap();
    let fragments: Vec<(String, Option<String>, String)> = chunks
        .into_iter()
        .filter_map(|chunk| match chunk {
            StreamChunk::ToolCall { id, name, delta } => Some((id, name, delta)),
            _ => None,
        })
        .collect();
    assert_eq!(
        fragments[..2],
        [
            ("call_a".into(), Some("add".into()), String::new()),
            ("call_a".into(), None, "{\"a\":1,".into())
        ]
    );

    let mut blocking_message = reply(
        json!({"role": "assistant", "content": "Adding now.", "reasoning_content": "Let me add.",
            "tool_calls": [call("call_a", "{\"a\":1,\"b\":2}"), call("call_b", "{\"a\":3,\"b\":4}")]}),
        "tool_calls",
    );
    blocking_message["usage"] =
        json!({"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12});
    let blocking_server = answering(json_response(blocking_message)).await;
    let blocking = model_of::<Chat>(&blocking_server.uri())
        .completion(&prompt("x"))
        .await
        .unwrap();
    assert_eq!(streamed.content, blocking.content);
    assert_eq!(streamed.usage, Usage::new(5, 7));
    assert_eq!(streamed.finish_reason, Some(FinishReason::ToolCalls));

    let sent = &bodies(&server).await[0];
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["stream_options"], json!({"include_usage": true}));
}

#[tokio::test]
async fn compatible_servers_get_max_tokens_and_empty_content() {
    let server = answering(json_response(Chat::text_reply("ok"))).await;
    let compatible = OpenAICompatible::builder(format!("{}/v1/", server.uri()))
        .retry(fast_retries())
        .build()
        .unwrap();
    let model = compatible.completion("qwen");
    assert!(!model.supports_native_output());
    model.completion(&full_request()).await.unwrap();
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests[0].url.path(), "/v1/chat/completions");
    assert!(
        requests[0].headers.get("authorization").is_none(),
        "no key, no authorization"
    );
    let body: Value = requests[0].body_json().unwrap();
    assert_eq!(body["max_tokens"], 100);
    assert!(body.get("max_completion_tokens").is_none());
    assert_eq!(
        body["messages"][3]["content"], "",
        "llama.cpp rejects a null content"
    );
}

#[test]
fn from_env_names_the_missing_variable() {
    let test = "from_env_names_the_missing_variable";
    without_env_var("OPENAI_API_KEY", module_path!(), test, || {
        let error = OpenAI::from_env().unwrap_err();
        assert_eq!(error.to_string(), "OPENAI_API_KEY is not set");
        fn is_std_error<E: std::error::Error + Send + Sync + 'static>(_: &E) {}
        is_std_error(&error);
    });
}
