//! What a model reads: text, parallel tool calls, reasoning and usage, the same whether the
//! reply came blocking or streamed; and what it sends: the path and the auth header.

use crate::providers::fixtures::{Fixture, REASONED_ANSWER, REASONING, model_of};
use crate::providers::support::{
    KEY, answering, drain, json_response, parts, prompt, sse_body, sse_response,
    streamed_reasoning, streamed_text,
};
use reins::completion::{
    CompletionError, CompletionModel, CompletionResponse, FinishReason, StreamChunk,
};
use reins::message::AssistantContent;
use serde_json::{Value, json};
use wiremock::ResponseTemplate;

/// The reply of a blocking call answered with `body`.
async fn blocking<F: Fixture>(body: Value) -> CompletionResponse {
    let server = answering(json_response(body)).await;
    model_of::<F>(&server.uri())
        .completion(&prompt("hi"))
        .await
        .expect("the blocking reply is read")
}

/// The chunks and the end of a streamed call answered with `events`.
async fn streamed<F: Fixture>(
    events: &[String],
) -> (
    Vec<StreamChunk>,
    Result<CompletionResponse, CompletionError>,
) {
    let server = answering(sse_response(events)).await;
    drain(&model_of::<F>(&server.uri()), &prompt("hi")).await
}

pub async fn text_reply_blocking_and_streamed_agree<F: Fixture>() {
    let blocking = blocking::<F>(F::text_reply("Hello there.")).await;
    assert_eq!(
        parts(&blocking),
        vec![AssistantContent::text("Hello there.")]
    );
    assert_eq!(blocking.finish_reason, Some(FinishReason::Stop));
    assert!(blocking.response_id.is_some());
    assert!(blocking.raw.json().is_some(), "the provider's JSON is kept");

    let (chunks, done) = streamed::<F>(&F::text_stream(&["Hello ", "there."])).await;
    let streamed = done.expect("the stream ends with Done");
    let fragments: Vec<&StreamChunk> = chunks
        .iter()
        .filter(|chunk| !matches!(chunk, StreamChunk::Text(text) if text.is_empty()))
        .collect();
    assert!(
        matches!(
            fragments.as_slice(),
            [StreamChunk::Text(first), StreamChunk::Text(second)] if first == "Hello " && second == "there."
        ),
        "the text arrives as it was streamed: {chunks:?}"
    );
    assert_eq!(parts(&streamed), parts(&blocking));
    assert_eq!(streamed.finish_reason, blocking.finish_reason);
    assert_eq!(streamed.response_id, blocking.response_id);
    assert_eq!(streamed.usage, blocking.usage);
}

pub async fn requests_reach_the_protocol_paths_with_the_auth_header<F: Fixture>() {
    let settings = crate::providers::fixtures::Settings::default().header("x-extra", "1");
    let blocking = answering(json_response(F::text_reply("ok"))).await;
    crate::providers::fixtures::model_at::<F>(&blocking.uri(), &settings)
        .completion(&prompt("hi"))
        .await
        .unwrap();
    let streaming = answering(sse_response(&F::text_stream(&["o", "k"]))).await;
    let model = crate::providers::fixtures::model_at::<F>(&streaming.uri(), &settings);
    drain(&model, &prompt("hi")).await.1.unwrap();

    let (name, value) = F::auth(KEY);
    for (server, path) in [
        (&blocking, F::blocking_path()),
        (&streaming, F::stream_path()),
    ] {
        let requests = server.received_requests().await.unwrap();
        assert_eq!(requests.len(), 1);
        let request = &requests[0];
        assert_eq!(request.method.as_str(), "POST");
        assert_eq!(request.url.path(), path);
        let sent = |header: &str| {
            request
                .headers
                .get(header)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned)
        };
        assert_eq!(sent(name), Some(value.clone()), "the key arrives in {name}");
        assert_eq!(
            sent("x-extra").as_deref(),
            Some("1"),
            "builder headers arrive"
        );
        assert!(
            sent("content-type").is_some_and(|v| v.starts_with("application/json")),
            "the body is declared JSON"
        );
        assert!(!request.url.as_str().contains(KEY), "no key in the URL");
    }
}

/// `(id, name, arguments)` of the expected calls.
fn expected_calls<F: Fixture>() -> Vec<(String, String, Value)> {
    let [first, second] = F::tool_call_ids();
    vec![
        (first.into(), "add".into(), json!({"a": 1, "b": 2})),
        (second.into(), "add".into(), json!({"a": 3, "b": 4})),
    ]
}

fn calls_of(response: &CompletionResponse) -> Vec<(String, String, Value)> {
    response
        .tool_calls()
        .map(|call| (call.id.clone(), call.name.clone(), call.arguments.clone()))
        .collect()
}

pub async fn parallel_tool_calls_are_read_in_order<F: Fixture>() {
    let response = blocking::<F>(F::tool_calls_reply()).await;
    assert_eq!(calls_of(&response), expected_calls::<F>());
    assert_eq!(response.finish_reason, Some(FinishReason::ToolCalls));
}

pub async fn parallel_tool_calls_stream_in_order<F: Fixture>() {
    let (chunks, done) = streamed::<F>(&F::tool_calls_stream()).await;
    let streamed = done.expect("the stream ends with Done");
    let blocking = blocking::<F>(F::tool_calls_reply()).await;
    assert_eq!(parts(&streamed), parts(&blocking));
    assert_eq!(calls_of(&streamed), expected_calls::<F>());
    assert_eq!(streamed.finish_reason, Some(FinishReason::ToolCalls));

    assert_eq!(calls_streamed(&chunks), expected_calls::<F>());
}

