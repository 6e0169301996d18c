//! The GenAI metrics derived from a run's spans and hook decisions.

use crate::harness::{NamedModel, Recorded};
use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use reins::agent::*;
use reins::completion::Usage;
use reins::testing::Turn;
use reins::tool::tool_fn;
use reins_otel::Telemetry;
use serde_json::{Value, json};
use std::convert::Infallible;

/// Skips the second tool call of a turn.
struct SkipSecond;
impl AgentHook for SkipSecond {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.internal_call_id() {
            Some("t1c1") => DispatchAction::skip("once is enough"),
            _ => DispatchAction::proceed(),
        }
    }
}

/// (attributes, count, sum) of each data point of the metric `name`.
pub fn points(metrics: &[ResourceMetrics], name: &str) -> Vec<(Vec<KeyValue>, u64, f64)> {
    let mut found = Vec::new();
    for resource in metrics {
        for scope in resource.scope_metrics() {
            for metric in scope.metrics().filter(|m| m.name() == name) {
                match metric.data() {
                    AggregatedMetrics::F64(MetricData::Histogram(h)) => {
                        for p in h.data_points() {
                            found.push((p.attributes().cloned().collect(), p.count(), p.sum()));
                        }
                    }
                    AggregatedMetrics::U64(MetricData::Histogram(h)) => {
                        for p in h.data_points() {
                            let sum = p.sum() as f64;
                            found.push((p.attributes().cloned().collect(), p.count(), sum));
                        }
                    }
                    AggregatedMetrics::U64(MetricData::Sum(s)) => {
                        for p in s.data_points() {
                            found.push((p.attributes().cloned().collect(), p.value(), 0.0));
                        }
                    }
                    other => panic!("{name} has unexpected data {other:?}"),
                }
            }
        }
    }
    found.sort_by_key(|(attributes, ..)| format!("{attributes:?}"));
    found
}

pub fn has(attributes: &[KeyValue], key: &str, value: &str) -> bool {
    attributes
        .iter()
        .any(|kv| kv.key.as_str() == key && kv.value.as_str() == value)
}

#[tokio::test]
async fn token_usage_durations_tool_calls_and_hook_decisions_are_recorded() {
    let recorded = Recorded::start(Telemetry::new());
    let model = NamedModel::new([
        Turn::tool_calls([("echo", json!({"n": 1})), ("echo", json!({"n": 2}))])
            .usage(Usage::new(10, 4)),
        Turn::text("done").usage(Usage::new(30, 2)),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(tool_fn("echo", "Echoes.", |args: Value| async move {
            Ok::<_, Infallible>(args.to_string())
        }))
        .add_hook(SkipSecond)
        .build();
    agent.prompt("go").await.unwrap();
    recorded.meter_provider.force_flush().unwrap();
    let metrics = recorded.metrics.get_finished_metrics().unwrap();

    let tokens = points(&metrics, "gen_ai.client.token.usage");
    assert_eq!(tokens.len(), 2, "{tokens:?}");
    for (attributes, count, sum) in &tokens {
        assert!(has(attributes, "gen_ai.operation.name", "chat"));
        assert!(has(attributes, "gen_ai.provider.name", "openai"));
        assert!(has(attributes, "gen_ai.request.model", "gpt-test"));
        assert!(has(
            attributes,
            "gen_ai.response.model",
            "gpt-test-2026-01-01"
        ));
        assert_eq!(*count, 2);
        if has(attributes, "gen_ai.token.type", "input") {
            assert_eq!(*sum, 40.0);
        } else {
            assert!(has(attributes, "gen_ai.token.type", "output"));
            assert_eq!(*sum, 6.0);
        }
    }

    let durations = points(&metrics, "gen_ai.client.operation.duration");
    assert_eq!(durations.len(), 1, "{durations:?}");
    assert_eq!(durations[0].1, 2, "one per model call");

    let tool_durations = points(&metrics, "gen_ai.execute_tool.duration");
    assert_eq!(tool_durations.iter().map(|p| p.1).sum::<u64>(), 2);
    let calls = points(&metrics, "reins.tool.calls");
    let by_outcome = |outcome: &str| {
        calls
            .iter()
            .filter(|(a, ..)| {
                has(a, "reins.tool.outcome", outcome) && has(a, "gen_ai.tool.name", "echo")
            })
            .map(|p| p.1)
            .sum::<u64>()
    };
    assert_eq!(by_outcome("success"), 1);
    assert_eq!(by_outcome("skipped"), 1);

    let decisions = points(&metrics, "reins.hook.decisions");
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert!(has(&decisions[0].0, "reins.hook.action", "skip"));
    assert!(has(&decisions[0].0, "reins.hook.name", "on_tool_dispatch"));
    assert_eq!(decisions[0].1, 1);
}
