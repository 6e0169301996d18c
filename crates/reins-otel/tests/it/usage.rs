//! Token usage on the spans (and so in the token metrics): only where the provider reported
//! it, and whatever ended the run.

use crate::harness::{NamedModel, Recorded, attr, attr_i64, attr_str, span};
use crate::metrics::{has, points};
use opentelemetry::trace::Status;
use reins::agent::*;
use reins::completion::{CompletionError, Usage};
use reins::testing::Turn;
use reins::tool::tool_fn;
use reins_otel::Telemetry;
use serde_json::{Value, json};
use std::convert::Infallible;

#[tokio::test]
async fn token_counts_are_recorded_as_reported_and_not_as_zeros_when_none_were() {
    let recorded = Recorded::start(Telemetry::new());
    let agent = AgentBuilder::new(NamedModel::new([Turn::text("hello")])).build();
    agent.prompt("hi").await.unwrap();
    let spans = recorded.spans();
    for name in ["chat gpt-test", "invoke_agent"] {
        let span = span(&spans, name);
        assert_eq!(attr(span, "gen_ai.usage.input_tokens"), None, "{name}");
        assert_eq!(attr(span, "gen_ai.usage.output_tokens"), None, "{name}");
    }

    // A reported count of nothing generated is a count.
    let recorded = Recorded::start(Telemetry::new());
    let model = NamedModel::new([Turn::text("").usage(Usage::new(12, 0))]);
    let _ = AgentBuilder::new(model).build().prompt("hi").await;
    let spans = recorded.spans();
    let chat = span(&spans, "chat gpt-test");
    assert_eq!(attr_i64(chat, "gen_ai.usage.input_tokens"), 12);
    assert_eq!(attr_i64(chat, "gen_ai.usage.output_tokens"), 0);
}

/// Tokens the provider read from or wrote to its prompt cache are on each call's span and
/// summed on the run's, beside the input tokens they are part of; none reported, none shown.
#[tokio::test]
async fn prompt_cache_tokens_are_recorded_as_parts_of_the_input() {
    let recorded = Recorded::start(Telemetry::new());
    let lookup = tool_fn("lookup", "Looks up.", |_: Value| async move {
        Ok::<_, Infallible>("found")
    });
    let model = NamedModel::new([
        Turn::tool_call("lookup", json!({})).usage(Usage::new(100, 5).with_cached_input(0, 80)),
        Turn::text("done").usage(Usage::new(120, 9).with_cached_input(80, 0)),
    ]);
    AgentBuilder::new(model)
        .tool(lookup)
        .build()
        .prompt("hi")
        .await
        .unwrap();
    let spans = recorded.spans();
    let chats: Vec<_> = spans.iter().filter(|s| s.name == "chat gpt-test").collect();
    let read = "gen_ai.usage.cache_read.input_tokens";
    let written = "gen_ai.usage.cache_creation.input_tokens";
    assert_eq!(attr(chats[0], read), None);
    assert_eq!(attr_i64(chats[0], written), 80);
    assert_eq!(attr_i64(chats[1], read), 80);
    assert_eq!(attr(chats[1], written), None);
    let run = span(&spans, "invoke_agent");
    assert_eq!(attr_i64(run, "gen_ai.usage.input_tokens"), 220);
    assert_eq!((attr_i64(run, read), attr_i64(run, written)), (80, 80));
}

/// Stops the run on every successful model call's outcome.
struct StopOnAnswer;
impl AgentHook for StopOnAnswer {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        match event.completion() {
            Some(_) => OutcomeAction::stop("seen enough"),
            None => OutcomeAction::proceed(),
        }
    }
}

#[tokio::test]
async fn a_call_an_outcome_hook_stops_after_keeps_its_usage_and_response_on_its_span() {
    let recorded = Recorded::start(Telemetry::new());
    let model = NamedModel::new([Turn::text("hello").usage(Usage::new(11, 7))]);
    let agent = AgentBuilder::new(model).add_hook(StopOnAnswer).build();
    let error = agent.prompt("hi").await.unwrap_err();
    assert!(matches!(error, PromptError::Cancelled { .. }), "{error:?}");
    let spans = recorded.spans();
    let chat = span(&spans, "chat gpt-test");
    assert_eq!(attr_i64(chat, "gen_ai.usage.input_tokens"), 11);
    assert_eq!(attr_i64(chat, "gen_ai.usage.output_tokens"), 7);
    assert_eq!(attr_str(chat, "gen_ai.response.id"), "scripted-1");
    assert_eq!(
        attr_str(chat, "gen_ai.response.model"),
        "gpt-test-2026-01-01"
    );
    assert!(attr(chat, "gen_ai.response.finish_reasons").is_some());
    assert_eq!(
        attr_str(chat, "error.type"),
        "stopped_by_hook",
        "still stopped"
    );
    assert!(matches!(chat.status, Status::Error { .. }));

    recorded.meter_provider.force_flush().unwrap();
    let metrics = recorded.metrics.get_finished_metrics().unwrap();
    let tokens = points(&metrics, "gen_ai.client.token.usage");
    let sum = |kind: &str| {
        tokens
            .iter()
            .filter(|(attributes, ..)| has(attributes, "gen_ai.token.type", kind))
            .map(|(_, _, sum)| *sum)
            .sum::<f64>()
    };
    assert_eq!((sum("input"), sum("output")), (11.0, 7.0));
}

#[tokio::test]
async fn a_failed_run_records_the_usage_and_turns_it_had() {
    let recorded = Recorded::start(Telemetry::new());
    let model = NamedModel::new([
        Turn::tool_call("lookup", json!({})).usage(Usage::new(11, 7)),
        Turn::error(CompletionError::Timeout("slow".into())),
    ]);
    let lookup = tool_fn("lookup", "Looks up.", |_: Value| async move {
        Ok::<_, Infallible>("found")
    });
    let agent = AgentBuilder::new(model).tool(lookup).build();
    agent.prompt("hi").await.unwrap_err();
    let spans = recorded.spans();
    let run = span(&spans, "invoke_agent");
    assert_eq!(attr_str(run, "reins.run.status"), "failed");
    assert_eq!(attr_i64(run, "gen_ai.usage.input_tokens"), 11);
    assert_eq!(attr_i64(run, "gen_ai.usage.output_tokens"), 7);
    assert_eq!(attr_i64(run, "reins.turn"), 2);
}