/// The calls of a turn's chunks, as a consumer keying them by id sees them: each announced
/// once with its name, its fragments joined into its arguments.
fn calls_streamed(chunks: &[StreamChunk]) -> Vec<(String, String, Value)> {
    let mut calls: Vec<(String, String)> = Vec::new();
    for chunk in chunks {
        let StreamChunk::ToolCall { id, name, delta } = chunk else {
            continue;
        };
        match calls.iter_mut().find(|(known, _)| known == id) {
            Some((_, arguments)) => {
                assert_eq!(name, &None, "the name comes on the first fragment only");
                arguments.push_str(delta);
            }
            None => {
                assert_eq!(name.as_deref(), Some("add"), "{chunk:?}");
                calls.push((id.clone(), delta.clone()));
            }
        }
    }
    calls
        .into_iter()
        .map(|(id, arguments)| {
            let arguments = serde_json::from_str(&arguments).expect("fragments join into JSON");
            (id, "add".to_owned(), arguments)
        })
        .collect()
}

pub async fn two_calls_given_one_id_stay_two_calls<F: Fixture>() {
    // A hostile or buggy server gives the second call the first one's id.
    let [first, second] = F::tool_call_ids();
    let same_id = |text: &str| text.replace(&format!("\"{second}\""), &format!("\"{first}\""));
    let events: Vec<String> = F::tool_calls_stream().iter().map(|e| same_id(e)).collect();
    let reply = serde_json::from_str(&same_id(&F::tool_calls_reply().to_string())).unwrap();
    let renamed = format!("{first}_2");
    let expected = vec![
        (first.to_owned(), "add".to_owned(), json!({"a": 1, "b": 2})),
        (renamed, "add".to_owned(), json!({"a": 3, "b": 4})),
    ];

    // Two calls, neither merged into the other nor lost; the second under an id of its own,
    // so each is answered by its own result.
    let (chunks, done) = streamed::<F>(&events).await;
    let streamed = done.expect("the stream ends with Done");
    assert_eq!(calls_of(&streamed), expected);
    assert_eq!(
        calls_streamed(&chunks),
        expected,
        "the chunks name the same calls"
    );
    let blocking = blocking::<F>(reply).await;
    assert_eq!(
        calls_of(&blocking),
        expected,
        "a whole reply reads the same"
    );
}

pub async fn reasoning_is_read_blocking_and_streamed<F: Fixture>() {
    let blocking = blocking::<F>(F::reasoning_reply()).await;
    assert!(
        matches!(blocking.content.first(), AssistantContent::Reasoning(r) if r.text == REASONING),
        "{:?}",
        blocking.content
    );
    assert_eq!(
        blocking.text(),
        REASONED_ANSWER,
        "reasoning is not answer text"
    );

    let (chunks, done) = streamed::<F>(&F::reasoning_stream()).await;
    let streamed = done.expect("the stream ends with Done");
    assert_eq!(streamed_reasoning(&chunks), REASONING);
    assert_eq!(streamed_text(&chunks), REASONED_ANSWER);
    assert_eq!(parts(&streamed), parts(&blocking));
}

pub async fn usage_is_reported_for_every_reply<F: Fixture>() {
    let replies = [
        (F::text_reply("Hello."), F::text_stream(&["Hel", "lo."])),
        (F::tool_calls_reply(), F::tool_calls_stream()),
        (F::reasoning_reply(), F::reasoning_stream()),
    ];
    for (body, events) in replies {
        let blocking = blocking::<F>(body).await;
        assert_eq!(blocking.usage, F::usage(), "{:?}", blocking.content);
        let streamed = streamed::<F>(&events).await.1.unwrap();
        assert_eq!(streamed.usage, F::usage(), "{:?}", streamed.content);
    }
}

pub async fn a_body_that_is_not_json_is_a_decode_error_quoting_it<F: Fixture>() {
    let server =
        answering(ResponseTemplate::new(200).set_body_raw("<html>gateway</html>", "text/html"))
            .await;
    let error = model_of::<F>(&server.uri())
        .completion(&prompt("hi"))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, CompletionError::Decode(message) if message.contains("<html>gateway</html>")),
        "{error:?}"
    );
}

pub async fn a_malformed_stream_event_is_a_decode_error_quoting_it<F: Fixture>() {
    let mut events = F::text_stream(&["Hello ", "there."]);
    events.truncate(1);
    events.push("data: {not json\n\n".to_owned());
    let server =
        answering(ResponseTemplate::new(200).set_body_raw(sse_body(&events), "text/event-stream"))
            .await;
    let (_, end) = drain(&model_of::<F>(&server.uri()), &prompt("hi")).await;
    let error = end.unwrap_err();
    assert!(
        matches!(&error, CompletionError::Decode(message) if message.contains("{not json")),
        "{error:?}"
    );
}

pub async fn an_empty_stream_is_an_error<F: Fixture>() {
    let (chunks, end) = streamed::<F>(&[]).await;
    assert!(chunks.is_empty());
    assert!(end.is_err(), "an empty stream is not an empty answer");
}
