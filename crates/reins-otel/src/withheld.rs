//! What of reins's own logging, and of OpenTelemetry's, the export leaves out.
//!
//! reins's libraries log what they recover from (a tool source that fails to list its tools,
//! a lease not renewed, a cache not written) with the error's text, for the person at the
//! terminal. Inside a run those events would become events of its spans, exported whether
//! content is recorded or not: the text may hold a server's words, a prompt a provider
//! echoed, or a URL's credentials. So an event of reins's crates with an `error` field, at
//! the `ERROR` level (a hook's panic and its message), or with a `message` field of its own
//! beside its text (a caught panic's message, logged at `WARN` when the run goes on: a tool
//! source or an approval decider that panicked) is not exported (stderr and other layers
//! still get it). A panic's message is whatever the user's code put in it (a request, a
//! token), and tracing-opentelemetry would make it the event's name, replacing the text
//! that says what panicked; that text alone cannot be exported (a filter keeps or drops an
//! event whole), so the event is withheld. Nor is an MCP server's own log line
//! (`reins_mcp::server_log`, a `notifications/message` forwarded at the server's level): its
//! text is the server's words, a file's path or a query it served, whatever content capture
//! says (its progress messages carry their text in a `message` field of their own, so are
//! withheld by the rule above). And no event changes a span's status: reins
//! records a span's failure itself (`error.type`, and the status described by it), while
//! tracing-opentelemetry would otherwise mark a span that recovered as failed (any `ERROR`
//! event does) and describe it with the error's text.
//!
//! OpenTelemetry's own crates log (at `DEBUG`, through `tracing`, when their `internal-logs`
//! feature is on, as it is by default) each failed export with the request's URL whole — the endpoint's user info
//! and query included — with the HTTP client's error, which quotes the URL again, or the
//! collector's answer, which may echo a header (an API key); the HTTP client's connection
//! pool logs (at `TRACE`) the URL's authority, user info included. Those events are never
//! exported, and [`without_endpoint_logs`] keeps them from a layer of the user's:
//! [`Config::init_with`](crate::Config::init_with) puts it on its whole subscriber, so its
//! caller's layer never sees them. The failure itself reaches it once, as reins-otel's own
//! warning ([`crate::delivery`]), in place of the SDK's event of each failed batch
//! (`BatchSpanProcessor.ExportError`: "HTTP export failed with status code: 401"), which
//! the same subscriber withholds ([`without_reported_failures`]); so does a collector's
//! partial rejection (`HttpTraceClient.PartialSuccess`, a `WARN` of each such batch quoting
//! the collector's message as it wrote it), said once a streak by reins-otel instead.

use tracing::field::FieldSet;
use tracing::{Level, Metadata};
use tracing_subscriber::filter::FilterFn;

