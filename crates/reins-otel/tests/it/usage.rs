//! Token usage on the spans (and so in the token metrics) only where the provider reported it.

use crate::harness::{NamedModel, Recorded, attr, attr_i64, span};
use reins::agent::AgentBuilder;
use reins::completion::Usage;
use reins::testing::Turn;
use reins_otel::Telemetry;

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
