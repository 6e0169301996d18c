//! The OTLP exporters [`Config::init`](crate::Config::init) builds, one per signal, each
//! sending through its own [`transport`] and watched by its [`Delivery`].

use crate::delivery::{self, Delivery};
use crate::{InitError, compression, endpoint, exporter_error, transport};
use opentelemetry_otlp::{
    MetricExporter, OTEL_EXPORTER_OTLP_METRICS_COMPRESSION, OTEL_EXPORTER_OTLP_METRICS_TIMEOUT,
    OTEL_EXPORTER_OTLP_TRACES_COMPRESSION, OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, SpanExporter,
};
use opentelemetry_sdk::trace::BatchSpanProcessor;
use std::sync::Arc;

/// The spans' OTLP exporter, in a batch processor whose spans are counted as they end, and
/// the delivery that watches it; a compression variable it ignored is added to `ignored`.
pub(crate) fn spans(
    ignored: &mut Vec<&'static str>,
) -> Result<(delivery::Counted<BatchSpanProcessor>, Arc<Delivery>), InitError> {
    let delivery = signal_delivery(
        "traces",
        endpoint::TRACES,
        OTEL_EXPORTER_OTLP_TRACES_TIMEOUT,
    );
    let compression = compression::chosen(OTEL_EXPORTER_OTLP_TRACES_COMPRESSION, env_var);
    ignored.extend(compression.ignored);
    let exporter = exporter(
        SpanExporter::builder().with_http(),
        endpoint::TRACES,
        compression.compression,
        &delivery,
        transport::spans_rejected,
        |builder| builder.build(),
    )?;
    // Spans are counted as they end and as the collector takes them, on one processor: the
    // console's, when there is one, is given a copy of each span and counts none.
    let batch = BatchSpanProcessor::builder(delivery::Watched {
        inner: exporter,
        delivery: delivery.clone(),
    })
    .build();
    let counted = delivery::Counted {
        inner: batch,
        delivery: delivery.clone(),
    };
    Ok((counted, delivery))
}

/// The metrics' OTLP exporter, watched by the delivery returned with it; a compression
/// variable it ignored is added to `ignored`.
pub(crate) fn metrics(
    ignored: &mut Vec<&'static str>,
) -> Result<(delivery::Watched<MetricExporter>, Arc<Delivery>), InitError> {
    let delivery = signal_delivery(
        "metrics",
        endpoint::METRICS,
        OTEL_EXPORTER_OTLP_METRICS_TIMEOUT,
    );
    let compression = compression::chosen(OTEL_EXPORTER_OTLP_METRICS_COMPRESSION, env_var);
    ignored.extend(compression.ignored);
    let exporter = exporter(
        MetricExporter::builder().with_http(),
        endpoint::METRICS,
        compression.compression,
        &delivery,
        transport::data_points_rejected,
        |builder| builder.build(),
    )?;
    let watched = delivery::Watched {
        inner: exporter,
        delivery: delivery.clone(),
    };
    Ok((watched, delivery))
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
fn signal_delivery(
    name: &'static str,
    signal: endpoint::Signal,
    timeout_variable: &str,
) -> Arc<Delivery> {
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
pub(crate) fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}
