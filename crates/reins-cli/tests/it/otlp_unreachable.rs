//! A collector that is down, never answers, or answers with an error (a huge body with it)
//! costs a `reins run` its trace and nothing else: the run answers, the command exits, and
//! stderr says once how many spans were not exported, naming the endpoint by its variable
//! (never its URL, which holds a password here, nor a header's key).

use crate::common::AgentDir;
use crate::common::fakellm::FakeLlm;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

const PASSWORD: &str = "hunter2-pw-41c7";
const HEADER_KEY: &str = "hdr-key-8e2a9d";

const RULES: &str = r#"
version: 1
rules:
  - name: answer
    when:
      messages_contain: "Hello"
    respond:
      content: "Hi there."
"#;

/// What one `reins run` printed, and its exit code.
struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `reins run` of an agent answering through fakellm, exporting to `http://phoenix:PASSWORD@
/// 127.0.0.1:PORT` with a key in a header, and `env`. The process is killed if it has not
/// exited after 120 s (a hang, whose exit code is then -1); no test here needs a tenth of that.
fn run_exporting_to(port: u16, env: &[(&str, &str)]) -> Ran {
    let llm = FakeLlm::start(RULES);
    let agent = AgentDir::new(&format!(
        "[model]\nprovider = \"openai\"\nname = \"gpt-5-mini\"\nbase_url = \"{}\"\n\
         api_key_env = \"REINS_TEST_KEY\"\n",
        llm.openai_url()
    ));
    let mut command = agent.keyed(&["run", "AGENT", "Hello."]);
    command
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://phoenix:{PASSWORD}@127.0.0.1:{port}"),
        )
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            format!("x-api-key={HEADER_KEY}"),
        )
        .envs(env.iter().copied())
        .timeout(Duration::from_secs(120));
    let output = command.output().expect("run reins");
    Ran {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The run answered and exited 0, and its stderr says once, at the exit, how many of its
/// spans were not exported to the collector `OTEL_EXPORTER_OTLP_ENDPOINT` names, with no
/// credential; at most one more line, had an export failed while it ran, said so then.
/// Nothing else about the export: none of OpenTelemetry's own lines.
fn assert_answered_and_reported_once(ran: &Ran, case: &str) {
    let stderr = &ran.stderr;
    assert_eq!(ran.code, 0, "{case}: the command exits, and 0: {stderr}");
    assert_eq!(ran.stdout.trim(), "Hi there.", "{case}: {stderr}");
    let about_export: Vec<&str> = stderr
        .lines()
        .filter(|line| {
            ["export", "collector", "opentelemetry", "OTEL"]
                .iter()
                .any(|word| line.contains(word))
        })
        .collect();
    let tally: Vec<&&str> = about_export
        .iter()
        .filter(|line| line.contains("not exported"))
        .collect();
    assert_eq!(tally.len(), 1, "{case}: one line at the exit: {stderr}");
    assert!(
        tally[0].starts_with("reins: warning: ") && tally[0].contains(" span"),
        "{case}: it says how many spans: {stderr}"
    );
    let live = about_export
        .iter()
        .filter(|line| line.contains("not reaching the collector"))
        .count();
    assert!(
        live <= 1,
        "{case}: a failure while running is said once: {stderr}"
    );
    assert_eq!(
        about_export.len(),
        1 + live,
        "{case}: nothing else: {stderr}"
    );
    for line in &about_export {
        assert!(
            line.contains("OTEL_EXPORTER_OTLP_ENDPOINT"),
            "{case}: the endpoint is named by its variable: {stderr}"
        );
    }
    for secret in [PASSWORD, HEADER_KEY, "127.0.0.1"] {
        assert!(!stderr.contains(secret), "{case}: {secret} shown: {stderr}");
    }
}

/// A loopback port nothing listens on: connecting is refused.
fn refusing_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.local_addr().expect("its address").port()
}

#[test]
fn a_collector_that_is_down_costs_the_trace_said_once() {
    let ran = run_exporting_to(refusing_port(), &[]);
    assert_answered_and_reported_once(&ran, "connection refused");
}

#[test]
fn a_failing_collector_is_reported_once_not_for_each_batch() {
    // One span a batch: each of the run's spans is exported, and fails, on its own.
    let ran = run_exporting_to(refusing_port(), &[("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "1")]);
    assert_answered_and_reported_once(&ran, "a batch per span");
}

#[test]
fn a_collector_that_never_answers_does_not_hold_the_exit() {
    // Accepts connections (the kernel completes them) and never reads or answers.
    let black_hole = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = black_hole.local_addr().expect("its address").port();
    let ran = run_exporting_to(port, &[]);
    drop(black_hole);
    assert_answered_and_reported_once(&ran, "a black hole");
}

/// A collector answering every request `status_line`, with `headers`, and a body that never
/// ends (a megabyte at a time until the client hangs up).
fn hostile_collector(status_line: &'static str, headers: &'static str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = answer_endlessly(stream, status_line, headers);
            });
        }
    });
    port
}

fn answer_endlessly(
    mut stream: TcpStream,
    status_line: &str,
    headers: &str,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    reader.read_exact(&mut vec![0; length])?;
    write!(
        stream,
        "HTTP/1.1 {status_line}\r\n{headers}Content-Type: text/plain\r\n\
         Content-Length: 1000000000000\r\n\r\n"
    )?;
    let megabyte = vec![b'x'; 1 << 20];
    loop {
        stream.write_all(&megabyte)?;
    }
}

#[test]
fn a_collector_answering_500_with_an_endless_body_costs_the_trace_said_once() {
    let port = hostile_collector("500 Internal Server Error", "");
    let ran = run_exporting_to(port, &[]);
    assert_answered_and_reported_once(&ran, "500, endless body");
}

#[test]
fn a_collector_answering_429_with_an_endless_body_costs_the_trace_said_once() {
    let port = hostile_collector("429 Too Many Requests", "Retry-After: 3600\r\n");
    let ran = run_exporting_to(port, &[]);
    assert_answered_and_reported_once(&ran, "429, endless body");
}
