//! A tool call whose arguments hold an integer no `i64` or `u64` holds: serde_json reads it as
//! the nearest `f64`, another number. Whether the arguments came as text (OpenAI) or as an
//! object read with the body or event (Anthropic, Gemini), blocking or streamed, the call
//! keeps the model's text, and a run refuses it and tells the model to send the number as a
//! string, instead of running the tool with a rounded number.

use crate::common::add_tool;
use crate::providers::fixtures::{Fixture, model_of};
use crate::providers::support::{answering, bodies, drain, prompt, sse_response};
use futures::StreamExt;
use reins::agent::{
    AgentBuilder, AgentHook, HookContext, InvalidToolCallAction, InvalidToolCallContext,
    InvalidToolCallReason, StreamItem,
};
use reins::completion::{CompletionModel, CompletionResponse, StreamChunk};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// What the model writes for the first call's `a` instead of 1.
const HUGE: &str = "123456789012345678901234";

/// The fixture's wire text with the first call's `a` (1) written as [`HUGE`], in arguments
/// sent as an object (`"a":1,`) or as text inside a JSON string (`\"a\":1,`).
fn with_huge(text: &str) -> String {
    text.replace(r#""a":1,"#, &format!(r#""a":{HUGE},"#))
        .replace(r#"\"a\":1,"#, &format!(r#"\"a\":{HUGE},"#))
}

/// The first call's arguments as the model wrote them.
fn models_text() -> Value {
    json!(format!(r#"{{"a":{HUGE},"b":2}}"#))
}

fn blocking_reply<F: Fixture>() -> ResponseTemplate {
    let body = with_huge(&F::tool_calls_reply().to_string());
    assert!(body.contains(HUGE), "{body}");
    ResponseTemplate::new(200).set_body_raw(body, "application/json")
}

fn streamed_reply<F: Fixture>() -> ResponseTemplate {
    let events: Vec<String> = F::tool_calls_stream()
        .iter()
        .map(|e| with_huge(e))
        .collect();
    assert!(events.concat().contains(HUGE), "{events:?}");
    sse_response(&events)
}

fn arguments(response: &CompletionResponse) -> Vec<Value> {
    response
        .tool_calls()
        .map(|call| call.arguments.clone())
        .collect()
}

pub async fn an_integer_beyond_64_bits_keeps_the_models_text<F: Fixture>() {
    let server = answering(blocking_reply::<F>()).await;
    let blocking = model_of::<F>(&server.uri())
        .completion(&prompt("hi"))
        .await
        .expect("the blocking reply is read");
    assert_eq!(
        arguments(&blocking),
        [models_text(), json!({"a": 3, "b": 4})]
    );

    let server = answering(streamed_reply::<F>()).await;
    let (chunks, done) = drain(&model_of::<F>(&server.uri()), &prompt("hi")).await;
    let streamed = done.expect("the stream ends with Done");
    assert_eq!(
        arguments(&streamed),
        [models_text(), json!({"a": 3, "b": 4})]
    );
    // What streamed of the call is the model's number too.
    let [first, _] = F::tool_call_ids();
    let deltas: String = chunks
        .iter()
        .filter_map(|chunk| match chunk {
            StreamChunk::ToolCall { id, delta, .. } if id == first => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert!(deltas.contains(HUGE), "{deltas}");
}

/// Records the invalid calls a run reports, deciding nothing.
#[derive(Clone, Default)]
struct Invalid(Arc<Mutex<Vec<InvalidToolCallContext>>>);

impl AgentHook for Invalid {
    async fn on_invalid_tool_call(
        &self,
        _ctx: &HookContext,
        event: &InvalidToolCallContext,
    ) -> Option<InvalidToolCallAction> {
        self.0.lock().unwrap().push(event.clone());
        None
    }
}

pub async fn a_run_tells_the_model_to_send_a_huge_integer_as_a_string<F: Fixture>() {
    for stream in [false, true] {
        let server = MockServer::start().await;
        let first = if stream {
            streamed_reply::<F>()
        } else {
            blocking_reply::<F>()
        };
        Mock::given(method("POST"))
            .respond_with(first)
            .up_to_n_times(1)
            .mount(&server)
            .await;
        let answer = if stream {
            sse_response(&F::text_stream(&["done"]))
        } else {
            ResponseTemplate::new(200).set_body_json(F::text_reply("done"))
        };
        Mock::given(method("POST"))
            .respond_with(answer)
            .mount(&server)
            .await;
        let invalid = Invalid::default();
        let agent = AgentBuilder::new(model_of::<F>(&server.uri()))
            .tool(add_tool())
            .add_hook(invalid.clone())
            .build();
        let output = if stream {
            let items: Vec<_> = agent.prompt("add").stream().collect().await;
            match items.last() {
                Some(Ok(StreamItem::Final(response))) => response.output.clone(),
                _ => panic!("the run ends with its final response: {items:?}"),
            }
        } else {
            agent.prompt("add").await.expect("the run ends")
        };
        assert_eq!(output, "done");

        let bodies = bodies(&server).await;
        let results = F::sent_tool_results(&bodies[1]);
        let [first, second] = F::tool_call_ids();
        assert_eq!(results.len(), 2, "{results:?}");
        assert_eq!(results[0].0, first);
        let feedback = &results[0].1;
        assert!(
            feedback.contains(HUGE)
                && feedback.contains("too large")
                && feedback.contains("string"),
            "stream {stream}: {feedback}"
        );
        // The other call of the turn runs.
        assert_eq!(results[1], (second.to_owned(), "7".to_owned()));

        let seen = invalid.0.lock().unwrap().clone();
        assert_eq!(seen.len(), 1, "stream {stream}");
        assert_eq!(seen[0].reason, InvalidToolCallReason::MalformedArguments);
        assert!(seen[0].args.contains(HUGE), "{}", seen[0].args);
    }
}
