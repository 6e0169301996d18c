//! The metrics' console exporter: each metric a line, each data point under it with its
//! attributes and value (a histogram's count, sum, min and max).

use super::{ConsoleOutput, escaped};
use opentelemetry::KeyValue;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::Temporality;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, Metric, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use std::fmt::{Display, Write as _};
use std::time::Duration;

/// Writes each collection of metrics to a [`ConsoleOutput`], cumulative (each shows the
/// totals so far, the last the run's).
#[derive(Debug)]
pub(crate) struct ConsoleMetrics {
    output: ConsoleOutput,
}

impl ConsoleMetrics {
    /// Metrics written to `output`.
    pub(crate) fn new(output: ConsoleOutput) -> Self {
        ConsoleMetrics { output }
    }
}

impl PushMetricExporter for ConsoleMetrics {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let mut text = String::new();
        for scope in metrics.scope_metrics() {
            for metric in scope.metrics() {
                write_metric(&mut text, metric);
            }
        }
        if text.is_empty() {
            return Ok(());
        }
        self.output.write(&text)
    }

    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }

    fn temporality(&self) -> Temporality {
        Temporality::Cumulative
    }
}

/// One metric: its name, unit and kind, then a line per data point.
fn write_metric(out: &mut String, metric: &Metric) {
    let _ = write!(out, "metric {}", escaped(metric.name()));
    if !metric.unit().is_empty() {
        let _ = write!(out, " unit={}", escaped(metric.unit()));
    }
    match metric.data() {
        AggregatedMetrics::F64(data) => write_data(out, data),
        AggregatedMetrics::U64(data) => write_data(out, data),
        AggregatedMetrics::I64(data) => write_data(out, data),
    }
}

/// The kind of `data` ending the metric's line, then its data points.
fn write_data<T: Display + Copy>(out: &mut String, data: &MetricData<T>) {
    match data {
        MetricData::Gauge(gauge) => {
            let _ = writeln!(out, " gauge");
            for point in gauge.data_points() {
                point_line(out, point.attributes(), &point.value().to_string());
            }
        }
        MetricData::Sum(sum) => {
            let _ = writeln!(out, " sum");
            for point in sum.data_points() {
                point_line(out, point.attributes(), &point.value().to_string());
            }
        }
        MetricData::Histogram(histogram) => {
            let _ = writeln!(out, " histogram");
            for point in histogram.data_points() {
                let mut summary = format!("count={} sum={}", point.count(), point.sum());
                if let (Some(min), Some(max)) = (point.min(), point.max()) {
                    let _ = write!(summary, " min={min} max={max}");
                }
                point_line(out, point.attributes(), &summary);
            }
        }
        MetricData::ExponentialHistogram(histogram) => {
            let _ = writeln!(out, " exponential histogram");
            for point in histogram.data_points() {
                let summary = format!("count={} sum={}", point.count(), point.sum());
                point_line(out, point.attributes(), &summary);
            }
        }
    }
}

/// `  {attr=value, ...}: what` for one data point.
fn point_line<'a>(out: &mut String, attributes: impl Iterator<Item = &'a KeyValue>, what: &str) {
    let attributes: Vec<String> = attributes
        .map(|kv| {
            let shown = match &kv.value {
                opentelemetry::Value::String(text) => escaped(text.as_str()),
                other => other.to_string().escape_debug().to_string(),
            };
            format!("{}={shown}", kv.key.as_str().escape_debug())
        })
        .collect();
    let _ = writeln!(out, "  {{{}}}: {what}", attributes.join(", "));
}
