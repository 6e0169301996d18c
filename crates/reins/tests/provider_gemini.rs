//! The Gemini API format against a mock server: what reins sends, what it reads. Response
//! shapes follow Google's documented `GenerateContentResponse`.

use futures::StreamExt;
use reins::agent::{AgentBuilder, PromptError, StreamItem};
use reins::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, FinishReason,
    StreamChunk, Usage,
};
use reins::message::{AssistantContent, Document, Message, OneOrMany, Reasoning, ToolChoice};
use reins::providers::gemini::{
    GEMINI_2_5_FLASH, GEMINI_2_5_PRO, GEMINI_3_PRO_PREVIEW, Gemini, GeminiModel,
};
use reins::providers::{ProviderError, RetryPolicy, Timeouts};
use reins::tool::{ToolDefinition, schema_of, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const KEY: &str = "AIza-test-very-secret-key";

fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        max_retries: 2,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(5),
    }
}

fn client(server: &MockServer) -> Gemini {
    Gemini::builder()
        .api_key(KEY)
        .base_url(format!("{}/v1beta/", server.uri()))
        .retry(fast_retries())
        .build()
        .unwrap()
}

fn model(server: &MockServer, name: &str) -> GeminiModel {
    client(server).completion(name)
}

fn prompt(text: &str) -> CompletionRequest {
    CompletionRequest::new(vec![Message::user(text)])
}

/// A `GenerateContentResponse` with one candidate.
fn reply(parts: Value, finish: &str) -> Value {
    json!({
        "candidates": [{
            "content": {"parts": parts, "role": "model"},
            "finishReason": finish,
            "index": 0,
            "safetyRatings": []
        }],
        "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 3, "totalTokenCount": 10},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "resp-1"
    })
}

fn text_reply(text: &str) -> Value {
    reply(json!([{"text": text}]), "STOP")
}

/// Two parallel calls the way Gemini 2.5 sends them: no ids, the signature on the first.
fn calls_reply() -> Value {
    reply(
        json!([
            {"functionCall": {"name": "add", "args": {"a": 1, "b": 2}}, "thoughtSignature": "sig-A"},
            {"functionCall": {"name": "add", "args": {"a": 3, "b": 4}}}
        ]),
        "STOP",
    )
}

async fn requests(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap()
}

async fn body_of(server: &MockServer, index: usize) -> Value {
    serde_json::from_slice(&requests(server).await[index].body).unwrap()
}

fn content(parts: Vec<AssistantContent>) -> OneOrMany<AssistantContent> {
    OneOrMany::many(parts).unwrap()
}

fn signature(signature: &str) -> AssistantContent {
    AssistantContent::Reasoning(Reasoning {
        text: String::new(),
        signature: Some(signature.into()),
    })
}

fn add_definition(parameters: Value) -> Arc<[ToolDefinition]> {
    Arc::from(vec![ToolDefinition {
        name: "add".into(),
        description: "Adds.".into(),
        parameters,
    }])
}

fn full_request() -> CompletionRequest {
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

fn assert_key_not_in_urls(requests: &[Request]) {
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
async fn a_text_answer_is_read_with_usage_id_and_raw_response() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1beta/models/gemini-2.5-flash:generateContent"))
        .and(header("x-goog-api-key", KEY))
        .respond_with(ResponseTemplate::new(200).set_body_json(text_reply("Hello there.")))
        .expect(1)
        .mount(&server)
        .await;
    let response = model(&server, GEMINI_2_5_FLASH)
        .completion(&prompt("hi"))
        .await
        .unwrap();
    assert_eq!(response.text(), "Hello there.");
    assert_eq!(
        response.content.as_slice(),
        &[AssistantContent::text("Hello there.")]
    );
    assert_eq!(response.usage, Usage::new(7, 3));
    assert_eq!(response.finish_reason, Some(FinishReason::Stop));
    assert_eq!(response.response_id.as_deref(), Some("resp-1"));
    assert_eq!(
        response.raw.json().unwrap()["modelVersion"],
        "gemini-2.5-flash"
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
        .respond_with(ResponseTemplate::new(200).set_body_json(text_reply("10")))
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
    assert_eq!(body, model.request_body(&full_request()));
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
    let body = model.request_body(&request);
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
            model.request_body(&request)["toolConfig"],
            json!({ "functionCallingConfig": expected })
        );
    }
    // Without tools there is nothing to choose from.
    let request = CompletionRequest {
        tool_choice: Some(ToolChoice::Required),
        ..prompt("x")
    };
    let body = model.request_body(&request);
    assert!(body.get("toolConfig").is_none() && body.get("tools").is_none());
}

