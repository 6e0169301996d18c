//! The console exporter (`OTEL_TRACES_EXPORTER=console`, `OTEL_METRICS_EXPORTER=console`): each
//! span and metric written as text, for a person to read without running a collector.
//!
//! OpenTelemetry's specification names it "Standard Output". reins-otel writes it to
//! **stderr** unless [`Config::console_output`](crate::Config::console_output) gives another
//! writer: a program that runs agents prints its answer on stdout (the `reins` command, a
//! script piped into another), and spans there would be mixed into what the next program
//! reads; stderr is where a terminal shows diagnostics, and `2>trace.txt` keeps them apart.
//! (The `opentelemetry-stdout` crate prints to stdout only, with `println!`, which panics in
//! the exporter's thread once stdout is a closed pipe: `| head -1`.)
//!
//! What is written is what the OTLP exporter would send: the spans' attributes as reins
//! recorded them, content only when capture is on and as its redactor returned it. Every
//! string is written escaped (quotes, backslashes, control characters and so terminal escape
//! sequences), so a model's answer or a tool's output cannot rewrite the terminal or pass
//! for another line. A write that fails (a closed pipe) fails that export, said once as a
//! `WARN` of target `reins_otel`; the run never waits on it: spans are written from the batch
//! processor's thread, metrics from the periodic reader's.

mod metrics;

pub(crate) use metrics::ConsoleMetrics;

use opentelemetry::trace::{SpanId, Status};
use opentelemetry::{Array, KeyValue, Value};
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use std::fmt::Write as _;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Where the console exporters write, shared by both signals so their lines never
/// interleave mid-line.
#[derive(Clone)]
pub(crate) struct ConsoleOutput {
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    /// Whether a failed write has been said (said once).
    failure_said: Arc<AtomicBool>,
}

impl std::fmt::Debug for ConsoleOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConsoleOutput")
    }
}

impl ConsoleOutput {
    /// Output to `writer`.
    pub(crate) fn new(writer: impl Write + Send + 'static) -> Self {
        ConsoleOutput {
            writer: Arc::new(Mutex::new(Box::new(writer))),
            failure_said: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Output to the process's stderr.
    pub(crate) fn stderr() -> Self {
        ConsoleOutput::new(std::io::stderr())
    }

    /// Writes `text` whole and flushes; a failure is an export error, said once.
    pub(crate) fn write(&self, text: &str) -> OTelSdkResult {
        let written = {
            let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
            writer
                .write_all(text.as_bytes())
                .and_then(|()| writer.flush())
        };
        written.map_err(|error| {
            if !self.failure_said.swap(true, Ordering::SeqCst) {
                tracing::warn!(
                    target: crate::delivery::TARGET,
                    "the console exporter could not write ({}); what it could not write is \
                     lost, and this is not said again",
                    error.kind()
                );
            }
            OTelSdkError::InternalFailure(format!("the console could not be written: {error}"))
        })
    }
}

/// Writes each batch of spans to a [`ConsoleOutput`].
#[derive(Debug)]
pub(crate) struct ConsoleSpans {
    output: ConsoleOutput,
}

impl ConsoleSpans {
    /// Spans written to `output`.
    pub(crate) fn new(output: ConsoleOutput) -> Self {
        ConsoleSpans { output }
    }
}

impl SpanExporter for ConsoleSpans {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let mut text = String::new();
        for span in &batch {
            write_span(&mut text, span);
        }
        self.output.write(&text)
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
}

/// One span as lines: a header (name, ids, duration, status), then an attribute a line, each
/// event and link under it.
fn write_span(out: &mut String, span: &SpanData) {
    let context = &span.span_context;
    let parent = if span.parent_span_id == SpanId::INVALID {
        "none".to_owned()
    } else {
        span.parent_span_id.to_string()
    };
    let took = span
        .end_time
        .duration_since(span.start_time)
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "span {} trace={} span={} parent={parent} kind={:?} duration={took:?} status={}",
        escaped(&span.name),
        context.trace_id(),
        context.span_id(),
        span.span_kind,
        status(&span.status),
    );
    write_attributes(out, "  ", &span.attributes);
    for event in span.events.iter() {
        let at = event
            .timestamp
            .duration_since(span.start_time)
            .unwrap_or_default();
        let _ = writeln!(out, "  event {} at +{at:?}", escaped(&event.name));
        write_attributes(out, "    ", &event.attributes);
    }
    for link in span.links.iter() {
        let linked = &link.span_context;
        let _ = writeln!(
            out,
            "  link trace={} span={}",
            linked.trace_id(),
            linked.span_id()
        );
        write_attributes(out, "    ", &link.attributes);
    }
}

/// `Unset`, `Ok`, or `Error` with its description escaped.
fn status(status: &Status) -> String {
    match status {
        Status::Unset => "unset".to_owned(),
        Status::Ok => "ok".to_owned(),
        Status::Error { description } => format!("error {}", escaped(description)),
    }
}

/// `key = value` lines, indented by `indent`.
pub(crate) fn write_attributes(out: &mut String, indent: &str, attributes: &[KeyValue]) {
    for attribute in attributes {
        let _ = writeln!(
            out,
            "{indent}{} = {}",
            attribute.key.as_str().escape_debug(),
            value(&attribute.value)
        );
    }
}

/// An attribute's value: a string quoted and escaped, a number or boolean as it is, an array
/// of them in brackets.
fn value(value: &Value) -> String {
    match value {
        Value::String(text) => escaped(text.as_str()),
        Value::Array(Array::String(texts)) => {
            let items: Vec<String> = texts.iter().map(|text| escaped(text.as_str())).collect();
            format!("[{}]", items.join(", "))
        }
        // Numbers and booleans (and their arrays) print nothing to escape; a kind of value
        // added later is escaped all the same.
        other => other.to_string().escape_debug().to_string(),
    }
}

/// `text` in double quotes, escaped as Rust's `Debug` escapes a string (double quotes,
/// backslashes, control characters): one line, whatever it holds.
pub(crate) fn escaped(text: &str) -> String {
    format!("{text:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer the test reads back.
    #[derive(Clone, Default)]
    pub(crate) struct Captured(pub(crate) Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A pipe whose reader is gone.
    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_value_is_written_on_one_line_whatever_it_holds() {
        let hostile = "answer\n\u{1b}[2J\u{1b}]0;owned\u{7}\u{9b}31m\u{202e}span fake \"quoted\"";
        let mut out = String::new();
        write_attributes(
            &mut out,
            "  ",
            &[
                KeyValue::new("output.value", hostile),
                KeyValue::new("gen_ai.usage.input_tokens", 12_i64),
            ],
        );
        assert_eq!(out.lines().count(), 2, "{out}");
        for raw in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
            assert!(!out.contains(raw), "{raw:?} written raw: {out}");
        }
        assert!(out.contains("  gen_ai.usage.input_tokens = 12\n"), "{out}");
    }

    #[test]
    fn a_closed_output_fails_the_export_without_a_panic() {
        let output = ConsoleOutput::new(Closed);
        assert!(output.write("span chat\n").is_err());
        assert!(output.write("span chat\n").is_err());
        let captured = Captured::default();
        ConsoleOutput::new(captured.clone()).write("x\n").unwrap();
        assert_eq!(captured.0.lock().unwrap().as_slice(), b"x\n");
    }
}
