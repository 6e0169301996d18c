//! [`Config`]: how export is set up, and setting it up from the `OTEL_*` variables: one
//! exporter per signal, each sending through its own [`transport`] and watched by its
//! [`Delivery`], under one global subscriber.

use crate::console::{ConsoleMetrics, ConsoleOutput, ConsoleSpans};
use crate::otlp::{env_var, metrics as otlp_metrics, spans as otlp_spans};
use crate::{
    CAPTURE_CONTENT_VAR, ContentKind, DEFAULT_SERVICE_NAME, InitError, Otel, Telemetry,
    compression, filter, layers, selection, withheld, without_endpoint_logs,
};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;

/// How [`Config::init`] sets export up.
///
/// ```
/// use reins_otel::{Config, ContentKind};
///
/// // Record prompts and answers, with e-mail addresses masked; never tool results.
/// let config = Config::new().capture_content(|kind, text| match kind {
///     ContentKind::ToolResult => None,
///     _ => Some(text.replace('@', "(at)")),
/// });
/// # let _ = config;
/// ```
#[derive(Debug, Default)]
pub struct Config {
    telemetry: Telemetry,
    /// Where the console exporter writes; stderr unless set.
    console: Option<ConsoleOutput>,
    /// The traces' exporters, in place of `OTEL_TRACES_EXPORTER`'s.
    traces_exporter: Option<String>,
    /// The metrics' exporters, in place of `OTEL_METRICS_EXPORTER`'s.
    metrics_exporter: Option<String>,
}

impl Config {
    /// Defaults: no message content recorded.
    pub fn new() -> Self {
        Config::default()
    }

    /// Records message content (prompts, completions, tool arguments and results) as
    /// `redact` returns it; `None` drops a piece. Off by default (unless
    /// [`CAPTURE_CONTENT_VAR`] is `true`).
    pub fn capture_content(
        mut self,
        redact: impl Fn(ContentKind, String) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.telemetry = self.telemetry.capture_content(redact);
        self
    }

    /// Cuts each part of recorded content (a message's text, a tool call's arguments, a
    /// tool's result) to its first `bytes`, with a marker giving its whole length; default
    /// [`DEFAULT_CONTENT_PART_LIMIT`](crate::DEFAULT_CONTENT_PART_LIMIT). See
    /// [`Telemetry::content_part_limit`].
    pub fn content_part_limit(mut self, bytes: usize) -> Self {
        self.telemetry = self.telemetry.content_part_limit(bytes);
        self
    }