#[tokio::test]
async fn parallel_function_calls_are_read_in_order_with_their_signature() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(calls_reply()))
        .mount(&server)
        .await;
    let model = model(&server, GEMINI_2_5_FLASH);
    let response = model.completion(&prompt("add twice")).await.unwrap();
    assert_eq!(
        response.content.as_slice(),
        &[
            AssistantContent::tool_call("call_0", "add", json!({"a": 1, "b": 2})),
            signature("sig-A"),
            AssistantContent::tool_call("call_1", "add", json!({"a": 3, "b": 4})),
        ]
    );
    assert_eq!(
        response.finish_reason,
        Some(FinishReason::ToolCalls),
        "Gemini says STOP; a turn with calls is reported as ToolCalls"
    );

    // Sent back, the turn is what Gemini sent, and synthesized ids stay out of it.
    let next = CompletionRequest::new(vec![
        Message::user("add twice"),
        Message::Assistant {
            content: response.content.clone(),
        },
        Message::tool_result("call_0", "add", "3"),
        Message::tool_result("call_1", "add", "7"),
    ]);
    let body = model.request_body(&next);
    assert_eq!(
        body["contents"][1]["parts"],
        calls_reply()["candidates"][0]["content"]["parts"]
    );
    assert_eq!(
        body["contents"][2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "add", "response": {"result": "3"}}},
            {"functionResponse": {"name": "add", "response": {"result": "7"}}}
        ]})
    );
}

#[tokio::test]
async fn function_call_ids_from_gemini_are_kept_and_sent_back() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply(
            json!([
                {"text": "Checking."},
                {"functionCall": {"id": "fc-9", "name": "lookup", "args": {}}, "thoughtSignature": "sig-9"}
            ]),
            "STOP",
        )))
        .mount(&server)
        .await;
    let model = model(&server, GEMINI_3_PRO_PREVIEW);
    let response = model.completion(&prompt("look it up")).await.unwrap();
    assert_eq!(
        response.content.as_slice(),
        &[
            AssistantContent::text("Checking."),
            AssistantContent::tool_call("fc-9", "lookup", json!({})),
            signature("sig-9"),
        ]
    );
    let body = model.request_body(&CompletionRequest::new(vec![
        Message::user("look it up"),
        Message::Assistant {
            content: response.content,
        },
        Message::tool_result("fc-9", "lookup", "found"),
    ]));
    assert_eq!(
        body["contents"][1]["parts"],
        json!([
            {"text": "Checking."},
            {"functionCall": {"id": "fc-9", "name": "lookup", "args": {}}, "thoughtSignature": "sig-9"}
        ])
    );
    assert_eq!(
        body["contents"][2]["parts"][0],
        json!({"functionResponse": {"id": "fc-9", "name": "lookup", "response": {"result": "found"}}})
    );
}

