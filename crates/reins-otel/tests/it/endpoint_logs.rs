//! An export that fails (no collector listening, a collector refusing the key, TLS spoken to
//! a plain server) is logged without the endpoint's credentials or the headers' values:
//! OpenTelemetry's own debug logs quote the request's URL whole and the collector's answer,
//! which may echo a header.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const PASSWORD: &str = "hunter2-pw-9c1e";
const HEADER_KEY: &str = "hdr-key-5d7f0b";

/// A collector on loopback that answers every request 401, its body echoing the request's
/// head (the `authorization` header with it), as a careless server's error page does.
/// Counts the requests that reached it.
fn refusing_collector() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&requests);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            counted.fetch_add(1, Ordering::SeqCst);
            let _ = answer_401(stream);
        }
    });
    (port, requests)
}

fn answer_401(mut stream: TcpStream) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut head = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let answer = format!("unauthorized: {head}");
    write!(
        stream,
        "HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
        answer.len()
    )
}

/// A loopback port nothing listens on.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The demo's stderr when it exports to `endpoint` with a key in the headers, every log on.
fn demo_stderr(endpoint: &str, case: &str) -> String {
    let dir = std::env::temp_dir().join(format!(
        "reins-otel-endpoint-logs-{case}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_reins-otel-demo"))
        .args(["start", &dir.join("runs.sqlite").to_string_lossy(), "r1"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            format!("authorization=Bearer {HEADER_KEY}"),
        )
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "5000")
        .env("OTEL_METRICS_EXPORTER", "none")
        .env("RUST_LOG", "trace")
        .output()
        .expect("the demo runs");
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn assert_failure_logged_without_secrets(stderr: &str, case: &str) {
    // Said once, by reins-otel (OpenTelemetry's own event of each failed batch is withheld):
    // while the demo runs, or by the shutdown it prints the error of.
    assert!(
        stderr.contains("not reaching the collector at OTEL_EXPORTER_OTLP_ENDPOINT")
            || stderr.contains("not exported to the collector at OTEL_EXPORTER_OTLP_ENDPOINT"),
        "{case}: the failed export is said: {stderr}"
    );
    assert!(
        !stderr.contains("BatchSpanProcessor.ExportError"),
        "{case}: once: {stderr}"
    );
    for secret in [PASSWORD, HEADER_KEY] {
        assert!(
            !stderr.contains(secret),
            "{case}: {secret} logged: {stderr}"
        );
    }
}

#[test]
fn a_failed_export_is_logged_without_the_endpoints_credentials_or_headers() {
    let closed = closed_port();
    let stderr = demo_stderr(
        &format!("http://phoenix:{PASSWORD}@127.0.0.1:{closed}"),
        "closed",
    );
    assert_failure_logged_without_secrets(&stderr, "no collector listening");

    let (port, requests) = refusing_collector();
    let stderr = demo_stderr(
        &format!("http://phoenix:{PASSWORD}@127.0.0.1:{port}"),
        "401",
    );
    assert!(
        requests.load(Ordering::SeqCst) > 0,
        "the collector was asked"
    );
    assert_failure_logged_without_secrets(&stderr, "a collector answering 401");

    let stderr = demo_stderr(
        &format!("https://phoenix:{PASSWORD}@127.0.0.1:{port}"),
        "tls",
    );
    assert_failure_logged_without_secrets(&stderr, "TLS to a plain server");
}

/// A `MakeWriter` appending what a `fmt` layer writes to a shared buffer.
#[derive(Clone, Default)]
struct Written(Arc<std::sync::Mutex<Vec<u8>>>);

impl Write for Written {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut written = self.0.lock().unwrap_or_else(|e| e.into_inner());
        written.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What a `fmt` layer of the user's at `TRACE` (given `without_endpoint_logs` if `filtered`)
/// writes when a span of reins's is exported, through [`reins_otel::layers`] in a subscriber
/// of the user's, to an endpoint with a password where no collector listens.
fn own_layers_log(filtered: bool) -> String {
    use opentelemetry_otlp::WithExportConfig;
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;

    let endpoint = format!(
        "http://phoenix:{PASSWORD}@127.0.0.1:{}/v1/traces",
        closed_port()
    );
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(endpoint)
        .build()
        .unwrap();
    // Exports as each span ends, on the thread that ends it: the subscriber below sees what
    // the exporter logs.
    let tracer_provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_simple_exporter(exporter)
        .build();
    let meter_provider = opentelemetry_sdk::metrics::SdkMeterProvider::default();
    let written = Written::default();
    let writer = written.clone();
    let own = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .with_filter(tracing_subscriber::filter::LevelFilter::TRACE);
    let own = if filtered {
        own.with_filter(reins_otel::without_endpoint_logs()).boxed()
    } else {
        own.boxed()
    };
    let subscriber = tracing_subscriber::registry()
        .with(own)
        .with(reins_otel::layers(
            &tracer_provider,
            &meter_provider,
            reins_otel::Telemetry::new(),
        ));
    tracing::subscriber::with_default(subscriber, || {
        tracing::info_span!(target: "reins", "invoke_agent").in_scope(|| {});
    });
    let _ = tracer_provider.shutdown();
    let written = written.0.lock().unwrap_or_else(|e| e.into_inner());
    String::from_utf8_lossy(&written).into_owned()
}

#[test]
fn a_layer_of_ones_own_beside_layers_is_kept_from_the_endpoints_credentials() {
    let unfiltered = own_layers_log(false);
    assert!(
        unfiltered.contains(PASSWORD),
        "OpenTelemetry logs the URL whole, so this tests something: {unfiltered}"
    );
    let filtered = own_layers_log(true);
    assert!(!filtered.contains(PASSWORD), "{filtered}");
    assert!(
        filtered.contains("HTTP export failed"),
        "the failure itself is still logged: {filtered}"
    );
}
