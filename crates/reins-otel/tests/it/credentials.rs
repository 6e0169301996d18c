//! An endpoint's user info reaches the collector as an `Authorization: Basic` header, never
//! in the request's URL: the exporter is given the URL without it, so OpenTelemetry, which
//! quotes its URL in logs and errors, never holds it.

use base64::Engine as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::mpsc::{Receiver, Sender, channel};

/// A password with a `@`, escaped in the URL as user info is.
const PASSWORD_IN_URL: &str = "pw%40hunter2-71c3";
const PASSWORD: &str = "pw@hunter2-71c3";

/// One request's head: its request line and its headers, names lowercased.
#[derive(Debug)]
struct Head {
    request_line: String,
    headers: Vec<(String, String)>,
}

impl Head {
    fn all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(header, _)| header == name)
            .map(|(_, value)| value.as_str())
            .collect()
    }
}

/// A collector on loopback that answers every request 200 and sends each request's head.
fn capturing_collector() -> (u16, Receiver<Head>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (heads, received) = channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let heads = heads.clone();
            std::thread::spawn(move || answer_200(stream, &heads));
        }
    });
    (port, received)
}

/// Answers each request of `stream` (a client may send several on one connection).
fn answer_200(mut stream: TcpStream, heads: &Sender<Head>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line)? == 0 {
            return Ok(());
        }
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line)? == 0 || line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
            }
        }
        let head = Head {
            request_line: request_line.trim_end().to_owned(),
            headers,
        };
        let length: usize = head
            .all("content-length")
            .first()
            .and_then(|value| value.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        let _ = heads.send(head);
        write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")?;
    }
}

/// The heads of the requests the demo sends when it exports traces and metrics to
/// `endpoint` with `headers` in `OTEL_EXPORTER_OTLP_HEADERS`.
fn requests_of_demo(endpoint: &str, headers: Option<&str>, received: &Receiver<Head>) -> Vec<Head> {
    let dir = std::env::temp_dir().join(format!(
        "reins-otel-credentials-{}-{}",
        std::process::id(),
        headers.is_some()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut demo = Command::new(env!("CARGO_BIN_EXE_reins-otel-demo"));
    demo.args(["start", &dir.join("runs.sqlite").to_string_lossy(), "r1"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        .env_remove("OTEL_EXPORTER_OTLP_HEADERS")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
        .env_remove("OTEL_METRICS_EXPORTER");
    if let Some(headers) = headers {
        demo.env("OTEL_EXPORTER_OTLP_HEADERS", headers);
    }
    let output = demo.output().expect("the demo runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Both exports are done (flushed at shutdown) once the demo has exited.
    received.try_iter().collect()
}

#[test]
fn user_info_is_sent_as_a_basic_header_and_never_in_the_url() {
    let (port, received) = capturing_collector();
    let endpoint = format!("http://phoenix:{PASSWORD_IN_URL}@127.0.0.1:{port}");
    let requests = requests_of_demo(&endpoint, None, &received);
    let mut lines: Vec<&str> = requests.iter().map(|h| h.request_line.as_str()).collect();
    lines.sort();
    assert_eq!(
        lines,
        ["POST /v1/metrics HTTP/1.1", "POST /v1/traces HTTP/1.1"],
        "{requests:?}"
    );
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("phoenix:{PASSWORD}"))
    );
    for head in &requests {
        assert_eq!(head.all("host"), [format!("127.0.0.1:{port}")], "{head:?}");
        assert_eq!(head.all("authorization"), [basic.as_str()], "{head:?}");
        let whole = format!("{head:?}");
        assert!(!whole.contains(PASSWORD_IN_URL), "{whole}");
    }
}

#[test]
fn an_authorization_header_of_the_users_is_sent_instead() {
    let (port, received) = capturing_collector();
    let endpoint = format!("http://phoenix:{PASSWORD_IN_URL}@127.0.0.1:{port}");
    let requests = requests_of_demo(
        &endpoint,
        Some("Authorization=Bearer users-own-key,x-team=ops"),
        &received,
    );
    assert_eq!(requests.len(), 2, "{requests:?}");
    for head in &requests {
        assert_eq!(
            head.all("authorization"),
            ["Bearer users-own-key"],
            "{head:?}"
        );
        assert_eq!(head.all("x-team"), ["ops"], "{head:?}");
        assert!(!head.request_line.contains("phoenix"), "{head:?}");
    }
}
