//! OpenTelemetry export of reins runs: the GenAI traces and metrics reins records, sent over
//! OTLP in one call.
//!
//! reins traces every run with `tracing` spans named after the OpenTelemetry GenAI semantic
//! conventions (`invoke_agent`, `chat {model}`, `execute_tool {tool}`, a `reins.hook.decision`
//! event per hook decision that changes the run). This crate installs a subscriber that
//! exports them, derives the GenAI metrics from them, and keeps a durable run's trace whole: a
//! run resumed in another process continues the trace it started in.
//!
//! ```no_run
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Exports to OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318), honouring the
//! // other OTEL_* variables (headers, service name, resource attributes, timeouts).
//! let otel = reins_otel::init()?;
//! // ... run agents ...
//! otel.shutdown()?; // flushes what is still buffered, waiting 5 s at most
//! # Ok(())
//! # }
//! ```
//!
//! A collector that is down, slow or failing costs the trace and nothing else: spans wait in
//! a bounded queue (2048, `OTEL_BSP_MAX_QUEUE_SIZE`; more are dropped) and are exported from
//! threads of their own, never from the run's; a collector's answer is read up to 4 MiB, and
//! an export ends within the OTLP timeout (`OTEL_EXPORTER_OTLP_TIMEOUT`, 10 s by default),
//! retries and the whole answer included: one not answered in full by then (a collector
//! that trickles its answer) fails, its spans lost, and the next batch is sent as usual.
//! The first failed export is logged once (a `WARN` of target `reins_otel` naming the
//! endpoint by its variable), not again until an export succeeds; a collector that rejects
//! part of a batch (an OTLP partial success) likewise, once until one is wholly accepted,
//! its message quoted escaped and cut to 200 characters, the rejected spans counted as not
//! exported; and
//! [`Otel::shutdown`] returns within [`DEFAULT_FLUSH_TIMEOUT`] (or
//! [`Otel::shutdown_within`]'s limit), saying how many spans never reached the collector
//! ([`NotExported`]).
//!
//! For a subscriber of your own, add [`layers`] to it; to keep a layer of your own (one that
//! shows warnings, say) in the subscriber [`init`] installs, use [`Config::init_with`].
#![deny(missing_docs)]

mod bounded;
mod bridge;
mod delivery;
mod endpoint;
mod exporter_error;
mod filter;
mod layer;
mod metrics;
mod transport;
mod withheld;

pub use bounded::NotExported;
pub use bridge::OtelBridge;
pub use layer::ReinsLayer;
pub use reins::observe::{ContentKind, DEFAULT_CONTENT_PART_LIMIT, Telemetry};
pub use withheld::without_endpoint_logs;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Subscriber;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;

use delivery::Delivery;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The instrumentation scope reins's spans and metrics are reported under.
pub const SCOPE: &str = "reins";

/// The OpenTelemetry GenAI instrumentations' switch for recording message content: set to
/// `true`, [`Config::init`] records it when the config does not say, with the secrets and
/// personal data [`Redaction`](reins::hooks::redaction::Redaction)'s default patterns find
/// masked. This is how a program that calls [`init`] (the `reins` CLI, say) is asked for it.
pub const CAPTURE_CONTENT_VAR: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

/// The service name used when `OTEL_SERVICE_NAME` does not set one.
pub const DEFAULT_SERVICE_NAME: &str = "reins";

/// How long [`Otel::flush`], [`Otel::shutdown`] and dropping an [`Otel`] wait, at most, for
/// the collector to take what is buffered.
pub const DEFAULT_FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// Why export could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InitError {
    /// An OTLP exporter could not be built (e.g. an invalid endpoint). The message names an
    /// endpoint by its variable, never its value, which may hold credentials.
    #[error("the OTLP exporter could not be built: {0}")]
    Exporter(String),
    /// Another global `tracing` subscriber is already installed.
    #[error("a global tracing subscriber is already installed: {0}")]
    SubscriberTaken(#[from] tracing::subscriber::SetGlobalDefaultError),
    /// Flushing or shutting the exporters down failed.
    #[error("flushing the exporters failed: {0}")]
    Shutdown(#[from] opentelemetry_sdk::error::OTelSdkError),
    /// A flush or shutdown left spans or metrics unexported: the collector failed, or did
    /// not answer in time.
    #[error("{0}")]
    NotExported(NotExported),
}

/// The installed exporters. Dropping it shuts them down, flushing what is buffered;
/// [`Otel::shutdown`] does the same and reports failures. Its `Debug` leaves the providers
/// out: theirs shows each exporter's endpoint and headers' values (an API key).
pub struct Otel {
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
    /// How the span export is going.
    traces: Arc<Delivery>,
    /// How the metric export is going; `None` when metrics are exported nowhere.
    metrics: Option<Arc<Delivery>>,
    shut_down: bool,
}

impl std::fmt::Debug for Otel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Otel")
            .field("shut_down", &self.shut_down)
            .finish_non_exhaustive()
    }
}