    /// Where the console exporter writes, when `OTEL_TRACES_EXPORTER` or
    /// `OTEL_METRICS_EXPORTER` names `console`: stderr unless this says otherwise (a file, a
    /// buffer a test reads, or `std::io::stdout()` in a program whose stdout is no answer).
    /// Stderr by default, not the standard output OpenTelemetry's specification names: a
    /// program that runs agents prints its answer on stdout, and spans there would be mixed
    /// into what a pipe reads.
    ///
    /// ```no_run
    /// // OTEL_TRACES_EXPORTER=console: each span written to trace.txt as it ends.
    /// let file = std::fs::File::create("trace.txt")?;
    /// let otel = reins_otel::Config::new().console_output(file).init()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn console_output(mut self, writer: impl std::io::Write + Send + 'static) -> Self {
        self.console = Some(ConsoleOutput::new(writer));
        self
    }

    /// The traces' exporters, as `OTEL_TRACES_EXPORTER` would name them (`otlp`, `console`,
    /// `none`, or a comma list), whatever that variable says.
    ///
    /// ```no_run
    /// // A tool that shows its runs' spans on stderr and sends its metrics nowhere.
    /// let otel = reins_otel::Config::new()
    ///     .traces_exporter("console")
    ///     .metrics_exporter("none")
    ///     .init()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn traces_exporter(mut self, exporters: impl Into<String>) -> Self {
        self.traces_exporter = Some(exporters.into());
        self
    }

    /// The metrics' exporters, as `OTEL_METRICS_EXPORTER` would name them, whatever that
    /// variable says.
    pub fn metrics_exporter(mut self, exporters: impl Into<String>) -> Self {
        self.metrics_exporter = Some(exporters.into());
        self
    }

    /// Builds exporters from the `OTEL_*` environment variables
    /// (`OTEL_EXPORTER_OTLP_ENDPOINT`, `..._HEADERS`, `..._TIMEOUT`, `OTEL_SERVICE_NAME`,
    /// `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_METRICS_EXPORTER=none` for a traces-only backend,
    /// `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` = `otlp` (the default), `console`
    /// (written as text, see [`Config::console_output`]), `none`, or a comma list of them;
    /// an exporter reins-otel lacks (`zipkin`) is left out with a warning, and OTLP used if
    /// nothing is left,
    /// `OTEL_EXPORTER_OTLP_COMPRESSION=gzip` or a signal's own `..._COMPRESSION` for gzipped
    /// exports), installs them and the W3C trace-context propagator globally, and sets a global
    /// `tracing` subscriber exporting reins's spans.
    ///
    /// An endpoint's user info (`http://user:password@collector:4318`) is taken out of its
    /// URL and sent as an `Authorization: Basic` header: the exporters never hold it in their
    /// URL, which OpenTelemetry quotes in its logs and errors. An `authorization` header of
    /// `OTEL_EXPORTER_OTLP_HEADERS` (or a signal's own `..._HEADERS`) is sent instead.
    ///
    /// What is exported is filtered by `RUST_LOG` (`info` when it is unset or invalid), with
    /// `reins=info` added unless one of its directives names `reins`: a `RUST_LOG` written
    /// for the application (`myapp=debug`, or `warn`) would otherwise turn reins's spans
    /// off, and with them everything this exporter is for. `reins=off` turns them off,
    /// `reins=debug` lets more of reins through. (A target directive matches by prefix, so
    /// the added one also lets reins's other crates log at `info` inside its spans.)
    pub fn init(self) -> Result<Otel, InitError> {
        self.init_with(tracing_subscriber::layer::Identity::new())
    }

    /// [`Config::init`], with `other` in the same global subscriber: one registry, so a
    /// program that also shows (say) warnings on stderr keeps that and the export together
    /// (only one global subscriber can be installed). `other` sees every span and event,
    /// whatever the export's filter lets through: give it a filter of its own
    /// ([`Layer::with_filter`]). It does not see OpenTelemetry's own debug logs of a failed
    /// export that quote the endpoint's URL (its query included) or the collector's answer:
    /// [`without_endpoint_logs`] filters the whole subscriber. Nor does it see the SDK's
    /// event of each failed batch (an `ERROR` with an empty message, every few seconds while
    /// the collector is down): the failure is said once instead, by reins-otel (a `WARN` of
    /// target `reins_otel`: "traces are not reaching the collector at
    /// OTEL_EXPORTER_OTLP_ENDPOINT (HTTP export failed with status code: 401)"), and again
    /// only after an export succeeded in between. Nor does it see the SDK's event of each
    /// batch a collector partly rejected, which quotes the collector's message as it wrote
    /// it: reins-otel says it once ("traces are partly rejected by the collector at
    /// OTEL_EXPORTER_OTLP_ENDPOINT (1 span rejected: \"span too old\")"), escaped and cut,
    /// and again only after an export was wholly accepted in between.
    pub fn init_with<L>(self, other: L) -> Result<Otel, InitError>
    where
        L: Layer<tracing_subscriber::Registry> + Send + Sync + 'static,
    {
        let requested = std::env::var(CAPTURE_CONTENT_VAR).ok();
        let telemetry = with_requested_content(self.telemetry, requested.as_deref());
        let resource = resource();
        let console = self.console.unwrap_or_else(ConsoleOutput::stderr);
        let chosen = |set: Option<String>| move |name: &str| set.clone().or_else(|| env_var(name));
        let trace_exporters = selection::selected(selection::TRACES, chosen(self.traces_exporter));
        let metric_exporters =
            selection::selected(selection::METRICS, chosen(self.metrics_exporter));
        let mut ignored = Vec::new();
        let mut tracer_provider = SdkTracerProvider::builder().with_resource(resource.clone());
        let mut trace_delivery = None;
        if trace_exporters.exporters.otlp {
            let (counted, delivery) = otlp_spans(&mut ignored)?;
            tracer_provider = tracer_provider.with_span_processor(counted);
            trace_delivery = Some(delivery);
        }
        if trace_exporters.exporters.console {
            // A batch processor of its own: written from its thread, never the run's, and a
            // copy of each span, as the OTLP one gets.
            let batch = opentelemetry_sdk::trace::BatchSpanProcessor::builder(ConsoleSpans::new(
                console.clone(),
            ))
            .build();
            tracer_provider = tracer_provider.with_span_processor(batch);
        }
        let mut metric_delivery = None;
        let mut meter_provider = SdkMeterProvider::builder().with_resource(resource);
        // A backend that takes traces only (e.g. Phoenix) is set up with the standard
        // OTEL_METRICS_EXPORTER=none; metrics are then recorded nowhere.
        if metric_exporters.exporters.otlp {
            let (watched, delivery) = otlp_metrics(&mut ignored)?;
            meter_provider = meter_provider.with_periodic_exporter(watched);
            metric_delivery = Some(delivery);
        }
        if metric_exporters.exporters.console {
            meter_provider = meter_provider.with_periodic_exporter(ConsoleMetrics::new(console));
        }
        let meter_provider = meter_provider.build();
        let otel = Otel {
            tracer_provider: tracer_provider.build(),
            meter_provider,
            traces: trace_delivery,
            metrics: metric_delivery,
            shut_down: false,
        };
        let rust_log = std::env::var(tracing_subscriber::EnvFilter::DEFAULT_ENV).ok();
        let filter = filter::export_filter(rust_log.as_deref());
        // OpenTelemetry's own logs of a failed export quote the endpoint whole (a key in its
        // query) and the collector's answer: kept from every layer here, the caller's too.
        let subscriber = tracing_subscriber::registry()
            .with(other)
            .with(
                layers(&otel.tracer_provider, &otel.meter_provider, telemetry).with_filter(filter),
            )
            .with(without_endpoint_logs())
            .with(withheld::without_reported_failures());
        tracing::subscriber::set_global_default(subscriber)?;
        opentelemetry::global::set_tracer_provider(otel.tracer_provider.clone());
        opentelemetry::global::set_meter_provider(otel.meter_provider.clone());
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        // Said once the subscriber is installed: before, no layer would hear it.
        trace_exporters.warn_ignored();
        metric_exporters.warn_ignored();
        compression::warn_ignored(&ignored);
        Ok(otel)
    }
}

