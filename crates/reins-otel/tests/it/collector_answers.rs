//! What a collector answers decides what is said, and does not hold later batches: a
//! collector that takes only part of each batch (an OTLP `partial_success`) is reported once
//! a streak, its message escaped and cut; one that trickles its answer (its headers, then a
//! byte every tenth of a second, forever) fails that export at the OTLP timeout, and the next
//! batch reaches it once it answers again; one that redirects the export elsewhere is not
//! followed there.
//!
//! Each test runs its half that sets export up ([`reins_otel::Config::init_with`] installs
//! a global subscriber) in a process of its own: this test binary, run again for that test.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Set in the process a test starts; names what it does there.
pub(crate) const CHILD: &str = "REINS_OTEL_TEST_COLLECTOR_ANSWERS_CHILD";

/// How the stand-in collector answers one request.
#[derive(Clone, Copy)]
enum Answer {
    /// 200, empty: everything taken.
    Accept,
    /// 200, with a `partial_success` rejecting one span for [`REJECTION`].
    Reject,
    /// 200 and a long body's headers, then a byte every 100 ms until the client hangs up.
    Trickle,
    /// 307 to another path of the same collector.
    RedirectHere,
    /// 307 to the same path on loopback's given port: another collector.
    RedirectTo(u16),
}

/// The collector's reason for rejecting a span: a line break and a terminal escape that would
/// forge a log line and clear the screen, and 5000 bytes after them.
fn rejection_message() -> String {
    format!(
        "span too old\nWARN reins_otel: forged\u{1b}[2J{}",
        "x".repeat(5000)
    )
}

/// An OTLP `ExportTraceServiceResponse` rejecting 1 span for `message`, protobuf-encoded
/// (field 1, `partial_success`: field 1 `rejected_spans`, field 2 `error_message`).
fn partial_success(message: &str) -> Vec<u8> {
    fn varint(mut value: usize, out: &mut Vec<u8>) {
        while value >= 0x80 {
            out.push((value as u8) | 0x80);
            value >>= 7;
        }
        out.push(value as u8);
    }
    let mut inner = vec![0x08, 0x01, 0x12];
    varint(message.len(), &mut inner);
    inner.extend_from_slice(message.as_bytes());
    let mut outer = vec![0x0a];
    varint(inner.len(), &mut outer);
    outer.extend_from_slice(&inner);
    outer
}

