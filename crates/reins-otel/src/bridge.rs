//! The [`SpanBridge`] between reins's `tracing` spans and their OpenTelemetry trace.

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry::{Array, StringValue, Value};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use reins::observe::SpanBridge;
use std::collections::HashMap;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The W3C trace-context header a run's context is stored as.
const TRACEPARENT: &str = "traceparent";

/// Reads and sets trace contexts through `tracing-opentelemetry`, stored as W3C `traceparent`.
#[derive(Debug, Default, Clone, Copy)]
pub struct OtelBridge;

impl SpanBridge for OtelBridge {
    fn capture(&self, span: &Span) -> Option<String> {
        let context = span.context();
        if !context.span().span_context().is_valid() {
            return None;
        }
        let mut carrier = HashMap::new();
        TraceContextPropagator::new().inject_context(&context, &mut carrier);
        carrier.remove(TRACEPARENT)
    }

    fn continue_from(&self, span: &Span, captured: &str) {
        let carrier = HashMap::from([(TRACEPARENT.to_owned(), captured.to_owned())]);
        let parent = TraceContextPropagator::new().extract(&carrier);
        if !parent.span().span_context().is_valid() {
            tracing::debug!(target: "reins_otel", "a stored trace context is not a valid traceparent; the resumed run starts a new trace");
            return;
        }
        if let Err(error) = span.set_parent(parent) {
            tracing::debug!(target: "reins_otel", %error, "the resumed run's span could not join its stored trace");
        }
    }

    fn rename(&self, span: &Span, name: String) {
        span.context().span().update_name(name);
    }

    fn record_strings(&self, span: &Span, key: &'static str, values: Vec<String>) {
        let values = values.into_iter().map(StringValue::from).collect();
        span.set_attribute(key, Value::Array(Array::String(values)));
    }
}
