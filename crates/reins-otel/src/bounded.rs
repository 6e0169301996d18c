//! Flushing and shutting the exporters down within a time limit, and what was lost.
//!
//! The SDK's own waits do not add up to a bound a program can rely on: a shutdown waits up
//! to 5 s for traces, then up to 5 s more for metrics, and a flush of the metrics waits for
//! the export however long the collector takes (one that sends its answer a byte at a time
//! holds it indefinitely). Here each provider is flushed or shut down on a thread of its own,
//! both are waited for together until one deadline, and a thread still waiting then is left
//! to finish (or to end with the process).

use crate::delivery::Delivery;
use crate::{InitError, Otel};
use opentelemetry_sdk::error::OTelSdkResult;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What a flush or shutdown did not get to the collector, and why. It names the endpoint by
/// its variable, never by its URL (which may hold credentials).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NotExported {
    /// The spans that ended and were not exported (since export was set up, or since the
    /// flush that last reported some).
    pub spans: u64,
    /// Whether the latest metrics were not exported.
    pub metrics: bool,
    /// The variable the endpoint is read from (`OTEL_EXPORTER_OTLP_ENDPOINT`, or a signal's
    /// own).
    pub endpoint_variable: &'static str,
    /// Why: the collector did not answer in time, or the last failed export's error.
    pub reason: String,
}

impl std::fmt::Display for NotExported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, were) = match (self.spans, self.metrics) {
            (1, false) => ("1 span".to_owned(), "was"),
            (spans, false) => (format!("{spans} spans"), "were"),
            (0, true) => ("the metrics".to_owned(), "were"),
            (1, true) => ("1 span and the metrics".to_owned(), "were"),
            (spans, true) => (format!("{spans} spans and the metrics"), "were"),
        };
        write!(
            f,
            "{what} {were} not exported to the collector at {} ({})",
            self.endpoint_variable, self.reason
        )
    }
}

/// Runs `work` on a thread of its own; [`Pending::wait_until`] waits for its result.
pub(crate) fn start<F>(work: F) -> Pending
where
    F: FnOnce() -> OTelSdkResult + Send + 'static,
{
    let (sender, receiver) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("reins-otel-flush".to_owned())
        .spawn(move || {
            let _ = sender.send(work());
        });
    // A thread that could not be started has dropped the sender: the wait then ends at once,
    // as one that timed out.
    drop(spawned);
    Pending(receiver)
}

/// A flush or shutdown under way on its own thread.
pub(crate) struct Pending(mpsc::Receiver<OTelSdkResult>);

impl Pending {
    /// Its result, or `None` if it has not finished by `deadline`.
    pub(crate) fn wait_until(self, deadline: Instant) -> Option<OTelSdkResult> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.0.recv_timeout(left).ok()
    }
}

/// What was lost, if anything, after a flush or shutdown that waited `timeout`: `traces` and
/// `metrics` are the providers' results, `None` when they did not finish in time.
pub(crate) fn not_exported(
    traces: Option<(&Arc<Delivery>, &Option<OTelSdkResult>)>,
    metrics: Option<(&Arc<Delivery>, &Option<OTelSdkResult>)>,
    timeout: Duration,
) -> Option<NotExported> {
    let spans = traces.map_or(0, |(delivery, _)| delivery.take_unexported());
    let metrics_lost =
        metrics.is_some_and(|(delivery, result)| result.is_none() || delivery.failing());
    if spans == 0 && !metrics_lost {
        return None;
    }
    let timed_out = (spans > 0 && traces.is_some_and(|(_, result)| result.is_none()))
        || metrics.is_some_and(|(_, result)| result.is_none());
    // Spans were lost only if they are sent over OTLP; else the metrics were.
    let delivery = match (traces, metrics) {
        (Some((delivery, _)), _) if spans > 0 => delivery,
        (_, Some((delivery, _))) => delivery,
        (Some((delivery, _)), None) => delivery,
        (None, None) => return None,
    };
    let reason = if timed_out {
        format!("no answer within {timeout:?}")
    } else {
        delivery
            .last_failure()
            .unwrap_or_else(|| "dropped before they were sent".to_owned())
    };
    Some(NotExported {
        spans,
        metrics: metrics_lost,
        endpoint_variable: delivery.variable,
        reason,
    })
}

impl Otel {
    /// Shuts both providers down, each on its own thread, waiting for them until `timeout`
    /// has passed; failures from now on are said by the result, not logged.
    pub(crate) fn close(&mut self, timeout: Duration) -> Result<(), InitError> {
        self.shut_down = true;
        if let Some(traces) = &self.traces {
            traces.close();
        }
        if let Some(metrics) = &self.metrics {
            metrics.close();
        }
        let deadline = Instant::now() + timeout;
        let tracer = self.tracer_provider.clone();
        let traces = start(move || tracer.shutdown_with_timeout(timeout));
        let meter = self.meter_provider.clone();
        let metrics = start(move || meter.shutdown_with_timeout(timeout));
        self.outcome(
            traces.wait_until(deadline),
            metrics.wait_until(deadline),
            timeout,
        )
    }

    /// What a flush or shutdown that waited `timeout` comes to, given the providers' results
    /// (`None`: not finished in time).
    pub(crate) fn outcome(
        &self,
        traces: Option<opentelemetry_sdk::error::OTelSdkResult>,
        metrics: Option<opentelemetry_sdk::error::OTelSdkResult>,
        timeout: Duration,
    ) -> Result<(), InitError> {
        let watched_traces = self.traces.as_ref().map(|delivery| (delivery, &traces));
        let watched_metrics = self.metrics.as_ref().map(|delivery| (delivery, &metrics));
        if let Some(lost) = not_exported(watched_traces, watched_metrics, timeout) {
            return Err(InitError::NotExported(lost));
        }
        traces.unwrap_or(Ok(()))?;
        metrics.unwrap_or(Ok(()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_says_what_was_lost_by_the_endpoints_variable() {
        let lost = NotExported {
            spans: 4,
            metrics: true,
            endpoint_variable: "OTEL_EXPORTER_OTLP_ENDPOINT",
            reason: "no answer within 3s".to_owned(),
        };
        assert_eq!(
            lost.to_string(),
            "4 spans and the metrics were not exported to the collector at \
             OTEL_EXPORTER_OTLP_ENDPOINT (no answer within 3s)"
        );
    }

    #[test]
    fn a_wait_ends_at_its_deadline() {
        let (release, released) = mpsc::channel::<()>();
        let pending = start(move || {
            let _ = released.recv();
            Ok(())
        });
        assert!(pending.wait_until(Instant::now()).is_none());
        drop(release);
        let pending = start(|| Ok(()));
        let far = Instant::now() + Duration::from_secs(600);
        assert!(matches!(pending.wait_until(far), Some(Ok(()))));
    }
}
