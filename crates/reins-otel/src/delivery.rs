//! Whether what reins records reaches the collector, said once.
//!
//! OpenTelemetry logs each failed export (`BatchSpanProcessor.ExportError`, an `ERROR` with
//! an empty message, every batch; `Export.Failed.*` warnings of its retries), so a collector
//! that is down fills a terminal with lines that say little. The exporters [`Config::init`]
//! builds are wrapped here instead: the first failure of a signal is logged once, as a
//! `WARN` of target [`TARGET`] naming the endpoint by its variable, and again only after an
//! export has succeeded in between; spans are counted as they end and as the collector takes
//! them, so [`Otel::shutdown`] can say how many never reached it. OpenTelemetry's own events
//! of the same failures are kept from the subscriber [`Config::init`] installs
//! ([`crate::withheld`]).
//!
//! [`Config::init`]: crate::Config::init
//! [`Otel::shutdown`]: crate::Otel::shutdown

use crate::exporter_error::without_endpoints;
use opentelemetry::Context;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::metrics::Temporality;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter, SpanProcessor};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The target of reins-otel's own reports of the export.
pub(crate) const TARGET: &str = "reins_otel";

/// How one signal's export is going.
#[derive(Debug)]
pub(crate) struct Delivery {
    /// `traces` or `metrics`.
    signal: &'static str,
    /// The variable the signal's endpoint is read from.
    pub(crate) variable: &'static str,
    /// Spans ended (traces only).
    ended: AtomicU64,
    /// Spans the collector took (traces only).
    exported: AtomicU64,
    /// Of `ended - exported`, how many a flush or shutdown has already reported.
    reported: AtomicU64,
    /// Whether the latest export failed (its failure then has been said, or is being).
    failing: AtomicBool,
    /// Set while the exporters shut down: a failure then is said by what shutdown returns.
    closing: AtomicBool,
    /// Why the latest failed export failed.
    last_failure: Mutex<Option<String>>,
}

impl Delivery {
    pub(crate) fn new(signal: &'static str, variable: &'static str) -> Arc<Delivery> {
        Arc::new(Delivery {
            signal,
            variable,
            ended: AtomicU64::new(0),
            exported: AtomicU64::new(0),
            reported: AtomicU64::new(0),
            failing: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            last_failure: Mutex::new(None),
        })
    }

    /// Records an export's outcome; `spans` is how many it carried (0 for metrics).
    fn record(&self, spans: u64, result: &OTelSdkResult) {
        match result {
            Ok(()) => {
                self.exported.fetch_add(spans, Ordering::SeqCst);
                if self.failing.swap(false, Ordering::SeqCst) {
                    tracing::info!(
                        target: TARGET,
                        "{} reach the collector at {} again",
                        self.signal,
                        self.variable
                    );
                }
            }
            Err(error) => {
                let reason = reason(error);
                if let Ok(mut last) = self.last_failure.lock() {
                    *last = Some(reason.clone());
                }
                let first = !self.failing.swap(true, Ordering::SeqCst);
                if first && !self.closing.load(Ordering::SeqCst) {
                    tracing::warn!(
                        target: TARGET,
                        "{} are not reaching the collector at {} ({reason}); not said again \
                         until an export succeeds",
                        self.signal,
                        self.variable
                    );
                }
            }
        }
    }

    /// From now on a failure is said by what shutdown returns, not logged.
    pub(crate) fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
    }

    /// Whether the latest export failed.
    pub(crate) fn failing(&self) -> bool {
        self.failing.load(Ordering::SeqCst)
    }

    /// Why the latest failed export failed, if one did.
    pub(crate) fn last_failure(&self) -> Option<String> {
        self.last_failure.lock().ok().and_then(|last| last.clone())
    }

    /// Spans ended that the collector has not taken, less those a call of this already
    /// counted: each flush or shutdown reports the spans lost since the one before.
    pub(crate) fn take_unexported(&self) -> u64 {
        let lost = self
            .ended
            .load(Ordering::SeqCst)
            .saturating_sub(self.exported.load(Ordering::SeqCst));
        lost.saturating_sub(self.reported.swap(lost, Ordering::SeqCst))
    }
}

/// An export error said briefly: the SDK's `Operation failed: ` prefix off, no endpoint.
fn reason(error: &OTelSdkError) -> String {
    let text = match error {
        OTelSdkError::InternalFailure(message) => message.clone(),
        other => other.to_string(),
    };
    without_endpoints(text)
}

/// A span processor (the batch one) whose spans are counted as they end.
#[derive(Debug)]
pub(crate) struct Counted<P> {
    pub(crate) inner: P,
    pub(crate) delivery: Arc<Delivery>,
}

impl<P: SpanProcessor> SpanProcessor for Counted<P> {
    fn on_start(&self, span: &mut Span, cx: &Context) {
        self.inner.on_start(span, cx);
    }

    fn on_end(&self, span: SpanData) {
        self.delivery.ended.fetch_add(1, Ordering::SeqCst);
        self.inner.on_end(span);
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn shutdown(&self) -> OTelSdkResult {
        self.inner.shutdown()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// An exporter whose outcomes are recorded in its [`Delivery`].
#[derive(Debug)]
pub(crate) struct Watched<E> {
    pub(crate) inner: E,
    pub(crate) delivery: Arc<Delivery>,
}

impl<E: SpanExporter> SpanExporter for Watched<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let spans = batch.len() as u64;
        let result = self.inner.export(batch).await;
        self.delivery.record(spans, &result);
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn shutdown(&self) -> OTelSdkResult {
        self.inner.shutdown()
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

impl<E: PushMetricExporter> PushMetricExporter for Watched<E> {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let result = self.inner.export(metrics).await;
        self.delivery.record(0, &result);
        result
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn shutdown(&self) -> OTelSdkResult {
        self.inner.shutdown()
    }

    fn temporality(&self) -> Temporality {
        self.inner.temporality()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_spans_are_counted_once_each() {
        let delivery = Delivery::new("traces", "OTEL_EXPORTER_OTLP_ENDPOINT");
        delivery.ended.fetch_add(5, Ordering::SeqCst);
        delivery.record(2, &Ok(()));
        delivery.record(3, &Err(OTelSdkError::InternalFailure("down".into())));
        assert_eq!(delivery.take_unexported(), 3);
        assert_eq!(delivery.take_unexported(), 0, "already reported");
        delivery.ended.fetch_add(1, Ordering::SeqCst);
        assert_eq!(delivery.take_unexported(), 1);
        assert!(delivery.failing());
        assert_eq!(delivery.last_failure().as_deref(), Some("down"));
    }
}
