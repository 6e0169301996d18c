//! A subscriber exporting to in-memory exporters, and a model that names itself like a
//! provider's.

use opentelemetry::{Key, Value};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use reins::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, RawResponse,
};
use reins::testing::{ScriptedModel, Turn};
use reins_otel::Telemetry;
use serde_json::json;
use tracing::subscriber::DefaultGuard;
use tracing_subscriber::layer::SubscriberExt;

/// Spans and metrics recorded while the guard is held (on this thread).
pub struct Recorded {
    pub spans: InMemorySpanExporter,
    pub metrics: InMemoryMetricExporter,
    pub tracer_provider: SdkTracerProvider,
    pub meter_provider: SdkMeterProvider,
    _guard: DefaultGuard,
}

impl Recorded {
    /// Records with `telemetry` (no content capture unless it says so).
    pub fn start(telemetry: Telemetry) -> Self {
        let spans = InMemorySpanExporter::default();
        let metrics = InMemoryMetricExporter::default();
        let tracer_provider = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let meter_provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(metrics.clone()).build())
            .build();
        let subscriber = tracing_subscriber::registry().with(reins_otel::layers(
            &tracer_provider,
            &meter_provider,
            telemetry,
        ));
        reins_test_servers::ask_every_subscriber();
        let guard = tracing::subscriber::set_default(subscriber);
        Recorded {
            spans,
            metrics,
            tracer_provider,
            meter_provider,
            _guard: guard,
        }
    }

    /// The finished spans, in the order they ended.
    pub fn spans(&self) -> Vec<SpanData> {
        self.tracer_provider.force_flush().unwrap();
        self.spans.get_finished_spans().unwrap()
    }
}

/// The one finished span named `name`.
pub fn span<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    let found: Vec<&SpanData> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "spans named {name:?} in {:?}", names(spans));
    found[0]
}

/// The names of `spans`.
pub fn names(spans: &[SpanData]) -> Vec<String> {
    spans.iter().map(|s| s.name.to_string()).collect()
}

/// The value of `key` on `span`, if set.
pub fn attr(span: &SpanData, key: &str) -> Option<Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key == Key::from(key.to_owned()))
        .map(|kv| kv.value.clone())
}

/// The string value of `key` on `span`.
pub fn attr_str(span: &SpanData, key: &str) -> String {
    match attr(span, key) {
        Some(value) => value.as_str().into_owned(),
        None => panic!("{} has no {key}: {:?}", span.name, span.attributes),
    }
}

/// The integer value of `key` on `span`.
pub fn attr_i64(span: &SpanData, key: &str) -> i64 {
    match attr(span, key) {
        Some(Value::I64(value)) => value,
        other => panic!("{} has {key} = {other:?}", span.name),
    }
}

/// The hook-decision events of `span`, as (action, hook).
pub fn decisions(span: &SpanData) -> Vec<(String, String)> {
    event_pairs(
        span,
        "reins.hook.decision",
        "reins.hook.action",
        "reins.hook.name",
    )
}

/// The span's events named `name`, each as its `first` and `second` attributes' text (empty
/// when absent).
pub fn event_pairs(
    span: &SpanData,
    name: &str,
    first: &str,
    second: &str,
) -> Vec<(String, String)> {
    span.events
        .iter()
        .filter(|event| event.name == name)
        .map(|event| {
            let get = |key: &str| {
                event
                    .attributes
                    .iter()
                    .find(|kv| kv.key.as_str() == key)
                    .map(|kv| kv.value.as_str().into_owned())
                    .unwrap_or_default()
            };
            (get(first), get(second))
        })
        .collect()
}

/// A scripted model that names itself and its answers like a hosted provider's.
#[derive(Clone)]
pub struct NamedModel {
    pub inner: ScriptedModel,
    pub provider: &'static str,
    pub model: &'static str,
}

impl NamedModel {
    pub fn new(turns: impl IntoIterator<Item = Turn>) -> Self {
        NamedModel {
            inner: ScriptedModel::new(turns),
            provider: "openai",
            model: "gpt-test",
        }
    }
}

impl CompletionModel for NamedModel {
    async fn completion(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        let mut response = self.inner.completion(request).await?;
        response.raw = RawResponse::new(json!({ "model": format!("{}-2026-01-01", self.model) }));
        Ok(response)
    }

    fn supports_native_output(&self) -> bool {
        self.inner.supports_native_output()
    }

    fn model_name(&self) -> Option<&str> {
        Some(self.model)
    }

    fn provider_name(&self) -> Option<&str> {
        Some(self.provider)
    }
}