/// A collector on loopback answering its `n`th request (whatever the connection) as
/// `script[n]` says, and [`Answer::Accept`] past its end. Keeps each request's body.
fn collector(script: Vec<Answer>) -> (String, Arc<Mutex<Vec<Vec<u8>>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let received = bodies.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let received = received.clone();
            let script = script.clone();
            std::thread::spawn(move || {
                while let Ok(body) = request_body(&stream) {
                    let answer = {
                        let mut received = received.lock().unwrap();
                        received.push(body);
                        script
                            .get(received.len() - 1)
                            .copied()
                            .unwrap_or(Answer::Accept)
                    };
                    if answer_with(&stream, answer).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (format!("http://127.0.0.1:{port}"), bodies)
}

/// Reads one request from `stream`: its body.
pub(crate) fn request_body(stream: &TcpStream) -> std::io::Result<Vec<u8>> {
    crate::requests::read_request(stream).map(|request| request.body)
}

fn answer_with(mut stream: &TcpStream, answer: Answer) -> std::io::Result<()> {
    match answer {
        Answer::Accept => stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
        Answer::Reject => {
            let body = partial_success(&rejection_message());
            write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n\
                 Content-Length: {}\r\n\r\n",
                body.len()
            )?;
            stream.write_all(&body)
        }
        Answer::RedirectHere => stream.write_all(
            b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /v1/traces/moved\r\n\
              Content-Length: 0\r\n\r\n",
        ),
        Answer::RedirectTo(port) => write!(
            stream,
            "HTTP/1.1 307 Temporary Redirect\r\n\
             Location: http://127.0.0.1:{port}/v1/traces\r\nContent-Length: 0\r\n\r\n"
        ),
        Answer::Trickle => {
            stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n\
                  Content-Length: 1000000\r\n\r\n",
            )?;
            loop {
                std::thread::sleep(Duration::from_millis(100));
                stream.write_all(b"\0")?;
            }
        }
    }
}

/// This test binary, run for `test` alone as [`CHILD`] `role`, exporting to `endpoint`
/// with `env`. It is killed if it has not exited after 120 s.
pub(crate) fn child(test: &str, role: &str, endpoint: &str, env: &[(&str, &str)]) -> Output {
    let mut running = child_command(test, role, endpoint, env)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the test binary starts");
    let started = std::time::Instant::now();
    while running.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            let _ = running.kill();
            panic!("the child has not exited after 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    running.wait_with_output().unwrap()
}

/// The command that runs this test binary for `test` alone as [`CHILD`] `role`, exporting
/// to `endpoint` with `env` (OpenTelemetry's variables that would change the export
/// removed), for a test that drives the child itself.
pub(crate) fn child_command(
    test: &str,
    role: &str,
    endpoint: &str,
    env: &[(&str, &str)],
) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD, role)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        .env("OTEL_METRICS_EXPORTER", "none")
        .env_remove("OTEL_EXPORTER_OTLP_TIMEOUT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
        .env_remove("RUST_LOG")
        .env_remove("OTEL_EXPORTER_OTLP_COMPRESSION")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION")
        .envs(env.iter().copied());
    command
}

/// In a child: export set up with a `fmt` layer on stderr showing `INFO` and up (OpenTelemetry's
/// own events among them); a span named after each of `spans` recorded and flushed, each
/// flush's outcome printed as `flush N: ...`.
pub(crate) fn flush_each(spans: &[&str]) {
    use tracing_subscriber::Layer;
    let stderr = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .with_filter(tracing_subscriber::filter::LevelFilter::INFO);
    let otel = reins_otel::Config::new()
        .init_with(stderr)
        .expect("export is set up");
    for (n, name) in spans.iter().enumerate() {
        match *name {
            "before_recovery" => tracing::info_span!(target: "reins", "before_recovery"),
            "after_recovery" => tracing::info_span!(target: "reins", "after_recovery"),
            _ => tracing::info_span!(target: "reins", "invoke_agent"),
        }
        .in_scope(|| {});
        match otel.flush() {
            Ok(()) => println!("flush {n}: ok"),
            Err(error) => println!("flush {n}: {error}"),
        }
    }
    let _ = otel.shutdown();
}

const PARTLY: &str =
    "collector_answers::a_collector_rejecting_part_of_each_batch_is_reported_once_a_streak";

#[test]
fn a_collector_rejecting_part_of_each_batch_is_reported_once_a_streak() {
    if std::env::var(CHILD).as_deref() == Ok("partly") {
        return flush_each(&["invoke_agent"; 5]);
    }
    use Answer::{Accept, Reject};
    let (endpoint, bodies) = collector(vec![Reject, Reject, Reject, Accept, Reject]);
    let output = child(PARTLY, "partly", &endpoint, &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(bodies.lock().unwrap().len(), 5, "{stdout}\n{stderr}");
    let reports: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("rejected"))
        .collect();
    assert_eq!(
        reports.len(),
        2,
        "once for the first three batches, once for the last: {stderr}"
    );
    for report in &reports {
        assert!(
            report.contains(
                "traces are partly rejected by the collector at OTEL_EXPORTER_OTLP_ENDPOINT \
                 (1 span rejected: \"span too old\\nWARN reins_otel: forged\\u{1b}[2Jxxx"
            ),
            "{report}"
        );
        assert!(report.len() < 1000, "the message is cut: {report}");
    }
    assert!(!stderr.contains('\u{1b}'), "escaped: {stderr:?}");
    assert!(
        !stderr
            .lines()
            .any(|line| line.starts_with("WARN reins_otel: forged")),
        "no forged line: {stderr}"
    );
    assert!(!stderr.contains(&endpoint), "{stderr}");
    // The rejected span is counted as not exported; a wholly accepted batch loses none.
    assert!(
        stdout.contains(
            "flush 0: 1 span was not exported to the collector at OTEL_EXPORTER_OTLP_ENDPOINT \
             (1 span rejected: \"span too old\\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("flush 3: ok"), "{stdout}");
}

const TRICKLED: &str =
    "collector_answers::an_answer_that_trickles_fails_its_export_and_the_next_batch_is_delivered";

#[test]
fn an_answer_that_trickles_fails_its_export_and_the_next_batch_is_delivered() {
    if std::env::var(CHILD).as_deref() == Ok("trickled") {
        return flush_each(&["before_recovery", "after_recovery"]);
    }
    let (endpoint, bodies) = collector(vec![Answer::Trickle]);
    // A second for each export, the answer included; each read of it is quicker than that.
    let output = child(
        TRICKLED,
        "trickled",
        &endpoint,
        &[("OTEL_EXPORTER_OTLP_TIMEOUT", "1000")],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stdout.contains(
            "flush 0: 1 span was not exported to the collector at OTEL_EXPORTER_OTLP_ENDPOINT \
             (no complete answer within 1s)"
        ),
        "{stdout}\n{stderr}"
    );
    assert!(stdout.contains("flush 1: ok"), "{stdout}\n{stderr}");
    let bodies = bodies.lock().unwrap();
    let delivered = |name: &str| {
        bodies.iter().any(|body| {
            body.windows(name.len())
                .any(|window| window == name.as_bytes())
        })
    };
    assert!(delivered("after_recovery"), "{stdout}\n{stderr}");
}

const REDIRECTED: &str =
    "collector_answers::a_redirect_is_followed_within_the_collector_and_not_to_another_one";

#[test]
fn a_redirect_is_followed_within_the_collector_and_not_to_another_one() {
    if std::env::var(CHILD).as_deref() == Ok("redirected") {
        return flush_each(&["invoke_agent", "invoke_agent"]);
    }
    let (elsewhere, taken_elsewhere) = collector(vec![]);
    let elsewhere_port = elsewhere.rsplit(':').next().unwrap().parse().unwrap();
    use Answer::{Accept, RedirectHere, RedirectTo};
    let (endpoint, bodies) = collector(vec![RedirectHere, Accept, RedirectTo(elsewhere_port)]);
    let output = child(
        REDIRECTED,
        "redirected",
        &endpoint,
        &[("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=hunter2")],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The first batch, moved within the collector, is delivered.
    assert_eq!(bodies.lock().unwrap().len(), 3, "{stdout}\n{stderr}");
    assert!(stdout.contains("flush 0: ok"), "{stdout}\n{stderr}");
    // The second, sent elsewhere, is not: neither its spans nor the key reach that host.
    assert!(
        taken_elsewhere.lock().unwrap().is_empty(),
        "the export followed a redirect to another host: {stdout}\n{stderr}"
    );
    assert!(
        stdout.contains(
            "flush 1: 1 span was not exported to the collector at OTEL_EXPORTER_OTLP_ENDPOINT \
             (HTTP export failed with status code: 307)"
        ),
        "{stdout}\n{stderr}"
    );
    assert!(!stdout.contains("hunter2") && !stderr.contains("hunter2"));
}

const IN_RUNTIME: &str =
    "collector_answers::export_set_up_and_flushed_inside_a_tokio_runtime_delivers_its_spans";

#[test]
fn export_set_up_and_flushed_inside_a_tokio_runtime_delivers_its_spans() {
    if std::env::var(CHILD).as_deref() == Ok("in_runtime") {
        // As a `#[tokio::main]` program would: set up, flushed and dropped on a worker.
        let runtime = tokio::runtime::Runtime::new().unwrap();
        return runtime.block_on(async { flush_each(&["invoke_agent"]) });
    }
    let (endpoint, bodies) = collector(vec![]);
    let output = child(IN_RUNTIME, "in_runtime", &endpoint, &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("flush 0: ok"), "{stdout}\n{stderr}");
    assert_eq!(bodies.lock().unwrap().len(), 1, "{stdout}\n{stderr}");
}
