//! The OpenAI Responses API wire format: request bodies, encrypted reasoning, why a response
//! stopped. Streams are in `responses/stream.rs`.

mod stream;

use crate::providers::fixtures::model_of;
use crate::providers::fixtures::responses::{
    MODEL, Responses, call_item, message_item, reasoning_item, response,
};
use crate::providers::support::{KEY, answering, bodies, json_response, parts, prompt};
use reins::completion::{CompletionError, CompletionModel, CompletionRequest, FinishReason};
use reins::message::{AssistantContent, Document, Message, OneOrMany, Reasoning, ToolChoice};
use reins::tool::ToolDefinition;
use serde_json::{Value, json};
use std::sync::Arc;

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

/// The response to a one-message prompt answered with `body`.
async fn read(body: Value) -> Result<reins::completion::CompletionResponse, CompletionError> {
    let server = answering(json_response(body)).await;
    model_of::<Responses>(&server.uri())
        .completion(&prompt("q"))
        .await
}

#[tokio::test]
async fn a_prompt_is_sent_as_input_and_the_response_kept_raw() {
    let body = response("resp_1", vec![message_item("msg_1", "Hello there.")]);
    let server = answering(json_response(body.clone())).await;
    let result = model_of::<Responses>(&server.uri())
        .completion(&prompt("hi"))
        .await
        .unwrap();
    assert_eq!(result.response_id.as_deref(), Some("resp_1"));
    assert_eq!(result.raw.json(), Some(&body));
    assert_eq!(
        bodies(&server).await,
        vec![json!({"model": MODEL, "input": [{"role": "user", "content": "hi"}]})]
    );
}

#[tokio::test]
async fn a_function_call_turn_sends_the_whole_request_and_reads_the_call() {
    let server = answering(json_response(response(
        "resp_2",
        vec![call_item("fc_9", "call_9", "add", r#"{"a":40,"b":2}"#)],
    )))
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
    let result = model_of::<Responses>(&server.uri())
        .completion(&request)
        .await
        .unwrap();
    assert_eq!(
        parts(&result),
        vec![AssistantContent::tool_call(
            "call_9",
            "add",
            json!({"a": 40, "b": 2})
        )]
    );
    assert_eq!(
        bodies(&server).await[0],
        json!({
            "model": MODEL,
            "instructions": "You add numbers.\n\nBe brief.\n\nContext documents:\n\
                             <document id=\"d1\">\nNumbers are fun.\n</document>\n",
            "input": [
                {"role": "user", "content": "What is 1 + 2?"},
                {"role": "assistant", "content": "Let me add."},
                {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": "{\"a\":1,\"b\":2}"},
                // Arguments that were not JSON go back as the model wrote them.
                {"type": "function_call", "call_id": "call_2", "name": "add", "arguments": "{broken"},
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
    let server = answering(json_response(response(
        "r",
        vec![message_item("m", r#"{"n":1}"#)],
    )))
    .await;
    let model = model_of::<Responses>(&server.uri());
    assert!(model.supports_native_output());
    assert!(
        !model
            .clone()
            .with_native_output(false)
            .supports_native_output()
    );
    assert_eq!(model.model(), MODEL);

    for (choice, expected) in [
        (ToolChoice::Auto, json!("auto")),
        (ToolChoice::None, json!("none")),
        (ToolChoice::Required, json!("required")),
    ] {
        let request = CompletionRequest {
            tool_choice: Some(choice),
            ..prompt("x")
        };
        assert_eq!(
            model.request_body(&request, false).unwrap()["tool_choice"],
            expected
        );
    }

    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let request = CompletionRequest {
        output_schema: Some(schema.clone()),
        ..prompt("x")
    };
    model.completion(&request).await.unwrap();
    let body = &bodies(&server).await[0];
    assert_eq!(
        body["text"],
        json!({"format": {"type": "json_schema", "name": "output", "schema": schema}})
    );
    assert_eq!(body.get("stream"), None);
    assert_eq!(
        model.request_body(&request, true).unwrap()["stream"],
        json!(true)
    );
}

#[tokio::test]
async fn empty_function_call_arguments_are_an_empty_object() {
    let result = read(response(
        "resp_3",
        vec![
            message_item("msg_1", "Checking."),
            call_item("fc_3", "call_c", "now", ""),
        ],
    ))
    .await
    .unwrap();
    assert_eq!(
        parts(&result),
        vec![
            AssistantContent::text("Checking."),
            AssistantContent::tool_call("call_c", "now", json!({})),
        ]
    );
}

#[tokio::test]
async fn reasoning_summaries_join_and_carry_the_encrypted_content_as_signature() {
    let result = read(response(
        "resp_4",
        vec![
            reasoning_item(&["First I look.", "Then I answer."], "enc-blob-1"),
            json!({"type": "reasoning", "id": "rs_2", "summary": []}),
            message_item("msg_1", "42"),
        ],
    ))
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
        ],
        "an empty reasoning item without content is dropped"
    );
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
    let model = model_of::<Responses>("http://127.0.0.1:9");
    let plain = model.request_body(&request, false).unwrap();
    assert_eq!(plain.get("include"), None);
    assert_eq!(plain.get("store"), None);
    let call = json!({"type": "function_call", "call_id": "call_1", "name": "add", "arguments": "{\"a\":1,\"b\":1}"});
    let output = json!({"type": "function_call_output", "call_id": "call_1", "output": "2"});
    assert_eq!(
        plain["input"],
        json!([{"role": "user", "content": "q"}, call, output, {"role": "user", "content": "again"}])
    );

    let encrypted = model
        .with_encrypted_reasoning(true)
        .request_body(&request, false)
        .unwrap();
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
            call,
            output,
            {"role": "user", "content": "again"},
        ])
    );
}

pub fn incomplete(reason: &str, output: Vec<Value>) -> Value {
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
        let result = read(incomplete(reason, vec![message_item("m", "The answer is")]))
            .await
            .unwrap();
        assert_eq!(result.text(), "The answer is");
        assert_eq!(result.finish_reason, Some(expected));
    }
}

#[tokio::test]
async fn a_refusal_is_kept_as_text_and_finishes_as_content_filter() {
    let result = read(response(
        "resp_6",
        vec![json!({
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "content": [{"type": "refusal", "refusal": "I can't help with that."}],
        })],
    ))
    .await
    .unwrap();
    assert_eq!(result.text(), "I can't help with that.");
    assert_eq!(result.finish_reason, Some(FinishReason::ContentFilter));
}

#[tokio::test]
async fn a_failed_response_is_an_error_naming_the_failure() {
    let mut body = response("resp_8", vec![]);
    body["status"] = json!("failed");
    body["error"] = json!({"code": "server_error", "message": "The model crashed."});
    let text = read(body).await.unwrap_err().to_string();
    assert!(text.contains("server_error"), "{text}");
    assert!(text.contains("The model crashed."), "{text}");
    assert!(!text.contains(KEY));
}

#[tokio::test]
async fn a_response_without_output_is_a_decode_error() {
    let error = read(json!({"id": "r", "status": "completed"}))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, CompletionError::Decode(text) if text.contains("no output")),
        "{error:?}"
    );
}
