//! The `tracing` layer that carries reins's [`Telemetry`] and turns reins's spans into metrics.

use crate::metrics::{DecisionFields, Instruments, SpanFields};
use opentelemetry::metrics::Meter;
use reins::observe::Telemetry;
use std::any::TypeId;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// The target reins's spans and events are recorded under.
const REINS_TARGET: &str = "reins";

/// A layer that exposes a [`Telemetry`] to reins's spans (trace continuity, content capture)
/// and records the GenAI metrics from them. Put it in the same subscriber as a
/// `tracing_opentelemetry` layer; [`crate::init`] does.
#[derive(Debug, Clone)]
pub struct ReinsLayer {
    telemetry: Telemetry,
    instruments: Instruments,
}

impl ReinsLayer {
    /// A layer giving `telemetry` to reins's spans and recording metrics with `meter`.
    pub fn new(telemetry: Telemetry, meter: &Meter) -> Self {
        ReinsLayer {
            telemetry,
            instruments: Instruments::new(meter),
        }
    }
}

impl<S> tracing_subscriber::Layer<S> for ReinsLayer
where
    S: Subscriber + for<'lookup> LookupSpan<'lookup>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().target() != REINS_TARGET {
            return;
        }
        if let Some(span) = ctx.span(id) {
            let mut fields = SpanFields::new();
            attrs.record(&mut fields);
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(fields) = span.extensions_mut().get_mut::<SpanFields>() {
                values.record(fields);
            }
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if event.metadata().target() != REINS_TARGET {
            return;
        }
        let mut fields = DecisionFields::default();
        event.record(&mut fields);
        if fields.is_decision {
            self.instruments.hook_decision(&fields);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(&id) {
            if let Some(fields) = span.extensions().get::<SpanFields>() {
                self.instruments.span_closed(span.name(), fields);
            }
        }
    }

    // SAFETY: each pointer returned points to a value of the type whose id was asked for,
    // owned by `self`, which is what `downcast_raw`'s contract requires.
    unsafe fn downcast_raw(&self, id: TypeId) -> Option<*const ()> {
        if id == TypeId::of::<Self>() {
            Some(self as *const Self as *const ())
        } else if id == TypeId::of::<Telemetry>() {
            Some(&self.telemetry as *const Telemetry as *const ())
        } else {
            None
        }
    }
}