#[tokio::test]
async fn thought_parts_are_reasoning_and_only_signed_ones_go_back() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "candidates": [{
                "content": {"role": "model", "parts": [
                    {"text": "**Planning** the sum", "thought": true},
                    {"text": " of six and seven.", "thought": true},
                    {"text": "Checked twice.", "thought": true, "thoughtSignature": "sig-T"},
                    {"text": "It is 42."},
                    {"text": "", "thoughtSignature": "sig-E"}
                ]},
                "finishReason": "STOP"
            }],
            "usageMetadata": {
                "promptTokenCount": 5, "candidatesTokenCount": 4,
                "thoughtsTokenCount": 20, "totalTokenCount": 29
            },
            "responseId": "resp-t"
        })))
        .mount(&server)
        .await;
    let model = model(&server, GEMINI_2_5_PRO).with_generation_config(json!({
        "thinkingConfig": {"includeThoughts": true}
    }));
    let response = model.completion(&prompt("6*7?")).await.unwrap();
    assert_eq!(
        response.content.as_slice(),
        &[
            AssistantContent::Reasoning(Reasoning {
                text: "**Planning** the sum of six and seven.Checked twice.".into(),
                signature: Some("sig-T".into()),
            }),
            AssistantContent::text("It is 42."),
            signature("sig-E"),
        ]
    );
    assert_eq!(response.text(), "It is 42.");
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 5,
            output_tokens: 24,
            total_tokens: 29
        },
        "thinking counts as output"
    );
    assert_eq!(response.finish_reason, Some(FinishReason::Stop));
    let sent = body_of(&server, 0).await;
    assert_eq!(
        sent["generationConfig"],
        json!({"thinkingConfig": {"includeThoughts": true}})
    );

    let history = CompletionRequest::new(vec![
        Message::user("6*7?"),
        Message::Assistant {
            content: content(vec![
                AssistantContent::reasoning("unsigned: not sent"),
                response.content.first().clone(),
                AssistantContent::text("It is 42."),
                signature("sig-E"),
            ]),
        },
        Message::user("Thanks"),
    ]);
    assert_eq!(
        model.request_body(&history)["contents"][1]["parts"],
        json!([
            {"text": "**Planning** the sum of six and seven.Checked twice.", "thought": true, "thoughtSignature": "sig-T"},
            {"text": "It is 42.", "thoughtSignature": "sig-E"}
        ])
    );
}

#[tokio::test]
async fn gemini_3_gets_the_documented_signature_for_calls_that_have_none() {
    let server = MockServer::start().await;
    // A turn written by another model: its calls carry no signature.
    let request = CompletionRequest::new(vec![
        Message::user("add twice"),
        Message::Assistant {
            content: content(vec![
                AssistantContent::tool_call("call_x1", "add", json!({"a": 1, "b": 2})),
                AssistantContent::tool_call("call_x2", "add", json!({"a": 3, "b": 4})),
            ]),
        },
        Message::tool_result("call_x1", "add", "3"),
        Message::tool_result("call_x2", "add", "7"),
    ]);
    let parts =
        &model(&server, GEMINI_3_PRO_PREVIEW).request_body(&request)["contents"][1]["parts"];
    assert_eq!(
        parts,
        &json!([
            {"functionCall": {"id": "call_x1", "name": "add", "args": {"a": 1, "b": 2}},
             "thoughtSignature": "skip_thought_signature_validator"},
            {"functionCall": {"id": "call_x2", "name": "add", "args": {"a": 3, "b": 4}}}
        ])
    );
    let parts = &model(&server, GEMINI_2_5_FLASH).request_body(&request)["contents"][1]["parts"];
    assert!(parts[0].get("thoughtSignature").is_none(), "{parts}");
}

/// Where to go.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Route {
    /// The first stop.
    start: Point,
    stops: Vec<Point>,
    note: Option<String>,
    mode: Mode,
}

/// A point on the map.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Point {
    x: i64,
    y: i64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind")]
#[allow(dead_code)]
enum Mode {
    Walk,
    Drive,
}

/// Every value stored under `key`, anywhere in `value`.
fn find<'a>(value: &'a Value, key: &str) -> Vec<&'a Value> {
    let mut found = Vec::new();
    match value {
        Value::Object(map) => {
            if let Some(inner) = map.get(key) {
                found.push(inner);
            }
            for inner in map.values() {
                found.extend(find(inner, key));
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|inner| found.extend(find(inner, key))),
        _ => {}
    }
    found
}

