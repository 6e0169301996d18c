//! OpenTelemetry export of reins runs: the GenAI traces and metrics reins records, sent over
//! OTLP in one call.
//!
//! reins traces every run with `tracing` spans named after the OpenTelemetry GenAI semantic
//! conventions (`invoke_agent`, `chat {model}`, `execute_tool {tool}`, a `reins.hook.decision`
//! event per hook decision that changes the run). This crate installs a subscriber that
//! exports them, derives the GenAI metrics from them, and keeps a durable run's trace whole: a
//! run resumed in another process continues the trace it started in. A run whose process died
//! mid-run, resumed from its store, cannot: the span it would continue never ended, so it was
//! never exported. It starts a trace of its own instead, linked to the one it started in
//! (`reins.resumed_from` = `running`), which Phoenix lists by the run's prompt and answer, and
//! its later halves continue that one. What the dead process exported before it died (a model
//! call that had ended) stays in the old trace, under a parent that never arrived. With
//! content recorded, the trace's root (the half that suspended, which Phoenix lists the trace
//! by) says what it waits for as its `output.value`, and the resumed half's `invoke_agent`
//! span shows the prompt and the final answer; a call that waits for a decision has
//! `reins.tool.outcome` = `suspended` and no error status.
//!
//! An `invoke_agent` span says which agent ran by `gen_ai.agent.name` (the name given to
//! [`AgentBuilder::name`](reins::agent::AgentBuilder::name), when one was) and which run by
//! `reins.run.id`; its `gen_ai.conversation.id` is the conversation the run names, else its
//! run id. It has no `gen_ai.agent.id`, which the conventions define as the unique identifier
//! of the agent (their example is the id a hosted agent service gives its agents): a reins
//! agent is a value in the program that runs it, with no identity beyond its name, a label
//! that need not be unique, and a run id identifies one run, not the agent. Either, recorded
//! as the agent's id, would tell a backend that groups spans by agent that two agents of one
//! name are one, or that each run is an agent of its own.
//!
//! Token counts are `gen_ai.usage.input_tokens` and `gen_ai.usage.output_tokens` as the
//! provider reported them, the input counting the prompt tokens a provider read from or wrote
//! to its cache, as the conventions ask; those parts are also recorded on their own, as
//! `gen_ai.usage.cache_read.input_tokens` and `gen_ai.usage.cache_creation.input_tokens`,
//! when the provider reported them ([`Usage`](reins::completion::Usage)'s cache counts). The
//! token usage metric has no cache type in the conventions, so it counts input and output.
//!
//! ```no_run
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Exports to OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318), honouring the
//! // other OTEL_* variables (headers, service name, resource attributes, timeouts,
//! // compression).
//! let otel = reins_otel::init()?;
//! // ... run agents ...
//! otel.shutdown()?; // flushes what is still buffered, waiting 5 s at most
//! # Ok(())
//! # }
//! ```
//!
//! A backend that takes traces only (Arize Phoenix, Jaeger) answers the metrics' export
//! with an error status, which `shutdown` reports as [`NotExported`]: set
//! `OTEL_METRICS_EXPORTER=none` for one. For Phoenix on this machine:
//!
//! ```sh
//! export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:6006 OTEL_METRICS_EXPORTER=none
//! ```
//!
//! To look at a run's spans without a collector, set `OTEL_TRACES_EXPORTER=console` (and
//! `OTEL_METRICS_EXPORTER=console` for the metrics, or `none`): each span is written as text
//! as it ends, a header line (name, trace and span ids, parent, kind, duration, status), then
//! an attribute a line, strings quoted and escaped. It goes to **stderr**, not the standard
//! output OpenTelemetry's specification names: a program that runs agents prints its answer
//! on stdout, where a pipe would read the spans as part of it.
//! [`Config::console_output`] writes it elsewhere. Both variables take `otlp` (the default),
//! `console`, `none` or a comma list (`console,otlp` does both); a value reins-otel lacks
//! (`zipkin`, a typo) is left out with a warning, as the specification asks, and OTLP is
//! used if nothing is left. Content is written only as it would be sent over OTLP: with
//! capture on, and as its redactor returned it.
//!
//! ```sh
//! OTEL_TRACES_EXPORTER=console OTEL_METRICS_EXPORTER=none \
//! OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true my-agent 2>trace.txt
//! ```
//!
//! ```text
//! span "chat gpt-4o" trace=61c50f…a6 span=796e…3d parent=ff53…7e kind=Client duration=503.4µs status=unset
//!   gen_ai.operation.name = "chat"
//!   gen_ai.provider.name = "openai"
//!   gen_ai.input.messages = "[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"My key is [REDACTED:api_key]\"}]}]"
//!   gen_ai.usage.input_tokens = 12
//! ```
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // In a test or a tool of your own: the spans in a file, content recorded with the
//! // secrets Redaction's default patterns find masked, as over OTLP.
//! let otel = reins_otel::Config::new()
//!     .capture_content(|_, text| {
//!         Some(reins::hooks::redaction::Redaction::new().redact(&text).into_owned())
//!     })
//!     .traces_exporter("console") // as OTEL_TRACES_EXPORTER=console would
//!     .metrics_exporter("none")
//!     .console_output(std::fs::File::create("trace.txt")?)
//!     .init()?;
//! // ... run agents ...
//! otel.shutdown()?;
//! # Ok(())
//! # }
//! ```
//!
//! For a subscriber of your own, build it with [`layers`] on a tracer provider whose
//! exporter writes the spans where you like.
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
mod compression;
mod config;
mod console;
mod delivery;
mod endpoint;
mod exporter_error;
mod filter;
mod layer;
mod metrics;
mod otlp;
mod selection;
#[cfg(test)]
mod test_env;
mod transport;
mod withheld;

pub use bounded::NotExported;
pub use bridge::OtelBridge;
pub use config::Config;
pub use layer::ReinsLayer;
pub use reins::observe::{ContentKind, DEFAULT_CONTENT_PART_LIMIT, Telemetry};
pub use withheld::without_endpoint_logs;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Subscriber;
use tracing_subscriber::Layer;
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
    /// How the spans' OTLP export is going; `None` when spans are not sent over OTLP.
    traces: Option<Arc<Delivery>>,
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

/// Sets up OTLP export (HTTP/protobuf) of traces and metrics with the defaults: see
/// [`Config::init`]. reins's spans are exported whatever `RUST_LOG` says of other targets
/// (`RUST_LOG=myapp=debug` keeps them); only a directive naming `reins` (`reins=off`)
/// changes that.
pub fn init() -> Result<Otel, InitError> {
    Config::new().init()
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
            traces: Some(Delivery::new(
                "traces",
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                Duration::from_secs(10),
            )),
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
}
