//! `OTEL_EXPORTER_OTLP_COMPRESSION=gzip` (or a signal's own `..._TRACES_COMPRESSION`) has the
//! exports sent gzipped, said by their `Content-Encoding`; a compression reins-otel cannot
//! send is ignored, as OpenTelemetry says of an unknown value, with a warning naming its
//! variable, and the exports go uncompressed.
//!
//! Each test sets export up in a child process, as [`super::collector_answers`] does.

use super::collector_answers::{CHILD, child, flush_each};
use crate::requests::{Received, read_request};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// A collector on loopback that takes every export (200, empty) and keeps each request.
fn recording_collector() -> (String, Arc<Mutex<Vec<Received>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let received = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let received = received.clone();
            std::thread::spawn(move || {
                while let Ok(request) = read_request(&stream) {
                    received.lock().unwrap().push(request);
                    let answer = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
                    if (&stream).write_all(answer).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (format!("http://127.0.0.1:{port}"), requests)
}

/// The names of the spans in an OTLP traces request's (protobuf) body.
fn span_names(body: &[u8]) -> Vec<String> {
    let request = <ExportTraceServiceRequest as prost::Message>::decode(body)
        .expect("the body is an OTLP traces request");
    request
        .resource_spans
        .iter()
        .flat_map(|resource| &resource.scope_spans)
        .flat_map(|scope| &scope.spans)
        .map(|span| span.name.clone())
        .collect()
}

/// `body` gunzipped.
fn gunzipped(body: &[u8]) -> Vec<u8> {
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(body)
        .read_to_end(&mut plain)
        .expect("the body is gzip");
    plain
}

const GZIP: &str = "compression::gzip_compression_sends_the_spans_gzipped";

#[test]
fn gzip_compression_sends_the_spans_gzipped() {
    if std::env::var(CHILD).is_ok() {
        return flush_each(&["invoke_agent"]);
    }
    for variable in [
        "OTEL_EXPORTER_OTLP_COMPRESSION",
        "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
    ] {
        let (endpoint, requests) = recording_collector();
        let output = child(GZIP, "gzip", &endpoint, &[(variable, "gzip")]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stdout.contains("flush 0: ok"),
            "{variable}: {stdout}\n{stderr}"
        );
        let requests = requests.lock().unwrap();
        assert_eq!(requests.len(), 1, "{variable}: {stdout}\n{stderr}");
        let request = &requests[0];
        assert_eq!(
            request.headers.get("content-encoding").map(String::as_str),
            Some("gzip"),
            "{variable}: {:?}",
            request.headers
        );
        assert_eq!(
            span_names(&gunzipped(&request.body)),
            ["invoke_agent"],
            "{variable}"
        );
    }
}

const UNSUPPORTED: &str =
    "compression::a_compression_that_cannot_be_sent_is_ignored_with_a_warning_naming_its_variable";

#[test]
fn a_compression_that_cannot_be_sent_is_ignored_with_a_warning_naming_its_variable() {
    if std::env::var(CHILD).is_ok() {
        return flush_each(&["invoke_agent"]);
    }
    for value in ["brotli", "zstd"] {
        let (endpoint, requests) = recording_collector();
        let env = [("OTEL_EXPORTER_OTLP_COMPRESSION", value)];
        let output = child(UNSUPPORTED, "unsupported", &endpoint, &env);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        // The spans still reach the collector, uncompressed.
        assert!(
            stdout.contains("flush 0: ok"),
            "{value}: {stdout}\n{stderr}"
        );
        let requests = requests.lock().unwrap();
        assert_eq!(requests.len(), 1, "{value}: {stdout}\n{stderr}");
        assert_eq!(requests[0].headers.get("content-encoding"), None, "{value}");
        assert_eq!(span_names(&requests[0].body), ["invoke_agent"], "{value}");
        let warnings: Vec<&str> = stderr
            .lines()
            .filter(|line| line.contains("WARN") && line.contains("reins_otel"))
            .collect();
        assert_eq!(warnings.len(), 1, "{value}: {stderr}");
        assert!(
            warnings[0].contains(
                "OTEL_EXPORTER_OTLP_COMPRESSION is ignored: reins-otel compresses exports \
                 with gzip, or not at all (none)"
            ),
            "{value}: {stderr}"
        );
        assert!(!warnings[0].contains(value), "{value}: {stderr}");
    }
}
