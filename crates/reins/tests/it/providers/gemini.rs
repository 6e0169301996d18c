//! The Gemini wire format: system instruction, function calls with and without ids, thought
//! signatures, schemas Gemini accepts, finish and block reasons. Streams are in
//! `gemini/stream.rs`, schemas in `gemini/schema.rs`.

mod names;
mod schema;
mod signatures;
mod stream;

use crate::common::without_env_var;
use crate::providers::fixtures::gemini::{Google, event};
use crate::providers::fixtures::{Fixture, Settings, client_at};
use crate::providers::support::{KEY, json_response, sse_response};
use futures::StreamExt;
use reins::completion::{CompletionError, CompletionModel, CompletionRequest, FinishReason, Usage};
use reins::message::{AssistantContent, Document, Message, OneOrMany, Reasoning, ToolChoice};
use reins::providers::ProviderError;
use reins::providers::gemini::{
    GEMINI_2_5_FLASH, GEMINI_2_5_PRO, GEMINI_3_PRO_PREVIEW, Gemini, GeminiModel,
};
use reins::tool::ToolDefinition;
use serde_json::{Value, json};
use std::sync::Arc;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request};

pub fn model(server: &MockServer, name: &str) -> GeminiModel {
    client_at::<Google>(&server.uri(), &Settings::default()).completion(name)
}

pub use crate::providers::support::prompt;

fn text_reply(text: &str) -> Value {
    Google::text_reply(text)
}

pub async fn requests(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap()
}

pub async fn body_of(server: &MockServer, index: usize) -> Value {
    serde_json::from_slice(&requests(server).await[index].body).unwrap()
}

pub fn content(parts: Vec<AssistantContent>) -> OneOrMany<AssistantContent> {
    OneOrMany::many(parts).unwrap()
}

pub fn signature(signature: &str) -> AssistantContent {
    AssistantContent::Reasoning(Reasoning {
        text: String::new(),
        signature: Some(signature.into()),
    })
}

pub fn add_definition(parameters: Value) -> Arc<[ToolDefinition]> {
    Arc::from(vec![ToolDefinition {
        name: "add".into(),
        description: "Adds.".into(),
        parameters,
    }])
}

pub fn full_request() -> CompletionRequest {
    CompletionRequest {
        preamble: Some("Be brief.".into()),
        history: vec![
            Message::system("Answer in English."),
            Message::user("What are 1+2 and 3+4?"),
            Message::Assistant {
                content: content(vec![
                    AssistantContent::reasoning("unsigned thoughts stay here"),
                    AssistantContent::text("Adding."),
                    AssistantContent::tool_call("call_0", "add", json!({"a": 1, "b": 2})),
                    signature("sig-1"),
                    AssistantContent::tool_call("fc-2", "add", json!({"a": 3, "b": 4})),
                ]),
            },
            Message::tool_result("call_0", "add", "3"),
            Message::tool_result("fc-2", "add", "7"),
            Message::user("And the sum of both?"),
        ],
        documents: vec![Document::new("d1", "Numbers are fun.")],
        tools: add_definition(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": false
        })),
        tool_choice: Some(ToolChoice::Specific("add".into())),
        temperature: Some(0.2),
        max_tokens: Some(100),
        additional_params: Some(json!({
            "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]
        })),
        output_schema: None,
    }
}

pub fn assert_key_not_in_urls(requests: &[Request]) {
    for request in requests {
        let url = request.url.as_str();
        assert!(!url.contains(KEY), "the key is in the URL {url}");
        assert!(
            !request.url.query_pairs().any(|(name, _)| name == "key"),
            "{url}"
        );
    }
}

#[tokio::test]
async fn the_key_travels_in_a_header_never_in_the_url() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1beta/models/gemini-2.5-flash:generateContent"))
        .and(header("x-goog-api-key", KEY))
        .respond_with(json_response(text_reply("Hello there.")))
        .expect(1)
        .mount(&server)
        .await;
    let response = model(&server, GEMINI_2_5_FLASH)
        .completion(&prompt("hi"))
        .await
        .unwrap();
    assert_eq!(response.response_id.as_deref(), Some("resp-1"));
    assert_eq!(response.usage, Usage::new(7, 3).with_cached_input(4, 0));
    assert_eq!(
        response.raw.json().unwrap()["modelVersion"],
        GEMINI_3_PRO_PREVIEW
    );
    let sent = requests(&server).await;
    assert_key_not_in_urls(&sent);
    assert_eq!(sent[0].url.query(), None);
    assert_eq!(
        body_of(&server, 0).await,
        json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    );
}

