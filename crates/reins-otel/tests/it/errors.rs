//! How failures read in a trace: `error.type` names why a span failed.

use crate::harness::{NamedModel, Recorded, attr_str, span};
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
