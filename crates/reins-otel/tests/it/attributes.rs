//! What the conventions ask of a `chat` span beyond its model: whether the request streams,
//! the output type it asks for, and an HTTP failure's `error.type`.

use crate::harness::{NamedModel, Recorded, attr, attr_str, span};
use futures::StreamExt;
use opentelemetry::Value as OtelValue;
use reins::agent::AgentBuilder;
use reins::completion::CompletionError;
use reins::testing::Turn;
use reins_otel::Telemetry;

#[tokio::test]
async fn a_streamed_request_says_so_and_an_awaited_one_says_nothing() {
    let recorded = Recorded::start(Telemetry::new());
    let agent = AgentBuilder::new(NamedModel::new([Turn::text("hello")])).build();
    let items: Vec<_> = agent.prompt("hi").stream().collect().await;
    assert!(!items.is_empty());
    let spans = recorded.spans();
    let chat = span(&spans, "chat gpt-test");
    assert_eq!(
        attr(chat, "gen_ai.request.stream"),
        Some(OtelValue::Bool(true))
    );

    let recorded = Recorded::start(Telemetry::new());
    let agent = AgentBuilder::new(NamedModel::new([Turn::text("hello")])).build();
    agent.prompt("hi").await.unwrap();
    let spans = recorded.spans();
    let chat = span(&spans, "chat gpt-test");
    assert_eq!(
        attr(chat, "gen_ai.request.stream"),
        None,
        "recorded if and only if the request streams"
    );
    assert_eq!(
        attr(chat, "gen_ai.output.type"),
        None,
        "no type was asked for"
    );
}

#[tokio::test]
async fn native_structured_output_asks_for_json() {
    let recorded = Recorded::start(Telemetry::new());
    let mut model = NamedModel::new([Turn::text(r#"{"name": "Paris"}"#)]);
    model.inner = model.inner.with_native_output();
    let agent = AgentBuilder::new(model).build();
    let city = agent.prompt("A city?").output::<serde_json::Value>().await;
    assert_eq!(city.unwrap()["name"], "Paris");
    let spans = recorded.spans();
    let chat = span(&spans, "chat gpt-test");
    assert_eq!(attr_str(chat, "gen_ai.output.type"), "json");
}

#[tokio::test]
async fn an_http_failure_is_typed_by_its_status_code() {
    for status in [429, 503] {
        let recorded = Recorded::start(Telemetry::new());
        let failure = CompletionError::Http {
            status,
            body: "try later".into(),
        };
        let model = NamedModel::new([Turn::error(failure)]);
        let agent = AgentBuilder::new(model).build();
        agent.prompt("hi").await.unwrap_err();
        let spans = recorded.spans();
        let status = status.to_string();
        assert_eq!(
            attr_str(span(&spans, "chat gpt-test"), "error.type"),
            status
        );
        assert_eq!(attr_str(span(&spans, "invoke_agent"), "error.type"), status);
    }
}