#[tokio::test]
async fn the_request_body_follows_the_gemini_format() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1beta/models/gemini-2.5-pro:generateContent"))
        .and(header("x-goog-api-key", KEY))
        .respond_with(json_response(text_reply("10")))
        .mount(&server)
        .await;
    let model = model(&server, GEMINI_2_5_PRO);
    model.completion(&full_request()).await.unwrap();
    let body = body_of(&server, 0).await;
    assert_eq!(
        body,
        json!({
            "systemInstruction": {"parts": [
                {"text": "Be brief."},
                {"text": "Answer in English."},
                {"text": "Context documents:\n<document id=\"d1\">\nNumbers are fun.\n</document>\n"}
            ]},
            "contents": [
                {"role": "user", "parts": [{"text": "What are 1+2 and 3+4?"}]},
                {"role": "model", "parts": [
                    {"text": "Adding."},
                    {"functionCall": {"name": "add", "args": {"a": 1, "b": 2}}, "thoughtSignature": "sig-1"},
                    {"functionCall": {"id": "fc-2", "name": "add", "args": {"a": 3, "b": 4}}}
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "add", "response": {"result": "3"}}},
                    {"functionResponse": {"id": "fc-2", "name": "add", "response": {"result": "7"}}},
                    {"text": "And the sum of both?"}
                ]}
            ],
            "tools": [{"functionDeclarations": [{
                "name": "add",
                "description": "Adds.",
                "parametersJsonSchema": {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    "required": ["a", "b"],
                    "additionalProperties": false
                }
            }]}],
            "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["add"]}},
            "generationConfig": {"temperature": 0.2, "maxOutputTokens": 100},
            "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]
        })
    );
    assert_eq!(body, model.request_body(&full_request(), false).unwrap());
    assert_key_not_in_urls(&requests(&server).await);
}

#[tokio::test]
async fn additional_params_replace_top_level_keys() {
    let server = MockServer::start().await;
    let model = model(&server, GEMINI_2_5_FLASH);
    let mut request = full_request();
    request.additional_params = Some(json!({
        "toolConfig": {"functionCallingConfig": {"mode": "VALIDATED"}},
        "cachedContent": "cachedContents/abc"
    }));
    let body = model.request_body(&request, false).unwrap();
    assert_eq!(
        body["toolConfig"],
        json!({"functionCallingConfig": {"mode": "VALIDATED"}})
    );
    assert_eq!(body["cachedContent"], "cachedContents/abc");
    assert_eq!(body["generationConfig"]["temperature"], 0.2);
}

#[tokio::test]
async fn tool_choice_maps_to_function_calling_modes() {
    let server = MockServer::start().await;
    let model = model(&server, GEMINI_2_5_FLASH);
    let cases = [
        (ToolChoice::Auto, json!({"mode": "AUTO"})),
        (ToolChoice::Required, json!({"mode": "ANY"})),
        (
            ToolChoice::Specific("add".into()),
            json!({"mode": "ANY", "allowedFunctionNames": ["add"]}),
        ),
        (ToolChoice::None, json!({"mode": "NONE"})),
    ];
    for (choice, expected) in cases {
        let request = CompletionRequest {
            tools: add_definition(json!({"type": "object"})),
            tool_choice: Some(choice),
            ..prompt("x")
        };
        assert_eq!(
            model.request_body(&request, false).unwrap()["toolConfig"],
            json!({ "functionCallingConfig": expected })
        );
    }
    // Without tools there is nothing to choose from.
    let request = CompletionRequest {
        tool_choice: Some(ToolChoice::Required),
        ..prompt("x")
    };
    let body = model.request_body(&request, false).unwrap();
    assert!(body.get("toolConfig").is_none() && body.get("tools").is_none());
}

#[tokio::test]
async fn native_output_can_be_turned_off() {
    let server = MockServer::start().await;
    let native = model(&server, GEMINI_2_5_FLASH);
    assert!(native.supports_native_output());
    let plain = native.clone().with_native_output(false);
    assert!(!plain.supports_native_output());
    let request = CompletionRequest {
        output_schema: Some(json!({"type": "string"})),
        ..prompt("x")
    };
    assert_eq!(
        native.request_body(&request, false).unwrap()["generationConfig"],
        json!({"responseMimeType": "application/json", "responseJsonSchema": {"type": "string"}})
    );
    assert!(
        plain
            .request_body(&request, false)
            .unwrap()
            .get("generationConfig")
            .is_none()
    );
}

