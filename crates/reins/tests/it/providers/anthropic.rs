//! The Anthropic Messages wire format: system text, merged user turns, thinking blocks and
//! their signatures, Anthropic's stop reasons, its 529 and its stream events.

mod stream;

use crate::providers::fixtures::anthropic::{Messages, error_body, message};
use crate::providers::fixtures::{Fixture, Settings, model_of};
use crate::providers::support::{KEY, answering, bodies, json_response, parts, prompt};
use reins::completion::{CompletionError, CompletionModel, CompletionRequest, FinishReason, Usage};
use reins::message::{AssistantContent, Document, Message, OneOrMany, Reasoning, ToolChoice};
use reins::providers::anthropic::{
    self, Anthropic, AnthropicModel, DEFAULT_MAX_TOKENS, REDACTED_THINKING_PREFIX,
};
use reins::tool::ToolDefinition;
use serde_json::json;
use std::sync::Arc;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A mock of `POST /v1/messages` that checks the key and the API version.
fn messages_endpoint() -> wiremock::MockBuilder {
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .and(header("anthropic-version", "2023-06-01"))
}

fn model(server: &MockServer) -> AnthropicModel {
    model_of::<Messages>(&server.uri())
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

#[tokio::test]
async fn every_request_carries_the_version_and_max_tokens() {
    let server = MockServer::start().await;
    messages_endpoint()
        .respond_with(json_response(Messages::text_reply("Hello!")))
        .expect(1)
        .mount(&server)
        .await;
    model(&server).completion(&prompt("Hi")).await.unwrap();
    assert_eq!(
        bodies(&server).await[0],
        json!({
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
        .respond_with(json_response(Messages::text_reply("3 and 7")))
        .expect(1)
        .mount(&server)
        .await;
    let model = Messages::builder(&server.uri(), &Settings::default().header("x-extra", "1"))
        .beta("feature-a")
        .beta("feature-b")
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
    model.completion(&request).await.unwrap();

    let received = server.received_requests().await.unwrap();
    let beta = received[0].headers.get("anthropic-beta").unwrap();
    assert_eq!(beta.to_str().unwrap(), "feature-a,feature-b");
    assert_eq!(
        bodies(&server).await[0],
        json!({
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
                // Tool results and the next user text merge into one user turn, results first.
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
    let model = model_of::<Messages>("http://127.0.0.1:9");
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
            ..prompt("hi")
        };
        let body = model.request_body(&request, false).unwrap();
        assert_eq!(body["tool_choice"], expected);
    }
    // Without tools there is nothing to choose from: no tool_choice is sent.
    let request = CompletionRequest {
        tool_choice: Some(ToolChoice::Auto),
        ..prompt("hi")
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
        ..prompt("hi")
    };
    assert!(!model.supports_native_output());
    assert!(matches!(
        model.completion(&native).await,
        Err(CompletionError::InvalidRequest(_))
    ));
    let bad_params = CompletionRequest {
        additional_params: Some(json!(["not", "an", "object"])),
        ..prompt("hi")
    };
    assert!(matches!(
        model.stream(&bad_params).await,
        Err(CompletionError::InvalidRequest(_))
    ));
    assert!(server.received_requests().await.unwrap().is_empty());
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
        let server = answering(json_response(message(
            "m",
            json!([{"type": "text", "text": "x"}]),
            stop_reason,
        )))
        .await;
        let response = model(&server).completion(&prompt("hi")).await.unwrap();
        assert_eq!(response.finish_reason, Some(expected), "{stop_reason}");
    }
}

fn thinking_reply() -> serde_json::Value {
    let mut reply = message(
        "msg_think",
        json!([
            {"type": "thinking", "thinking": "I should add.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
            {"type": "tool_use", "id": "toolu_t", "name": "add", "input": {"a": 20, "b": 22}}
        ]),
        "tool_use",
    );
    reply["usage"] = json!({"input_tokens": 30, "output_tokens": 40, "cache_read_input_tokens": 5});
    reply
}

#[tokio::test]
async fn thinking_blocks_round_trip_with_their_signatures() {
    let server = MockServer::start().await;
    messages_endpoint()
        .respond_with(json_response(thinking_reply()))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    messages_endpoint()
        .respond_with(json_response(Messages::text_reply("42")))
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
        Usage::new(35, 40).with_cached_input(5, 0),
        "cache reads count as input, and apart"
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
async fn a_529_overloaded_is_retried_and_reported_when_it_persists() {
    let overloaded =
        || ResponseTemplate::new(529).set_body_json(error_body("overloaded_error", "Overloaded"));
    let server = MockServer::start().await;
    messages_endpoint()
        .respond_with(overloaded())
        .up_to_n_times(2)
        .mount(&server)
        .await;
    messages_endpoint()
        .respond_with(json_response(Messages::text_reply("ok")))
        .mount(&server)
        .await;
    let request = prompt("hi");
    assert_eq!(
        model(&server).completion(&request).await.unwrap().text(),
        "ok"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 3);

    let server = MockServer::start().await;
    messages_endpoint()
        .respond_with(overloaded())
        .expect(3)
        .mount(&server)
        .await;
    let error = model(&server)
        .stream(&request)
        .await
        .err()
        .expect("the stream is refused");
    assert!(
        matches!(&error, CompletionError::Http { status: 529, body } if body.contains("overloaded_error")),
        "{error:?}"
    );
}

#[test]
fn a_key_or_header_that_cannot_be_sent_fails_the_build() {
    let error = Anthropic::builder()
        .api_key("bad\nkey")
        .build()
        .unwrap_err();
    assert!(!error.to_string().contains("bad"), "{error}");
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
