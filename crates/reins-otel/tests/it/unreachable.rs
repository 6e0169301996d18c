//! A collector that never answers holds neither [`reins_otel::Otel::flush`] nor
//! [`reins_otel::Otel::shutdown`]: each returns, saying what was not exported and naming the
//! endpoint by its variable, never its URL. Here the exporter is told to wait ten
//! minutes for an answer (`OTEL_EXPORTER_OTLP_TIMEOUT`); a test fails if its process has not
//! exited after two. And a collector that serves no metrics (405, a traces-only backend) is
//! said to be told so with `OTEL_METRICS_EXPORTER=none`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PASSWORD: &str = "hunter2-pw-6b0f";

/// Set in the process a flushing test starts ([`flushed_in_child`]), which sets export up,
/// records a span and a metric, and flushes.
const CHILD: &str = "REINS_OTEL_TEST_FLUSH_CHILD";

/// A loopback listener that never accepts: the kernel completes each connection, and the
/// request sent on it is never read nor answered. The endpoint names it with a password.
fn black_hole() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (
        listener,
        format!("http://phoenix:{PASSWORD}@127.0.0.1:{port}"),
    )
}

/// A collector on loopback answering 200 to every request.
fn collector() -> String {
    collector_answering("200 OK")
}

/// A collector on loopback answering every request with `status` (`"405 Method Not
/// Allowed"`), and no body.
fn collector_answering(status: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || while answer(&stream, status).is_ok() {});
        }
    });
    format!("http://127.0.0.1:{port}")
}

/// Reads one request from `stream` and answers it `status`.
fn answer(mut stream: &TcpStream, status: &str) -> std::io::Result<()> {
    super::collector_answers::request_body(stream)?;
    write!(stream, "HTTP/1.1 {status}\r\nContent-Length: 0\r\n\r\n")
}

/// `child`'s exit status and output, or a panic if it has not exited after 120 s.
fn finished(mut child: Child) -> (bool, String, String) {
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still waiting for the collector after 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status.success(), stdout, stderr)
}

#[test]
fn shutdown_returns_when_the_collector_never_answers() {
    let (_listening, endpoint) = black_hole();
    let dir = std::env::temp_dir().join(format!("reins-otel-black-hole-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_reins-otel-demo"))
        .args(["start", &dir.join("runs.sqlite").to_string_lossy(), "r1"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "600000")
        .env("OTEL_METRICS_EXPORTER", "none")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the demo starts");
    let (success, _, stderr) = finished(child);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!success, "the spans were not exported: {stderr}");
    assert!(
        stderr.contains("spans were not exported to the collector at OTEL_EXPORTER_OTLP_ENDPOINT"),
        "{stderr}"
    );
    assert!(!stderr.contains(PASSWORD), "{stderr}");
}

/// Traces reach their collector; metrics go to one that never answers. (Before, a flush
/// waited for the metrics' export however long the exporter was told to wait.)
#[test]
fn a_flush_returns_when_the_metrics_collector_never_answers() {
    if std::env::var_os(CHILD).is_some() {
        return flush_into_the_black_hole();
    }
    let (_listening, metrics_endpoint) = black_hole();
    let (success, stdout, stderr) = flushed_in_child(
        "unreachable::a_flush_returns_when_the_metrics_collector_never_answers",
        &metrics_endpoint,
        Some("600000"),
    );
    assert!(success, "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "flushed: the metrics were not exported to the collector at \
             OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
        ),
        "{stdout}\n{stderr}"
    );
    assert!(!stdout.contains(PASSWORD) && !stderr.contains(PASSWORD));
}

/// Phoenix and Jaeger take traces only: their `/v1/metrics` answers 405 (or 404). What is
/// said of the metrics not exported tells how to stop sending them.
#[test]
fn a_collector_serving_no_metrics_is_answered_with_how_to_stop_sending_them() {
    if std::env::var_os(CHILD).is_some() {
        return flush_into_the_black_hole();
    }
    let (success, stdout, stderr) = flushed_in_child(
        "unreachable::a_collector_serving_no_metrics_is_answered_with_how_to_stop_sending_them",
        &collector_answering("405 Method Not Allowed"),
        None,
    );
    assert!(success, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("the metrics were not exported")
            && stdout.contains(
                "a collector that takes traces only is told so with OTEL_METRICS_EXPORTER=none"
            ),
        "{stdout}\n{stderr}"
    );
}

/// Runs `test` again in a child process (where [`CHILD`] is set: it flushes), its traces
/// sent to a collector answering 200, its metrics to `metrics_endpoint`, the exporter told to
/// wait `timeout` milliseconds when given; the child's exit status and output.
fn flushed_in_child(
    test: &str,
    metrics_endpoint: &str,
    timeout: Option<&str>,
) -> (bool, String, String) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", collector())
        .env(
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
            format!("{metrics_endpoint}/v1/metrics"),
        )
        .env_remove("OTEL_METRICS_EXPORTER")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(timeout) = timeout {
        command.env("OTEL_EXPORTER_OTLP_TIMEOUT", timeout);
    }
    finished(command.spawn().expect("the test binary starts"))
}

/// In the child: export set up from its environment, a span and a metric recorded, flushed.
fn flush_into_the_black_hole() {
    use opentelemetry::metrics::MeterProvider as _;
    let otel = reins_otel::init().expect("export is set up");
    let counter = otel
        .meter_provider()
        .meter("test")
        .u64_counter("runs")
        .build();
    counter.add(1, &[]);
    tracing::info_span!(target: "reins", "invoke_agent").in_scope(|| {});
    match otel.flush() {
        Ok(()) => println!("flushed: everything exported"),
        Err(error) => println!("flushed: {error}"),
    }
}