/// `telemetry`, recording content with the default masks when [`CAPTURE_CONTENT_VAR`] is
/// `true` (`requested`) and it does not record content already.
fn with_requested_content(telemetry: Telemetry, requested: Option<&str>) -> Telemetry {
    let on = requested.is_some_and(|value| value.trim().eq_ignore_ascii_case("true"));
    if !on || telemetry.captures_content() {
        return telemetry;
    }
    let redaction = reins::hooks::redaction::Redaction::new();
    telemetry.capture_content(move |_, text| {
        let masked = match redaction.redact(&text) {
            std::borrow::Cow::Owned(masked) => Some(masked),
            std::borrow::Cow::Borrowed(_) => None,
        };
        Some(masked.unwrap_or(text))
    })
}

/// The resource from the environment, named [`DEFAULT_SERVICE_NAME`] unless
/// `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` names the service.
fn resource() -> Resource {
    let detected = Resource::builder().build();
    let named = std::env::var_os("OTEL_SERVICE_NAME").is_some()
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES")
            .is_ok_and(|attrs| attrs.contains("service.name="));
    if named {
        detected
    } else {
        Resource::builder()
            .with_service_name(DEFAULT_SERVICE_NAME)
            .build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_is_recorded_only_when_asked_for_with_true() {
        for (value, on) in [
            (None, false),
            (Some("false"), false),
            (Some("1"), false),
            (Some("true"), true),
            (Some(" TRUE "), true),
        ] {
            let telemetry = with_requested_content(Telemetry::new(), value);
            assert_eq!(telemetry.captures_content(), on, "{value:?}");
        }
    }
}
