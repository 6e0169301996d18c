//! What a command records: the libraries' warnings on stderr and, when asked for by the
//! `OTEL_*` variables, the runs' traces and metrics exported through reins-otel, flushed
//! before the command exits.

use crate::warnings;

/// How long the command waits, at its exit, for the collector to take the spans and metrics
/// still buffered: `OTEL_EXPORTER_OTLP_TIMEOUT` (milliseconds, as OpenTelemetry reads it)
/// when it is set, else [`EXPORT_WAIT`]. A collector that is down or never answers then
/// costs the trace, said in one line, and never holds the exit longer.
pub fn export_wait(timeout_ms: Option<&str>) -> std::time::Duration {
    timeout_ms
        .and_then(|ms| ms.trim().parse().ok())
        .map_or(EXPORT_WAIT, std::time::Duration::from_millis)
}

/// [`export_wait`] when `OTEL_EXPORTER_OTLP_TIMEOUT` is unset: a collector on the same
/// network takes a run's spans in a fraction of it.
const EXPORT_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The global `tracing` subscriber: the libraries' warnings and errors on stderr
/// (`warnings`, filtered by `REINS_LOG`), and, when `OTEL_EXPORTER_OTLP_ENDPOINT` is set or
/// an exporter variable names `console` or `otlp`, the export of the runs' traces and metrics
/// (through reins-otel) in the same subscriber; the export is returned, to be flushed before
/// the command exits.
pub fn start_logging() -> Option<reins_otel::Otel> {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    let level = std::env::var(warnings::ENV).ok();
    if let Some(why) = warnings::unreadable(level.as_deref()) {
        eprintln!("reins: {}", reins::text::printable(&why));
    }
    let stderr = || {
        warnings::StderrLayer::new(level.as_deref()).with_filter(warnings::filter(level.as_deref()))
    };
    let collector = std::env::var_os("OTEL_EXPORTER_OTLP_ENDPOINT")
        .is_some_and(|endpoint| !endpoint.is_empty());
    let exporters = exporters_asked_for();
    if collector || exporters.traces.is_some() || exporters.metrics.is_some() {
        let mut config = reins_otel::Config::new();
        // With no collector named, a signal whose exporter was not asked for goes nowhere,
        // not to OTLP's default address: `OTEL_TRACES_EXPORTER=console` alone shows the spans
        // and sends no metrics to a collector that is not there.
        if !collector {
            if exporters.traces.is_none() {
                config = config.traces_exporter("none");
            }
            if exporters.metrics.is_none() {
                config = config.metrics_exporter("none");
            }
        }
        match config.init_with(stderr()) {
            Ok(otel) => return Some(otel),
            Err(error) => eprintln!("reins: traces are not exported: {error}"),
        }
    }
    // Only fails if a subscriber is installed already, which nothing before this does.
    let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry().with(stderr()));
    None
}

/// The exporters `OTEL_TRACES_EXPORTER` and `OTEL_METRICS_EXPORTER` ask for, when they name
/// one that exports (`console`, `otlp`): `None` when a variable is unset or says `none`.
struct AskedExporters {
    traces: Option<String>,
    metrics: Option<String>,
}

fn exporters_asked_for() -> AskedExporters {
    let asked = |variable: &str| {
        let value = std::env::var(variable).ok()?;
        value
            .split(',')
            .map(str::trim)
            .any(|name| name.eq_ignore_ascii_case("console") || name.eq_ignore_ascii_case("otlp"))
            .then_some(value)
    };
    AskedExporters {
        traces: asked("OTEL_TRACES_EXPORTER"),
        metrics: asked("OTEL_METRICS_EXPORTER"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_exit_waits_for_the_collector_as_long_as_otel_exporter_otlp_timeout_says() {
        assert_eq!(export_wait(Some("30000")), Duration::from_secs(30));
        assert_eq!(export_wait(None), EXPORT_WAIT);
        assert_eq!(export_wait(Some("soon")), EXPORT_WAIT, "not a number");
    }
}