#[tokio::test]
async fn model_names_and_resource_names_address_the_right_path() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_response(text_reply("ok")))
        .mount(&server)
        .await;
    let gemini = client_at::<Google>(&server.uri(), &Settings::default());
    for name in ["models/gemini-2.5-flash", "tunedModels/my-tuned"] {
        gemini
            .completion(name)
            .completion(&prompt("x"))
            .await
            .unwrap();
    }
    let paths: Vec<String> = requests(&server)
        .await
        .iter()
        .map(|r| r.url.path().to_owned())
        .collect();
    assert_eq!(
        paths,
        vec![
            "/v1beta/models/gemini-2.5-flash:generateContent",
            "/v1beta/tunedModels/my-tuned:generateContent"
        ]
    );
}

#[tokio::test]
async fn finish_reasons_map_to_reins_reasons() {
    let cases = [
        ("MAX_TOKENS", FinishReason::Length),
        ("SAFETY", FinishReason::ContentFilter),
        ("RECITATION", FinishReason::ContentFilter),
        ("PROHIBITED_CONTENT", FinishReason::ContentFilter),
        ("SPII", FinishReason::ContentFilter),
        ("BLOCKLIST", FinishReason::ContentFilter),
        (
            "MALFORMED_FUNCTION_CALL",
            FinishReason::Other("MALFORMED_FUNCTION_CALL".into()),
        ),
    ];
    for (gemini, expected) in cases {
        let server = MockServer::start().await;
        // A filtered candidate may come without content at all.
        let body = json!({"candidates": [{"finishReason": gemini, "index": 0}], "responseId": "r"});
        Mock::given(method("POST"))
            .respond_with(json_response(body))
            .mount(&server)
            .await;
        let response = model(&server, GEMINI_2_5_FLASH)
            .completion(&prompt("x"))
            .await
            .unwrap();
        assert_eq!(response.finish_reason, Some(expected), "{gemini}");
        assert_eq!(response.text(), "");
    }
}

fn blocked() -> Value {
    json!({
        "promptFeedback": {
            "blockReason": "SAFETY",
            "safetyRatings": [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH"}]
        },
        "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8},
        "modelVersion": "gemini-2.5-flash"
    })
}

#[tokio::test]
async fn a_blocked_prompt_is_an_error_naming_the_reason() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1beta/models/gemini-2.5-flash:generateContent"))
        .respond_with(json_response(blocked()))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
        ))
        .respond_with(sse_response(&[event(&blocked())]))
        .mount(&server)
        .await;
    let model = model(&server, GEMINI_2_5_FLASH);
    let error = model.completion(&prompt("x")).await.unwrap_err();
    assert!(
        matches!(&error, CompletionError::Other(m) if m.contains("blocked the prompt") && m.contains("SAFETY")),
        "{error:?}"
    );
    let mut stream = model.stream(&prompt("x")).await.unwrap();
    let error = stream.next().await.unwrap().unwrap_err();
    assert!(error.to_string().contains("blockReason SAFETY"), "{error}");
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn a_response_without_candidates_is_a_decode_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_response(json!({"responseId": "r"})))
        .mount(&server)
        .await;
    let error = model(&server, GEMINI_2_5_FLASH)
        .completion(&prompt("x"))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, CompletionError::Decode(m) if m.contains("no candidates")),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_key_passed_as_a_plain_header_does_not_show_either() {
    let server = MockServer::start().await;
    let gemini = Google::build(
        Google::builder(&server.uri(), &Settings::default()).header("x-goog-api-key", KEY),
    )
    .unwrap();
    let shown = format!("{gemini:?} {:?}", gemini.completion(GEMINI_2_5_FLASH));
    assert!(!shown.contains(KEY), "{shown}");
    assert!(shown.contains("redacted"));
}

#[test]
fn a_key_that_cannot_be_a_header_is_refused() {
    let error = Gemini::builder().api_key("bad\nkey").build().unwrap_err();
    assert_eq!(error, ProviderError::InvalidHeader("x-goog-api-key".into()));
    assert!(!error.to_string().contains("bad"));
}

#[test]
fn from_env_names_the_missing_variable() {
    let test = "from_env_names_the_missing_variable";
    without_env_var("GEMINI_API_KEY", module_path!(), test, || {
        let error = Gemini::from_env().unwrap_err();
        assert_eq!(error.to_string(), "GEMINI_API_KEY is not set");
    });
}