#[tokio::test]
async fn schemas_are_adjusted_to_what_gemini_accepts() {
    let server = MockServer::start().await;
    let model = model(&server, GEMINI_2_5_FLASH);
    let schema = schema_of::<Route>();
    let request = CompletionRequest {
        tools: add_definition(schema.clone()),
        output_schema: Some(schema.clone()),
        ..prompt("route?")
    };
    let body = model.request_body(&request);
    let parameters = &body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"];
    let output = &body["generationConfig"]["responseJsonSchema"];
    assert_eq!(
        parameters, output,
        "tools and output get the same treatment"
    );
    assert_eq!(
        body["generationConfig"]["responseMimeType"],
        "application/json"
    );

    // A documented field referring to a definition: the reference moves into `anyOf`, so no
    // `$ref` has sibling keywords, and the description stays.
    assert_eq!(
        parameters["properties"]["start"],
        json!({"anyOf": [{"$ref": "#/$defs/Point"}], "description": "The first stop."})
    );
    for node in find(parameters, "$ref") {
        assert!(node.is_string());
    }
    fn no_ref_siblings(value: &Value) {
        match value {
            Value::Object(map) => {
                if map.contains_key("$ref") {
                    assert!(map.keys().all(|key| key.starts_with('$')), "{value}");
                }
                map.values().for_each(no_ref_siblings);
            }
            Value::Array(items) => items.iter().for_each(no_ref_siblings),
            _ => {}
        }
    }
    no_ref_siblings(parameters);
    assert!(find(parameters, "const").is_empty(), "{parameters}");
    assert!(
        find(parameters, "enum").contains(&&json!(["Walk"])),
        "{parameters}"
    );
    assert!(parameters.get("$schema").is_none());
    assert_eq!(parameters["$defs"]["Point"], schema["$defs"]["Point"]);

    // Draft-07 `definitions` become `$defs`.
    let legacy = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"p": {"$ref": "#/definitions/P"}},
        "definitions": {"P": {"type": "string"}}
    });
    let request = CompletionRequest {
        tools: add_definition(legacy),
        ..prompt("x")
    };
    assert_eq!(
        model.request_body(&request)["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"],
        json!({
            "type": "object",
            "properties": {"p": {"$ref": "#/$defs/P"}},
            "$defs": {"P": {"type": "string"}}
        })
    );
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
        native.request_body(&request)["generationConfig"],
        json!({"responseMimeType": "application/json", "responseJsonSchema": {"type": "string"}})
    );
    assert!(
        plain
            .request_body(&request)
            .get("generationConfig")
            .is_none()
    );
}

#[tokio::test]
async fn model_names_and_resource_names_address_the_right_path() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(text_reply("ok")))
        .mount(&server)
        .await;
    let gemini = client(&server);
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
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
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
        .respond_with(ResponseTemplate::new(200).set_body_json(blocked()))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
        ))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(sse(&[blocked()]), "text/event-stream"),
        )
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
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"responseId": "r"})))
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
async fn client_errors_are_not_retried_and_keep_the_provider_body() {
    let server = MockServer::start().await;
    let body = json!({"error": {
        "code": 400,
        "message": "* GenerateContentRequest.contents: contents is not specified",
        "status": "INVALID_ARGUMENT"
    }});
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_json(body))
        .mount(&server)
        .await;
    let error = model(&server, GEMINI_2_5_FLASH)
        .completion(&prompt("x"))
        .await
        .unwrap_err();
    let CompletionError::Http { status, body } = &error else {
        panic!("expected an HTTP error, got {error:?}");
    };
    assert_eq!(*status, 400);
    assert!(body.contains("INVALID_ARGUMENT"));
    assert_eq!(requests(&server).await.len(), 1);
    assert!(!format!("{error:?} {error}").contains(KEY));
}

