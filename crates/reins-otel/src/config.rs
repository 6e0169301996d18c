//! [`Config`]: how export is set up, and setting it up from the `OTEL_*` variables: one
//! exporter per signal, each sending through its own [`transport`] and watched by its
//! [`Delivery`], under one global subscriber.

use crate::delivery::{self, Delivery};
use crate::{
    CAPTURE_CONTENT_VAR, ContentKind, DEFAULT_SERVICE_NAME, InitError, Otel, Telemetry,
    compression, endpoint, exporter_error, filter, layers, transport, withheld,
    without_endpoint_logs,
};
use opentelemetry_otlp::{
    MetricExporter, OTEL_EXPORTER_OTLP_METRICS_COMPRESSION, OTEL_EXPORTER_OTLP_METRICS_TIMEOUT,
    OTEL_EXPORTER_OTLP_TRACES_COMPRESSION, OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, SpanExporter,
};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use std::sync::Arc;
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

    /// Builds OTLP exporters from the `OTEL_*` environment variables
    /// (`OTEL_EXPORTER_OTLP_ENDPOINT`, `..._HEADERS`, `..._TIMEOUT`, `OTEL_SERVICE_NAME`,
    /// `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_METRICS_EXPORTER=none` for a traces-only backend,
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
        let trace_delivery = delivery(
            "traces",
            endpoint::TRACES,
            OTEL_EXPORTER_OTLP_TRACES_TIMEOUT,
        );
        let trace_compression = compression::chosen(OTEL_EXPORTER_OTLP_TRACES_COMPRESSION, env_var);
        let mut ignored = trace_compression.ignored;
        let span_exporter = exporter(
            SpanExporter::builder().with_http(),
            endpoint::TRACES,
            trace_compression.compression,
            &trace_delivery,
            transport::spans_rejected,
            |builder| builder.build(),
        )?;
        // Spans are counted as they end and as the collector takes them, on one processor:
        // a second would be given a copy of each span.
        let batch = opentelemetry_sdk::trace::BatchSpanProcessor::builder(delivery::Watched {
            inner: span_exporter,
            delivery: trace_delivery.clone(),
        })
        .build();
        let tracer_provider = SdkTracerProvider::builder()
            .with_span_processor(delivery::Counted {
                inner: batch,
                delivery: trace_delivery.clone(),
            })
            .with_resource(resource.clone())
            .build();
        let mut metric_delivery = None;
        let mut meter_provider = SdkMeterProvider::builder().with_resource(resource);
        // A backend that takes traces only (e.g. Phoenix) is set up with the standard
        // OTEL_METRICS_EXPORTER=none; metrics are then recorded nowhere.
        if !exporter_disabled("OTEL_METRICS_EXPORTER") {
            let delivery = delivery(
                "metrics",
                endpoint::METRICS,
                OTEL_EXPORTER_OTLP_METRICS_TIMEOUT,
            );
            let metric_compression =
                compression::chosen(OTEL_EXPORTER_OTLP_METRICS_COMPRESSION, env_var);
            ignored.extend(metric_compression.ignored);
            let metric_exporter = exporter(
                MetricExporter::builder().with_http(),
                endpoint::METRICS,
                metric_compression.compression,
                &delivery,
                transport::data_points_rejected,
                |builder| builder.build(),
            )?;
            meter_provider = meter_provider.with_periodic_exporter(delivery::Watched {
                inner: metric_exporter,
                delivery: delivery.clone(),
            });
            metric_delivery = Some(delivery);
        }
        let meter_provider = meter_provider.build();
        let otel = Otel {
            tracer_provider,
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

/// `builder` sending through a [`transport::Transport`] of `delivery`'s signal (each export
/// within its timeout, which the exporter is given too), whose answers `rejection` reads.
fn exporter_sent_by<B>(
    builder: B,
    delivery: &Arc<Delivery>,
    rejection: transport::RejectionReader,
) -> Result<B, InitError>
where
    B: opentelemetry_otlp::WithExportConfig + opentelemetry_otlp::WithHttpConfig,
{
    let client =
        transport::Transport::new(delivery.clone(), rejection).map_err(InitError::Exporter)?;
    Ok(builder
        .with_timeout(delivery.timeout())
        .with_http_client(client))
}

/// The delivery of the signal `name` (`traces`), whose endpoint is `signal`'s and whose
/// export timeout is read from `timeout_variable` (or the variable all signals share).
fn delivery(name: &'static str, signal: endpoint::Signal, timeout_variable: &str) -> Arc<Delivery> {
    Delivery::new(
        name,
        endpoint::variable(signal, env_var),
        transport::export_timeout(timeout_variable, env_var),
    )
}

/// The exporter `build` makes of `builder`, sent by [`exporter_sent_by`] to `signal`'s
/// endpoint with `compression` ([`compression::chosen`]), with the endpoint's user info taken
/// out of its URL into a header. An error names the endpoint by its variable.
fn exporter<B, E>(
    builder: B,
    signal: endpoint::Signal,
    compression: Option<opentelemetry_otlp::Compression>,
    delivery: &Arc<Delivery>,
    rejection: transport::RejectionReader,
    build: impl FnOnce(B) -> Result<E, opentelemetry_otlp::ExporterBuildError>,
) -> Result<E, InitError>
where
    B: opentelemetry_otlp::WithExportConfig + opentelemetry_otlp::WithHttpConfig,
{
    let credentialed = endpoint::credentialed(signal, env_var);
    let mut builder = exporter_sent_by(builder, delivery, rejection)?;
    // Given, the SDK reads no compression variable itself: what was chosen is what is sent.
    if let Some(compression) = compression {
        builder = builder.with_compression(compression);
    }
    let builder = match &credentialed {
        Some(credentialed) => credentialed.apply(builder),
        None => builder,
    };
    build(builder)
        .map_err(|error| InitError::Exporter(exporter_error::described(&error, &credentialed)))
}

/// The environment variable `name`, if it is set (and Unicode).
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Whether the exporter variable `name` (e.g. `OTEL_METRICS_EXPORTER`) says `none`.
fn exporter_disabled(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| value.trim().eq_ignore_ascii_case("none"))
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