impl Otel {
    /// The tracer provider spans are exported through. Its `Debug` (the SDK's) shows the
    /// exporter's headers, values included: an `Authorization` header made from the endpoint's
    /// user info, or keys set in `OTEL_EXPORTER_OTLP_HEADERS`. Do not log it.
    pub fn tracer_provider(&self) -> &SdkTracerProvider {
        &self.tracer_provider
    }

    /// The meter provider metrics are exported through. Like the
    /// [tracer provider](Otel::tracer_provider), its `Debug` shows the exporter's headers,
    /// credentials included: do not log it.
    pub fn meter_provider(&self) -> &SdkMeterProvider {
        &self.meter_provider
    }

    /// Exports everything recorded so far, waiting at most [`DEFAULT_FLUSH_TIMEOUT`] for the
    /// collector. [`InitError::NotExported`] says how many spans were not exported since
    /// the last flush that said so (a failed export, or one still waiting for an answer,
    /// which goes on in the background).
    pub fn flush(&self) -> Result<(), InitError> {
        let deadline = Instant::now() + DEFAULT_FLUSH_TIMEOUT;
        let tracer = self.tracer_provider.clone();
        let traces = bounded::start(move || tracer.force_flush());
        let meter = self.meter_provider.clone();
        let metrics = bounded::start(move || meter.force_flush());
        self.outcome(
            traces.wait_until(deadline),
            metrics.wait_until(deadline),
            DEFAULT_FLUSH_TIMEOUT,
        )
    }

    /// Flushes and shuts the exporters down, waiting at most [`DEFAULT_FLUSH_TIMEOUT`]: see
    /// [`Otel::shutdown_within`].
    pub fn shutdown(self) -> Result<(), InitError> {
        self.shutdown_within(DEFAULT_FLUSH_TIMEOUT)
    }

    /// Flushes and shuts the exporters down, returning within about `timeout` whatever the
    /// collector does (is down, never answers, answers slowly or endlessly); an export still
    /// under way then is left to finish in the background, or to end with the process.
    /// [`InitError::NotExported`] says how many spans never reached the collector and why
    /// (naming the endpoint by its variable); a failure at shutdown is said only there, not
    /// logged.
    pub fn shutdown_within(mut self, timeout: Duration) -> Result<(), InitError> {
        self.close(timeout)
    }
}

impl Drop for Otel {
    fn drop(&mut self) {
        if !self.shut_down
            && let Err(error) = self.close(DEFAULT_FLUSH_TIMEOUT)
        {
            tracing::warn!(target: delivery::TARGET, "{error}");
        }
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

/// Sets up OTLP export (HTTP/protobuf) of traces and metrics with the defaults: see
/// [`Config::init`]. reins's spans are exported whatever `RUST_LOG` says of other targets
/// (`RUST_LOG=myapp=debug` keeps them); only a directive naming `reins` (`reins=off`)
/// changes that.
pub fn init() -> Result<Otel, InitError> {
    Config::new().init()
}

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
    /// [`DEFAULT_CONTENT_PART_LIMIT`]. See [`Telemetry::content_part_limit`].
    pub fn content_part_limit(mut self, bytes: usize) -> Self {
        self.telemetry = self.telemetry.content_part_limit(bytes);
        self
    }

    /// Builds OTLP exporters from the `OTEL_*` environment variables
    /// (`OTEL_EXPORTER_OTLP_ENDPOINT`, `..._HEADERS`, `..._TIMEOUT`, `OTEL_SERVICE_NAME`,
    /// `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_METRICS_EXPORTER=none` for a traces-only backend),
    /// installs them and the W3C trace-context propagator globally, and sets a global
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
        let trace_delivery = Delivery::new(
            "traces",
            endpoint::variable(endpoint::TRACES, env_var),
            transport::export_timeout(
                opentelemetry_otlp::OTEL_EXPORTER_OTLP_TRACES_TIMEOUT,
                env_var,
            ),
        );
        let traces = endpoint::credentialed(endpoint::TRACES, env_var);
        let span_exporter = exporter_sent_by(
            opentelemetry_otlp::SpanExporter::builder().with_http(),
            &trace_delivery,
            transport::spans_rejected,
        )?;
        let span_exporter = match &traces {
            Some(credentialed) => credentialed.apply(span_exporter),
            None => span_exporter,
        }
        .build()
        .map_err(|error| InitError::Exporter(exporter_error::described(&error, &traces)))?;
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
            let metrics = endpoint::credentialed(endpoint::METRICS, env_var);
            let delivery = Delivery::new(
                "metrics",
                endpoint::variable(endpoint::METRICS, env_var),
                transport::export_timeout(
                    opentelemetry_otlp::OTEL_EXPORTER_OTLP_METRICS_TIMEOUT,
                    env_var,
                ),
            );
            let metric_exporter = exporter_sent_by(
                opentelemetry_otlp::MetricExporter::builder().with_http(),
                &delivery,
                transport::data_points_rejected,
            )?;
            let metric_exporter = match &metrics {
                Some(credentialed) => credentialed.apply(metric_exporter),
                None => metric_exporter,
            }
            .build()
            .map_err(|error| InitError::Exporter(exporter_error::described(&error, &metrics)))?;
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
        Ok(otel)
    }
}

