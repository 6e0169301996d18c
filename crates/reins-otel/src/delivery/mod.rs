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
use std::time::{Duration, Instant};

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
    /// How long one export may take, retries and the collector's whole answer included: the
    /// OTLP timeout.
    timeout: Duration,
    /// When the export under way must have ended ([`Delivery::begin`]).
    deadline: Mutex<Option<Instant>>,
    /// Whether the export under way failed for want of time.
    out_of_time: AtomicBool,
    /// What the collector said it rejected of the export under way.
    rejection: Mutex<Option<Rejection>>,
    /// Whether the latest export that reached the collector was partly rejected (the
    /// rejection then has been said, or is being).
    rejecting: AtomicBool,
    /// Whether the collector answered the export under way that it serves no such path
    /// (404 or 405): a backend that takes traces only, when the signal is metrics.
    path_unserved: AtomicBool,
}

/// What a collector said it rejected of an export it took (an OTLP `partial_success`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rejection {
    /// The spans or data points rejected.
    pub(crate) count: u64,
    /// The collector's reason, as it wrote it (not yet escaped nor cut).
    pub(crate) message: String,
}

impl Rejection {
    /// A rejection of `count` items for `message`, unless it rejects nothing and says nothing
    /// (how a collector that took everything may answer). A negative count is none.
    pub(crate) fn of(count: i64, message: String) -> Option<Rejection> {
        let count = u64::try_from(count).unwrap_or(0);
        (count > 0 || !message.is_empty()).then_some(Rejection { count, message })
    }
}

/// How much of a collector's message a report quotes, in characters.
const QUOTED_CHARS: usize = 200;

impl Delivery {
    /// A signal's delivery to the endpoint read from `variable`, each export given
    /// `timeout`.
    pub(crate) fn new(
        signal: &'static str,
        variable: &'static str,
        timeout: Duration,
    ) -> Arc<Delivery> {
        Arc::new(Delivery {
            signal,
            variable,
            ended: AtomicU64::new(0),
            exported: AtomicU64::new(0),
            reported: AtomicU64::new(0),
            failing: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            last_failure: Mutex::new(None),
            timeout,
            deadline: Mutex::new(None),
            out_of_time: AtomicBool::new(false),
            rejection: Mutex::new(None),
            rejecting: AtomicBool::new(false),
            path_unserved: AtomicBool::new(false),
        })
    }

    /// An export begins: it has [`Delivery::timeout`] from now, whatever it retries.
    fn begin(&self) {
        if let Ok(mut deadline) = self.deadline.lock() {
            *deadline = Some(Instant::now() + self.timeout);
        }
        self.out_of_time.store(false, Ordering::SeqCst);
        self.path_unserved.store(false, Ordering::SeqCst);
        if let Ok(mut rejection) = self.rejection.lock() {
            *rejection = None;
        }
    }

    /// How long one export may take.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// What is left of the export under way's time (all of it outside an export).
    pub(crate) fn time_left(&self) -> Duration {
        let deadline = self.deadline.lock().ok().and_then(|deadline| *deadline);
        match deadline {
            Some(deadline) => deadline.saturating_duration_since(Instant::now()),
            None => self.timeout,
        }
    }

    /// The export under way failed for want of time.
    pub(crate) fn ran_out_of_time(&self) {
        self.out_of_time.store(true, Ordering::SeqCst);
    }

    /// The collector answered the export under way with `status`, not a success.
    pub(crate) fn refused(&self, status: u16) {
        if matches!(status, 404 | 405) {
            self.path_unserved.store(true, Ordering::SeqCst);
        }
    }

    /// What the collector said it rejected of the export under way, if anything.
    pub(crate) fn rejected(&self, rejection: Option<Rejection>) {
        if let Ok(mut pending) = self.rejection.lock() {
            *pending = rejection;
        }
    }

    /// Records an export's outcome; `spans` is how many it carried (0 for metrics).
    fn record(&self, spans: u64, result: &OTelSdkResult) {
        match result {
            Ok(()) => {
                let rejection = self.rejection.lock().ok().and_then(|mut last| last.take());
                let lost = rejection.as_ref().map_or(0, |r| r.count.min(spans));
                self.exported.fetch_add(spans - lost, Ordering::SeqCst);
                if self.failing.swap(false, Ordering::SeqCst) {
                    tracing::info!(
                        target: TARGET,
                        "{} reach the collector at {} again",
                        self.signal,
                        self.variable
                    );
                }
                match rejection {
                    Some(rejection) => self.record_rejection(&rejection, lost),
                    None => self.rejecting.store(false, Ordering::SeqCst),
                }
            }
            Err(error) => {
                let mut reason = if self.out_of_time.load(Ordering::SeqCst) {
                    format!("no complete answer within {:?}", self.timeout)
                } else {
                    reason(error)
                };
                if self.signal == "metrics" && self.path_unserved.load(Ordering::SeqCst) {
                    // Phoenix and Jaeger take traces only: every run would warn of it.
                    reason.push_str(
                        "; a collector that takes traces only is told so with \
                         OTEL_METRICS_EXPORTER=none",
                    );
                }
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

    /// Records that the collector rejected part of an export (`lost` of its spans), saying
    /// so unless the export before was partly rejected too.
    fn record_rejection(&self, rejection: &Rejection, lost: u64) {
        let unit = match (self.signal == "traces", rejection.count == 1) {
            (true, true) => "span",
            (true, false) => "spans",
            (false, true) => "data point",
            (false, false) => "data points",
        };
        let mut said = format!("{} {unit} rejected", rejection.count);
        if !rejection.message.is_empty() {
            said = format!("{said}: {}", quoted(&rejection.message));
        }
        if lost > 0
            && let Ok(mut last) = self.last_failure.lock()
        {
            *last = Some(said.clone());
        }
        let first = !self.rejecting.swap(true, Ordering::SeqCst);
        if first && !self.closing.load(Ordering::SeqCst) {
            tracing::warn!(
                target: TARGET,
                "{} are partly rejected by the collector at {} ({said}); not said again \
                 until an export is wholly accepted",
                self.signal,
                self.variable
            );
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

/// A collector's `message`, quoted for a log line: its endpoints named by their variables,
/// cut to its first [`QUOTED_CHARS`] characters (its length said when cut), control
/// characters, quotes and backslashes escaped, so it stays on one line and cannot pass for
/// another.
fn quoted(message: &str) -> String {
    let message = without_endpoints(message.to_owned());
    let kept: String = message.chars().take(QUOTED_CHARS).collect();
    let escaped = kept.escape_debug();
    if kept.len() < message.len() {
        format!("\"{escaped}\"... ({} bytes in all)", message.len())
    } else {
        format!("\"{escaped}\"")
    }
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
        self.delivery.begin();
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
        self.delivery.begin();
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
mod tests;
