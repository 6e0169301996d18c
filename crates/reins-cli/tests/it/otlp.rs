//! OTLP export: with `OTEL_EXPORTER_OTLP_ENDPOINT` set, `reins run` sends the run's spans to
//! it before it exits. A minimal OTLP/HTTP collector on loopback records what arrives.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, outcome};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// The requests a collector received: path and body.
pub(crate) type Received = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// Accepts OTLP/HTTP requests on a free loopback port, answering 200 to each.
pub(crate) fn collector() -> (u16, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    let received: Received = Arc::default();
    let sink = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let sink = sink.clone();
            std::thread::spawn(move || {
                let mut writer = match stream.try_clone() {
                    Ok(writer) => writer,
                    Err(_) => return,
                };
                let mut reader = BufReader::new(stream);
                // Requests on one kept-alive connection, one after another.
                loop {
                    let mut request_line = String::new();
                    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                        return;
                    }
                    let path = request_line
                        .split_whitespace()
                        .nth(1)
                        .unwrap_or_default()
                        .to_owned();
                    let mut length = 0;
                    loop {
                        let mut header = String::new();
                        if reader.read_line(&mut header).unwrap_or(0) == 0 {
                            return;
                        }
                        let header = header.trim_end();
                        if header.is_empty() {
                            break;
                        }
                        if let Some((name, value)) = header.split_once(':')
                            && name.eq_ignore_ascii_case("content-length")
                        {
                            length = value.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    if let Ok(mut received) = sink.lock() {
                        received.push((path, body));
                    }
                    let _ = writer
                        .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                        .and_then(|()| writer.flush());
                }
            });
        }
    });
    (port, received)
}

const RULES: &str = r#"
version: 1
rules:
  - name: answer
    when:
      messages_contain: "Hello"
    respond:
      content: "Hi there."
"#;

/// What one `reins run` exported to a collector.
struct Exported {
    code: i32,
    stdout: String,
    stderr: String,
    /// The bodies of the trace exports, as text (protobuf strings stay readable).
    traces: Vec<String>,
    /// Every path the collector was sent to.
    paths: Vec<String>,
}

/// Runs an agent answering through fakellm on `prompt`, exporting to a collector, with `env`.
fn export_a_run(prompt: &str, env: &[(&str, &str)]) -> Exported {
    let (port, received) = collector();
    let llm = FakeLlm::start(RULES);
    let agent = AgentDir::new(&format!(
        "[model]\nprovider = \"openai\"\nname = \"gpt-5-mini\"\nbase_url = \"{}\"\n\
         api_key_env = \"REINS_TEST_KEY\"\n",
        llm.openai_url()
    ));
    let mut command = agent.reins(&["run", "AGENT", prompt]);
    command.env("REINS_TEST_KEY", "k").env(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        format!("http://127.0.0.1:{port}"),
    );
    command.envs(env.iter().copied());
    let (code, stdout, stderr) = outcome(command);
    // The command has exited: whatever it flushed has arrived.
    let received = received.lock().expect("the collector's records");
    Exported {
        code,
        stdout,
        stderr,
        traces: received
            .iter()
            .filter(|(path, _)| path == "/v1/traces")
            .map(|(_, body)| String::from_utf8_lossy(body).into_owned())
            .collect(),
        paths: received.iter().map(|(path, _)| path.clone()).collect(),
    }
}

#[test]
fn a_run_exports_its_trace_before_the_command_exits() {
    let run = export_a_run("Hello.", &[("OTEL_SERVICE_NAME", "reins-cli-test")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "Hi there.");
    assert!(
        run.traces.iter().any(|body| body.contains("invoke_agent")),
        "no invoke_agent span among {} trace export(s); paths: {:?}",
        run.traces.len(),
        run.paths
    );
    assert!(
        run.traces
            .iter()
            .any(|body| body.contains("reins-cli-test"))
    );
}

#[test]
fn with_the_genai_content_switch_the_messages_are_exported_with_secrets_masked() {
    let secret = "sk-proj-Zq8vN2mT5xK9pL3wR7yB4cD6";
    let run = export_a_run(
        &format!("Hello. My key is {secret}."),
        &[("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let traces = run.traces.concat();
    assert!(
        traces.contains("gen_ai.input.messages"),
        "no messages exported"
    );
    assert!(
        traces.contains("My key is"),
        "the prompt is in the messages"
    );
    assert!(
        traces.contains("Hi there."),
        "the answer is in the messages"
    );
    assert!(!traces.contains(secret), "the key in the prompt is masked");
}

/// `OTEL_TRACES_EXPORTER=console`, with no collector: the run's spans are written on stderr
/// and stdout keeps the answer alone; metrics, not asked for, are sent nowhere (no warning
/// about a collector that is not there).
#[test]
fn the_console_exporter_shows_the_spans_on_stderr_without_a_collector() {
    let llm = FakeLlm::start(RULES);
    let agent = AgentDir::new(&format!(
        "[model]\nprovider = \"openai\"\nname = \"gpt-5-mini\"\nbase_url = \"{}\"\n\
         api_key_env = \"REINS_TEST_KEY\"\n",
        llm.openai_url()
    ));
    let mut command = agent.reins(&["run", "AGENT", "Hello."]);
    command
        .env("REINS_TEST_KEY", "k")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_METRICS_EXPORTER")
        .env("OTEL_TRACES_EXPORTER", "console");
    let (code, stdout, stderr) = outcome(command);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Hi there.");
    assert!(stderr.contains("span \"invoke_agent"), "{stderr}");
    assert!(stderr.contains("span \"chat gpt-5-mini\""), "{stderr}");
    assert!(
        stderr.contains("gen_ai.request.model = \"gpt-5-mini\""),
        "{stderr}"
    );
    assert!(!stderr.contains("not exported"), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
}