#[tokio::test]
async fn rate_limits_and_unavailable_servers_are_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_json(json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}})),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_json(
            json!({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}),
        ))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(text_reply("finally")))
        .mount(&server)
        .await;
    let started = std::time::Instant::now();
    let response = model(&server, GEMINI_2_5_FLASH)
        .completion(&prompt("x"))
        .await
        .unwrap();
    assert_eq!(response.text(), "finally");
    assert_eq!(requests(&server).await.len(), 3);
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "Retry-After is capped by max_backoff"
    );
}

#[tokio::test]
async fn retries_are_bounded() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_string("overloaded"))
        .mount(&server)
        .await;
    let error = model(&server, GEMINI_2_5_FLASH)
        .completion(&prompt("x"))
        .await
        .unwrap_err();
    assert!(
        matches!(error, CompletionError::Http { status: 503, ref body } if body == "overloaded")
    );
    assert_eq!(requests(&server).await.len(), 3, "1 try + 2 retries");
}

fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|event| format!("data: {event}\r\n\r\n"))
        .collect()
}

fn event(parts: Value, extra: Value) -> Value {
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
        event(json!([{"text": "Let me ", "thought": true}]), json!({})),
        event(json!([{"text": "add.", "thought": true}]), json!({})),
        event(json!([{"text": "Adding "}]), json!({})),
        event(json!([{"text": "now."}]), json!({})),
        event(
            json!([{"functionCall": {"id": "fc-1", "name": "add", "args": {"a": 1, "b": 2}}, "thoughtSignature": "sig-1"}]),
            json!({}),
        ),
        event(
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

/// Reads a whole stream: its chunks before `Done`, then `Done`'s response or the error.
async fn drain(
    model: &GeminiModel,
    request: &CompletionRequest,
) -> (
    Vec<StreamChunk>,
    Result<CompletionResponse, CompletionError>,
) {
    let mut stream = model.stream(request).await.unwrap();
    let mut chunks = Vec::new();
    let mut end = None;
    while let Some(chunk) = stream.next().await {
        assert!(end.is_none(), "nothing follows Done or an error");
        match chunk {
            Ok(StreamChunk::Done(response)) => end = Some(Ok(response)),
            Ok(chunk) => chunks.push(chunk),
            Err(error) => end = Some(Err(error)),
        }
    }
    (chunks, end.expect("the stream ends with Done or an error"))
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
        .respond_with(ResponseTemplate::new(200).set_body_json(blocking_equivalent()))
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
        event(json!([{"text": "Hel"}]), json!({})),
        event(json!([{"text": "lo."}]), json!({})),
        event(
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
        .respond_with(ResponseTemplate::new(200).set_body_json(reply(
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
async fn an_empty_stream_is_an_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw("", "text/event-stream"))
        .mount(&server)
        .await;
    let (chunks, end) = drain(&model(&server, GEMINI_2_5_FLASH), &prompt("x")).await;
    assert!(chunks.is_empty());
    assert!(end.unwrap_err().to_string().contains("0 event(s)"));
}

#[tokio::test]
async fn a_broken_connection_mid_stream_is_an_error_saying_what_arrived() {
    // A server that starts a chunked event stream, sends one event, and hangs up.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut received = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            let read = socket.read(&mut buffer).await.unwrap();
            if read == 0 {
                break;
            }
            received.extend_from_slice(&buffer[..read]);
            let text = String::from_utf8_lossy(&received).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|line| {
                        let (name, value) = line.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if received.len() >= end + 4 + length {
                    break;
                }
            }
        }
        let data = format!(
            "data: {}\r\n\r\n",
            event(json!([{"text": "Half an"}]), json!({}))
        );
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{data}\r\n",
            data.len()
        );
        socket.write_all(response.as_bytes()).await.unwrap();
        socket.flush().await.unwrap();
        String::from_utf8_lossy(&received).to_string()
    });
    let model = Gemini::builder()
        .api_key(KEY)
        .base_url(format!("http://{address}/v1beta"))
        .retry(RetryPolicy::none())
        .build()
        .unwrap()
        .completion(GEMINI_2_5_FLASH);
    let (chunks, end) = drain(&model, &prompt("x")).await;
    let request = server.await.unwrap();
    assert!(
        request.starts_with("POST /v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse ")
    );
    assert!(!request.contains(&format!("key={KEY}")));
    assert_eq!(chunks.len(), 1);
    let error = end.unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(
            error,
            CompletionError::Transport(_) | CompletionError::Decode(_)
        ),
        "{error:?}"
    );
    assert!(
        message.contains("the stream broke after 1 event(s) with 7 characters of text"),
        "{message}"
    );
    assert!(!message.contains(KEY));
}

