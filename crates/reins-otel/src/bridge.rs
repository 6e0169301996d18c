//! The [`SpanBridge`] between reins's `tracing` spans and their OpenTelemetry trace.

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry::{Array, Context, StringValue, Value};
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
        let Some(parent) = stored_context(captured) else {
            return;
        };
        if let Err(error) = span.set_parent(parent) {
            tracing::debug!(target: "reins_otel", %error, "the resumed run's span could not join its stored trace");
        }
    }

    fn link_to(&self, span: &Span, captured: &str) {
        if let Some(linked) = stored_context(captured) {
            span.add_link(linked.span().span_context().clone());
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

/// The context a run stored (a W3C `traceparent`), if it is a valid one.
fn stored_context(captured: &str) -> Option<Context> {
    let carrier = HashMap::from([(TRACEPARENT.to_owned(), captured.to_owned())]);
    let stored = TraceContextPropagator::new().extract(&carrier);
    if stored.span().span_context().is_valid() {
        return Some(stored);
    }
    tracing::debug!(target: "reins_otel", "a stored trace context is not a valid traceparent; the resumed run starts a new trace");
    None
}
