//! What exporting a run's spans costs per turn.
//!
//! The workload of `reins`'s `tool_loop` bench: 10 turns on a `ScriptedModel`, 9 calling a
//! trivial tool, then a text turn; no hooks. The cases:
//!
//! - `untraced`: no subscriber, so reins's spans take the disabled-callsite path;
//! - `traced`: a subscriber made of [`reins_otel::layers`], exporting every span to an
//!   in-memory exporter (synchronously, per span) and recording the GenAI metrics;
//! - `traced/content`: the same, with message content captured (no redaction).
//!
//! The cost per turn of tracing is `(traced − untraced) / 10` (21 spans a run: one
//! `invoke_agent`, 10 `chat`, 9 `execute_tool`... plus their attributes).
//!
//! Run with `cargo bench -p reins-otel --bench traced_tool_loop`.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use reins::agent::{Agent, AgentBuilder};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use reins_otel::Telemetry;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::hint::black_box;
use tracing_subscriber::layer::SubscriberExt;

const TOOL_TURNS: usize = 9;

fn agent() -> Agent {
    let calls = (0..TOOL_TURNS).map(|_| Turn::tool_call("increment", json!({ "x": 1 })));
    let model =
        ScriptedModel::new(calls.chain([Turn::text("The answer is 2.")])).without_request_log();
    AgentBuilder::new(model)
        .tool(tool_fn(
            "increment",
            "Adds one to x.",
            |args: Value| async move { Ok::<_, Infallible>(args["x"].as_i64().unwrap_or(0) + 1) },
        ))
        .default_max_turns(20)
        .build()
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("tool_loop");
    group.bench_function("untraced", |b| {
        b.iter_batched(
            agent,
            |agent| black_box(runtime.block_on(async { agent.prompt("go").await })),
            BatchSize::SmallInput,
        )
    });
    for (name, telemetry) in [
        ("traced", Telemetry::new()),
        (
            "traced/content",
            Telemetry::new().capture_content(|_, text| Some(text)),
        ),
    ] {
        let spans = InMemorySpanExporter::default();
        let tracer_provider = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let meter_provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(InMemoryMetricExporter::default()).build())
            .build();
        let subscriber = tracing_subscriber::registry().with(reins_otel::layers(
            &tracer_provider,
            &meter_provider,
            telemetry,
        ));
        let _guard = tracing::subscriber::set_default(subscriber);
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    spans.reset();
                    agent()
                },
                |agent| black_box(runtime.block_on(async { agent.prompt("go").await })),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