#[tokio::test]
async fn malformed_stream_json_is_an_error_quoting_it() {
    let server = MockServer::start().await;
    let body = format!("{}data: {{not json\r\n\r\n", sse(&stream_events()[..1]));
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
        .mount(&server)
        .await;
    let (chunks, end) = drain(&model(&server, GEMINI_2_5_FLASH), &prompt("x")).await;
    assert_eq!(chunks.len(), 1);
    let error = end.unwrap_err();
    assert!(
        matches!(&error, CompletionError::Decode(m) if m.contains("{not json") && m.contains("after 1 event(s)")),
        "{error}"
    );
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

#[tokio::test]
async fn a_silent_server_times_out() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(text_reply("late"))
                .set_delay(Duration::from_millis(300)),
        )
        .mount(&server)
        .await;
    let model = Gemini::builder()
        .api_key(KEY)
        .base_url(format!("{}/v1beta", server.uri()))
        .retry(RetryPolicy::none())
        .timeouts(Timeouts {
            connect: Duration::from_secs(1),
            first_byte: Duration::from_millis(50),
            idle: Duration::from_millis(50),
        })
        .build()
        .unwrap()
        .completion(GEMINI_2_5_FLASH);
    let error = model.completion(&prompt("x")).await.unwrap_err();
    assert!(matches!(error, CompletionError::Timeout(_)), "{error:?}");
}

#[tokio::test]
async fn keys_never_appear_in_debug_output_or_errors() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(403).set_body_json(json!({"error": {
            "code": 403, "message": "Method doesn't allow unregistered callers.", "status": "PERMISSION_DENIED"
        }})))
        .mount(&server)
        .await;
    let gemini = Gemini::builder()
        .api_key(KEY)
        .base_url(server.uri())
        .header("x-goog-api-key", KEY)
        .retry(fast_retries())
        .build()
        .unwrap();
    let model = gemini.completion(GEMINI_2_5_FLASH);
    let shown = format!("{gemini:?} {model:?}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(shown.contains("redacted"));
    let error = model.completion(&prompt("x")).await.unwrap_err();
    let stream_error = model.stream(&prompt("x")).await.err().unwrap();
    for shown in [
        format!("{error:?} {error}"),
        format!("{stream_error:?} {stream_error}"),
    ] {
        assert!(!shown.contains(KEY), "{shown}");
    }
    assert_key_not_in_urls(&requests(&server).await);
}

#[test]
fn a_key_that_cannot_be_a_header_is_refused() {
    let error = Gemini::builder().api_key("bad\nkey").build().unwrap_err();
    assert_eq!(error, ProviderError::InvalidHeader("x-goog-api-key".into()));
    assert!(!error.to_string().contains("bad"));
}

