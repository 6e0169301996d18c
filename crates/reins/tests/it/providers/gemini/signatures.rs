//! Gemini's function calls and thoughts: ids it may or may not send, and the thought
//! signatures that must go back exactly where they came from.

use super::{body_of, content, model, prompt, signature};
use crate::providers::fixtures::gemini::reply;
use crate::providers::support::json_response;
use reins::completion::{CompletionModel, CompletionRequest, FinishReason, Usage};
use reins::message::{AssistantContent, Message, Reasoning};
use reins::providers::gemini::{GEMINI_2_5_FLASH, GEMINI_2_5_PRO, GEMINI_3_PRO_PREVIEW};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

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

#[tokio::test]
async fn parallel_function_calls_are_read_in_order_with_their_signature() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_response(calls_reply()))
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
    let body = model.request_body(&next, false).unwrap();
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
        .respond_with(json_response(reply(
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
    let body = model
        .request_body(
            &CompletionRequest::new(vec![
                Message::user("look it up"),
                Message::Assistant {
                    content: response.content,
                },
                Message::tool_result("fc-9", "lookup", "found"),
            ]),
            false,
        )
        .unwrap();
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
        .respond_with(json_response(json!({
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
            total_tokens: 29,
            ..Default::default()
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
        model.request_body(&history, false).unwrap()["contents"][1]["parts"],
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
    let parts = &model(&server, GEMINI_3_PRO_PREVIEW)
        .request_body(&request, false)
        .unwrap()["contents"][1]["parts"];
    assert_eq!(
        parts,
        &json!([
            {"functionCall": {"id": "call_x1", "name": "add", "args": {"a": 1, "b": 2}},
             "thoughtSignature": "skip_thought_signature_validator"},
            {"functionCall": {"id": "call_x2", "name": "add", "args": {"a": 3, "b": 4}}}
        ])
    );
    let parts = &model(&server, GEMINI_2_5_FLASH)
        .request_body(&request, false)
        .unwrap()["contents"][1]["parts"];
    assert!(parts[0].get("thoughtSignature").is_none(), "{parts}");
}