/// A filter for a layer of your own beside [`layers`](crate::layers) (a log on stderr, a
/// file): it keeps from that layer OpenTelemetry's own logs that quote the OTLP endpoint or
/// what the collector answered, and the HTTP client's connection pool's logs, which name
/// the endpoint's host with its user info. A failed export logs, at `DEBUG`, the request's
/// URL whole (a key in its query, or user info in an endpoint you gave the exporter) and the
/// collector's answer, which may echo a header (an API key); a layer that shows `DEBUG` would
/// write them out. Everything else passes, the export's failure among it (the SDK's `ERROR`
/// event: "HTTP export failed with status code: 401").
/// [`Config::init_with`](crate::Config::init_with) puts it on the whole subscriber it
/// installs.
///
/// ```
/// use opentelemetry_sdk::metrics::SdkMeterProvider;
/// use opentelemetry_sdk::trace::SdkTracerProvider;
/// use tracing_subscriber::layer::SubscriberExt;
/// use tracing_subscriber::{EnvFilter, Layer};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let tracer_provider = SdkTracerProvider::builder().build(); // with your exporter
/// let meter_provider = SdkMeterProvider::builder().build();
/// let stderr = tracing_subscriber::fmt::layer()
///     .with_writer(std::io::stderr)
///     .with_filter(EnvFilter::new("debug"))
///     .with_filter(reins_otel::without_endpoint_logs());
/// let subscriber = tracing_subscriber::registry().with(stderr).with(reins_otel::layers(
///     &tracer_provider,
///     &meter_provider,
///     reins_otel::Telemetry::new(),
/// ));
/// tracing::subscriber::set_global_default(subscriber)?;
/// # Ok(())
/// # }
/// ```
pub fn without_endpoint_logs() -> FilterFn {
    FilterFn::new(not_quoting_the_endpoint as fn(&Metadata<'_>) -> bool)
}

/// A filter for the subscriber [`Config::init`](crate::Config::init) installs: it keeps out
/// OpenTelemetry's own events of a failed export, which reins-otel reports itself, once
/// ([`crate::delivery`]): the SDK logs each failed batch (an `ERROR` whose message is empty),
/// each retry that gave up, a shutdown that timed out, and each batch a collector partly
/// rejected.
pub(crate) fn without_reported_failures() -> FilterFn {
    FilterFn::new(not_reported_by_reins_otel as fn(&Metadata<'_>) -> bool)
}

/// Whether `metadata` is not of one of OpenTelemetry's [`REPORTED_FAILURES`].
fn not_reported_by_reins_otel(metadata: &Metadata<'_>) -> bool {
    !(metadata.is_event()
        && metadata.target().starts_with("opentelemetry")
        && REPORTED_FAILURES.contains(&metadata.name()))
}

/// The names of OpenTelemetry's events (0.33) of a failed export or a shutdown that ran out
/// of time, of spans dropped from a full queue, and of a collector's partial rejection (one
/// per batch, its message unescaped): what reins-otel counts and reports.
const REPORTED_FAILURES: [&str; 13] = [
    "BatchSpanProcessor.ExportError",
    "BatchSpanProcessor.Shutdown.Timeout",
    "BatchSpanProcessor.Shutdown.Error",
    "BatchSpanProcessor.SpanDroppingStarted",
    "BatchSpanProcessor.SpansDropped",
    "PeriodicReader.ExportError",
    "MeterProvider.Drop.ShutdownFailed",
    "Export.Failed.DeadlineExceeded",
    "Export.Failed.NonRetryable",
    "Export.Failed.Exhausted",
    "Export.InProgress.Retrying",
    "HttpTraceClient.PartialSuccess",
    "HttpMetricsClient.PartialSuccess",
];

/// Whether `metadata` is not of an event that [`quotes_the_endpoint`].
fn not_quoting_the_endpoint(metadata: &Metadata<'_>) -> bool {
    !quotes_the_endpoint(metadata)
}

/// Whether an event or span of `metadata` is exported: every one but an event of reins's
/// crates carrying an error's or a panic's text or an MCP server's log line (see the
/// [module docs](self)), and one of OpenTelemetry's that [`quotes_the_endpoint`].
pub(crate) fn exported(metadata: &Metadata<'_>) -> bool {
    !(metadata.is_event()
        && is_reins_crate(metadata.target())
        && (*metadata.level() == Level::ERROR
            || metadata.fields().field("error").is_some()
            || has_own_message(metadata.fields())
            || metadata.target() == MCP_SERVER_LOG_TARGET))
        && !quotes_the_endpoint(metadata)
}

/// Whether an event of `metadata` may quote the endpoint's credentials or the collector's
/// answer: one of OpenTelemetry's crates' with a `url`, `endpoint`, `headers` or
/// `response_body` field (`HttpClient.NetworkError`, `HttpClient.StatusError`,
/// `HttpClient.ResponseBodyTooLarge`; the gRPC exporter's `TonicChannelBuilt`), or one of
/// the HTTP client's connection pool (`TRACE`: "checkout waiting for idle connection"),
/// which names each connection by the URL's scheme and authority, user info included.
fn quotes_the_endpoint(metadata: &Metadata<'_>) -> bool {
    metadata.is_event()
        && (metadata.target() == CONNECTION_POOL_TARGET
            || metadata.target().starts_with("opentelemetry")
                && metadata
                    .fields()
                    .iter()
                    .any(|field| ENDPOINT_FIELDS.contains(&field.name())))
}

/// The target under which reins-mcp forwards an MCP server's log lines.
const MCP_SERVER_LOG_TARGET: &str = "reins_mcp::server_log";

/// The target of the OTLP HTTP client's connection pool's logs (reqwest's, over hyper).
const CONNECTION_POOL_TARGET: &str = "hyper_util::client::legacy::pool";

/// The fields of OpenTelemetry's log events that hold an endpoint, its headers or what the
/// collector answered.
const ENDPOINT_FIELDS: [&str; 4] = ["url", "endpoint", "headers", "response_body"];

/// Whether an event has a `message` field of its own beside the one its format string
/// fills (`warn!(%message, "a tool source panicked")`): `tracing` gives both the name
/// `message`, so the field set holds it twice.
fn has_own_message(fields: &FieldSet) -> bool {
    fields
        .iter()
        .filter(|field| field.name() == "message")
        .count()
        > 1
}

/// Whether `target` is one of reins's crates' (`reins`, `reins::tools`, `reins_mcp`, ...).
fn is_reins_crate(target: &str) -> bool {
    let Some(rest) = target.strip_prefix("reins") else {
        return false;
    };
    rest.is_empty() || rest.starts_with("::") || rest.starts_with('_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing::Subscriber;
    use tracing_subscriber::layer::{Context, SubscriberExt};
    use tracing_subscriber::{Layer, Registry};

    #[test]
    fn reins_crates_are_told_by_their_target() {
        for (target, reins) in [
            ("reins", true),
            ("reins::tools", true),
            ("reins_mcp", true),
            ("reins_mcp::server_log", true),
            ("reinsurance", false),
            ("myapp", false),
        ] {
            assert_eq!(is_reins_crate(target), reins, "{target}");
        }
    }

    /// Records whether each event it sees is exported.
    #[derive(Clone, Default)]
    struct Verdicts(Arc<Mutex<Vec<bool>>>);

    impl<S: Subscriber> Layer<S> for Verdicts {
        fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
            let mut verdicts = self.0.lock().unwrap_or_else(|e| e.into_inner());
            verdicts.push(exported(event.metadata()));
        }
    }

    #[test]
    fn a_warning_with_a_panics_message_is_withheld_and_a_plain_one_kept() {
        let verdicts = Verdicts::default();
        let subscriber = Registry::default().with(verdicts.clone());
        tracing::subscriber::with_default(subscriber, || {
            let message = "boom";
            tracing::warn!(target: "reins::tools", %message, "a tool source panicked");
            tracing::warn!(target: "reins", message = %message, "the decider panicked");
            tracing::warn!(target: "reins_mcp", server = "dict", "left out");
            tracing::warn!(target: "myapp", %message, "an application's own");
            tracing::info!(target: "reins_mcp::server_log", server = "fs", "read /home/u/notes");
            let progress = "copied /home/u/notes";
            tracing::info!(target: "reins_mcp::progress", server = "fs", message = progress, "MCP progress");
        });
        assert_eq!(
            *verdicts.0.lock().unwrap(),
            [false, false, true, true, false, false]
        );
    }

    #[test]
    fn opentelemetrys_own_reports_of_a_failed_export_are_withheld() {
        let verdicts = Verdicts::default();
        let subscriber =
            Registry::default().with(verdicts.clone().with_filter(without_reported_failures()));
        tracing::subscriber::with_default(subscriber, || {
            tracing::error!(name: "BatchSpanProcessor.ExportError", target: "opentelemetry_sdk", error = "HTTP export failed");
            tracing::warn!(name: "Export.Failed.DeadlineExceeded", target: "opentelemetry-otlp", retries = 1);
            tracing::warn!(name: "HttpTraceClient.PartialSuccess", target: "opentelemetry-otlp", rejected_spans = 1);
            tracing::warn!(name: "BatchSpanProcessor.ExportError", target: "myapp", "an application's own");
            tracing::warn!(target: "reins_otel", "traces are not reaching the collector");
        });
        assert_eq!(verdicts.0.lock().unwrap().len(), 2, "the last two are kept");
    }

    #[test]
    fn opentelemetrys_logs_quoting_the_url_are_withheld() {
        let verdicts = Verdicts::default();
        let subscriber = Registry::default().with(verdicts.clone());
        tracing::subscriber::with_default(subscriber, || {
            let url = "http://u:pw@collector:4318/v1/traces";
            tracing::debug!(target: "opentelemetry-otlp", name = "HttpClient.NetworkError", url, error = "refused");
            tracing::debug!(target: "opentelemetry-otlp", name = "HttpClient.StatusError", response_body = "{}");
            tracing::error!(target: "opentelemetry_sdk", name = "BatchSpanProcessor.ExportError", error = "HTTP export failed");
            tracing::trace!(target: "hyper_util::client::legacy::pool", "checkout dropped for {url}");
            tracing::debug!(target: "hyper_util::client::legacy::connect::http", "connecting");
            tracing::debug!(target: "myapp", url, "an application's own");
        });
        let verdicts = verdicts.0.lock().unwrap();
        assert_eq!(*verdicts, [false, false, true, false, true, true]);
    }
}
