//! How failures read in a trace: `error.type` names why a span failed.

use crate::harness::{NamedModel, Recorded, attr_str, event_pairs, span};
use opentelemetry::trace::Status;
use reins::agent::AgentBuilder;
use reins::completion::CompletionError;
use reins::testing::Turn;
use reins::tool::tool_fn;
use reins_otel::Telemetry;
use serde_json::{Value, json};
use std::convert::Infallible;

/// The model calls `lookup`, then answers.
fn lookup_then_answer() -> NamedModel {
    NamedModel::new([
        Turn::tool_call("lookup", json!({"city": "Paris"})),
        Turn::text("No idea."),
    ])
}

#[tokio::test]
async fn a_panicking_tool_is_tool_panicked_not_a_generic_failure() {
    let recorded = Recorded::start(Telemetry::new());
    let panicking = tool_fn("lookup", "Panics.", |_: Value| async move {
        if true {
            panic!("the lookup table is corrupt");
        }
        Ok::<String, Infallible>(String::new())
    });
    let agent = AgentBuilder::new(lookup_then_answer())
        .tool(panicking)
        .build();
    agent.prompt("Weather?").await.unwrap();
    let spans = recorded.spans();
    let tool = span(&spans, "execute_tool lookup");
    assert_eq!(attr_str(tool, "error.type"), "tool_panicked");
    assert_eq!(attr_str(tool, "reins.tool.outcome"), "failed");
    assert!(matches!(tool.status, Status::Error { .. }));
}

#[tokio::test]
async fn a_failed_spans_status_says_why_in_a_word() {
    let recorded = Recorded::start(Telemetry::new());
    let model = NamedModel::new([Turn::error(CompletionError::Timeout(
        "no answer from the model after 30 s".into(),
    ))]);
    AgentBuilder::new(model)
        .build()
        .prompt("hi")
        .await
        .unwrap_err();
    let spans = recorded.spans();
    assert_eq!(
        span(&spans, "chat gpt-test").status,
        Status::error("timeout")
    );
    assert_eq!(
        span(&spans, "invoke_agent").status,
        Status::error("timeout")
    );

    let recorded = Recorded::start(Telemetry::new());
    let failing = tool_fn("lookup", "Fails.", |_: Value| async move {
        Err::<String, _>("backend down")
    });
    let agent = AgentBuilder::new(lookup_then_answer())
        .tool(failing)
        .build();
    agent.prompt("Weather?").await.unwrap();
    let spans = recorded.spans();
    assert_eq!(
        span(&spans, "execute_tool lookup").status,
        Status::error("tool_execution"),
        "the error's kind, not its text"
    );
}

/// The `exception` events of `span`, as (type, message).
fn exceptions(span: &opentelemetry_sdk::trace::SpanData) -> Vec<(String, String)> {
    event_pairs(span, "exception", "exception.type", "exception.message")
}

/// A failed model call shows what the provider said, as an `exception` event on its own
/// `chat` span (Phoenix shows it with the failed span, whose status says only `404`), when
/// content is recorded, through the redactor: the body may echo the prompt. Nowhere else: the
/// run's span says it failed, in a word.
#[tokio::test]
async fn a_failed_model_calls_error_is_an_exception_on_its_chat_span_when_content_is_recorded() {
    let not_found = || CompletionError::Http {
        status: 404,
        body: "the model `gpt-tset` does not exist; your key sk-live is fine".into(),
    };
    // The spans of a run whose one model call fails so, recorded by `telemetry`.
    let failed_run = async |telemetry: Telemetry| {
        let recorded = Recorded::start(telemetry);
        AgentBuilder::new(NamedModel::new([Turn::error(not_found())]))
            .build()
            .prompt("hi")
            .await
            .unwrap_err();
        recorded.spans()
    };
    let spans = failed_run(
        Telemetry::new().capture_content(|_, text| Some(text.replace("sk-live", "[KEY]"))),
    )
    .await;
    let chat = span(&spans, "chat gpt-test");
    let shown = exceptions(chat);
    assert_eq!(shown.len(), 1, "{:?}", chat.events);
    assert_eq!(shown[0].0, "404");
    assert!(
        shown[0]
            .1
            .contains("the model `gpt-tset` does not exist; your key [KEY] is fine"),
        "{}",
        shown[0].1
    );
    assert!(exceptions(span(&spans, "invoke_agent")).is_empty());

    let spans = failed_run(Telemetry::new()).await;
    assert!(exceptions(span(&spans, "chat gpt-test")).is_empty());
}