/// The layers that export reins's spans through `tracer_provider` and record its metrics
/// through `meter_provider`, for a subscriber of your own. `telemetry` says whether content
/// is recorded; the bridge that keeps resumed runs in their trace is added here. Spans carry
/// no `code.*`, `thread.*`, `target`, `busy_ns` or `idle_ns` attributes: for reins's spans
/// they would name its trace module and a worker thread, and say how long the span was
/// polled. (Events keep `level` and `target`: tracing-opentelemetry 0.34 always adds them.)
/// Events of reins's crates with an `error` field, at the `ERROR` level, or with a panic's
/// message (warnings of what a run recovered from, with the error's text; a hook's, a tool
/// source's or an approval decider's panic) are not exported, and no event sets a span's
/// status: reins records failures itself, never with an error's text. Nor are
/// OpenTelemetry's own debug logs of a failed export, which quote the endpoint's URL whole
/// (its user info and query) and what the collector answered; other layers of your
/// subscriber still get them unless you give each [`without_endpoint_logs`] (its example
/// shows a subscriber built on these layers).
pub fn layers<S>(
    tracer_provider: &SdkTracerProvider,
    meter_provider: &SdkMeterProvider,
    telemetry: Telemetry,
) -> impl Layer<S> + Send + Sync + 'static
where
    S: Subscriber + for<'lookup> LookupSpan<'lookup> + Send + Sync,
{
    use opentelemetry::metrics::MeterProvider as _;
    let tracer = tracer_provider.tracer(SCOPE);
    let meter = meter_provider.meter(SCOPE);
    let reins = ReinsLayer::new(telemetry.with_bridge(OtelBridge), &meter);
    // No source location, thread or target: every reins span would say it was made in the
    // driver's trace module, on whichever worker thread polled the run, which tells a reader
    // nothing. No busy and idle times either: how long a run's future was polled is not what
    // a span of it describes (its duration is), and they were two more attributes on each.
    // Neither a warning's error nor an error-level event fails a span, nor is turned into
    // an exception event: reins records failures itself (see `withheld`).
    tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_tracked_inactivity(false)
        .with_error_events_to_status(false)
        .with_error_events_to_exceptions(false)
        .with_error_fields_to_exceptions(false)
        .with_filter(tracing_subscriber::filter::filter_fn(withheld::exported))
        .and_then(reins)
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
    fn the_exporters_debug_shows_no_credentials() {
        let credentialed = endpoint::credentialed(endpoint::TRACES, |name| {
            (name == "OTEL_EXPORTER_OTLP_ENDPOINT")
                .then(|| "http://phoenix:s3cret-pw@collector:4318".to_owned())
        })
        .unwrap();
        let exporter = credentialed
            .apply(opentelemetry_otlp::SpanExporter::builder().with_http())
            .build()
            .unwrap();
        let otel = Otel {
            tracer_provider: SdkTracerProvider::builder()
                .with_simple_exporter(exporter)
                .build(),
            meter_provider: SdkMeterProvider::default(),
            traces: Delivery::new(
                "traces",
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                Duration::from_secs(10),
            ),
            metrics: None,
            shut_down: true,
        };
        let debug = format!("{otel:?}");
        use base64::Engine as _;
        let basic = base64::engine::general_purpose::STANDARD.encode("phoenix:s3cret-pw");
        for secret in ["s3cret-pw", basic.as_str()] {
            assert!(!debug.contains(secret), "{debug}");
        }
    }

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