#[test]
fn from_env_names_the_missing_variable() {
    // Only this test touches the variable, so the process-wide environment stays consistent.
    // SAFETY: no other test in this binary reads or writes GEMINI_API_KEY.
    unsafe { std::env::remove_var("GEMINI_API_KEY") };
    let error = Gemini::from_env().unwrap_err();
    assert_eq!(error.to_string(), "GEMINI_API_KEY is not set");
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[tokio::test]
async fn an_agent_runs_a_tool_loop_over_the_wire_blocking_and_streaming() {
    for streaming in [false, true] {
        let server = MockServer::start().await;
        let (name, first, second) = if streaming {
            let last = event(
                json!([{"text": "3 and 7"}]),
                json!({"finishReason": "STOP"}),
            );
            (
                GEMINI_3_PRO_PREVIEW,
                ResponseTemplate::new(200).set_body_raw(sse(&stream_events()), "text/event-stream"),
                ResponseTemplate::new(200).set_body_raw(sse(&[last]), "text/event-stream"),
            )
        } else {
            (
                GEMINI_2_5_FLASH,
                ResponseTemplate::new(200).set_body_json(calls_reply()),
                ResponseTemplate::new(200).set_body_json(text_reply("3 and 7")),
            )
        };
        Mock::given(method("POST"))
            .and(header("x-goog-api-key", KEY))
            .respond_with(first)
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(header("x-goog-api-key", KEY))
            .respond_with(second)
            .mount(&server)
            .await;

        let add = tool_fn("add", "Adds two integers.", |args: AddArgs| async move {
            Ok::<_, std::convert::Infallible>(args.a + args.b)
        });
        let agent = AgentBuilder::new(model(&server, name))
            .preamble("Use the tool.")
            .tool(add)
            .build();
        let answer = if streaming {
            let mut stream = agent.prompt("add twice").stream();
            let mut answer = None;
            let mut text = String::new();
            while let Some(item) = stream.next().await {
                match item.unwrap() {
                    StreamItem::Text(delta) => text.push_str(&delta),
                    StreamItem::Final(response) => answer = Some(response.output),
                    _ => {}
                }
            }
            assert!(text.ends_with("3 and 7"), "{text}");
            answer.unwrap()
        } else {
            agent.prompt("add twice").await.unwrap()
        };
        assert_eq!(answer, "3 and 7");

        let sent = requests(&server).await;
        assert_eq!(sent.len(), 2);
        assert_key_not_in_urls(&sent);
        let second_body = body_of(&server, 1).await;
        assert_eq!(
            second_body["systemInstruction"],
            json!({"parts": [{"text": "Use the tool."}]})
        );
        let declaration = &second_body["tools"][0]["functionDeclarations"][0];
        assert_eq!(declaration["name"], "add");
        assert_eq!(
            declaration["parametersJsonSchema"]["required"],
            json!(["a", "b"])
        );
        let contents = &second_body["contents"];
        assert_eq!(
            contents[0],
            json!({"role": "user", "parts": [{"text": "add twice"}]})
        );
        if streaming {
            assert_eq!(
                contents[1],
                json!({"role": "model", "parts": [
                    {"text": "Adding now."},
                    {"functionCall": {"id": "fc-1", "name": "add", "args": {"a": 1, "b": 2}}, "thoughtSignature": "sig-1"},
                    {"functionCall": {"id": "fc-2", "name": "add", "args": {"a": 3, "b": 4}}}
                ]})
            );
            assert_eq!(
                contents[2],
                json!({"role": "user", "parts": [
                    {"functionResponse": {"id": "fc-1", "name": "add", "response": {"result": "3"}}},
                    {"functionResponse": {"id": "fc-2", "name": "add", "response": {"result": "7"}}}
                ]})
            );
        } else {
            assert_eq!(
                contents[1],
                json!({"role": "model", "parts": calls_reply()["candidates"][0]["content"]["parts"]})
            );
            assert_eq!(
                contents[2],
                json!({"role": "user", "parts": [
                    {"functionResponse": {"name": "add", "response": {"result": "3"}}},
                    {"functionResponse": {"name": "add", "response": {"result": "7"}}}
                ]})
            );
        }
        assert_eq!(contents.as_array().unwrap().len(), 3);
    }
}

#[tokio::test]
async fn a_model_error_reaches_the_agent_as_a_completion_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({"error": {
            "code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT"
        }})))
        .mount(&server)
        .await;
    let agent = AgentBuilder::new(model(&server, GEMINI_2_5_FLASH)).build();
    let error = agent.prompt("x").await.unwrap_err();
    assert!(matches!(
        &error,
        PromptError::Completion {
            source: CompletionError::Http { status: 400, .. },
            ..
        }
    ));
    assert!(!format!("{error} {error:?}").contains(KEY));
}
