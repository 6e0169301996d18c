//! A tool set served over stdio (`reins-mcp-demo`) to a hostile client: one that sends
//! requests without reading the answers (the server stops reading, the client's writes
//! block on its full pipe, rather than holding every answer in memory, and answers them all
//! once read), and one that sends a request too long or too heavy to parse (answered with an
//! error by its id, unparsed).

#![cfg(target_os = "linux")]

use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Pings sent unread: about 370 MB of answers held when each was kept.
const PINGS: usize = 100_000;

/// Only against a hang: what these tests wait for happens long before.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// The peak memory of process `pid`, in KiB (`VmHWM`).
fn peak_memory_kib(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM in {status}"))
}

/// The demo server, its handshake answered, with its input and output.
pub(crate) fn initialized_server() -> (Child, ChildStdin, BufReader<ChildStdout>) {
    let mut server = Command::new(env!("CARGO_BIN_EXE_reins-mcp-demo"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = server.stdin.take().unwrap();
    let mut output = BufReader::new(server.stdout.take().unwrap());
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"probe","version":"1"}}}}}}"#
    )
    .unwrap();
    let mut line = String::new();
    output.read_line(&mut line).unwrap();
    assert!(line.contains(r#""id":0,"result""#), "{line}");
    (server, input, output)
}

/// A request of 17 MiB (over the 16 a message may take) and one of 15 MiB of small objects
/// (some 2.6 GB once parsed) are answered, each by its id, with an error saying why, unparsed;
/// the next request is served as before.
#[test]
fn a_request_too_long_or_too_heavy_to_parse_is_answered_unparsed() {
    let (mut server, mut input, output) = initialized_server();
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let long = "x".repeat(17 * 1024 * 1024);
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","id":"long","method":"ping","params":{{"_meta":{{"pad":"{long}"}}}}}}"#
    )
    .unwrap();
    let objects = vec![r#"{"a":0}"#; 15 * 1024 * 1024 / 8].join(",");
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","id":"heavy","method":"ping","params":{{"_meta":{{"pad":[{objects}]}}}}}}"#
    )
    .unwrap();
    writeln!(input, r#"{{"jsonrpc":"2.0","id":"next","method":"ping"}}"#).unwrap();
    // Read in a thread of its own, so that a server that never answers fails the test.
    let (lines, answered) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (mut output, mut line) = (output, String::new());
        while output.read_line(&mut line).is_ok_and(|read| read > 0) {
            let _ = lines.send(std::mem::take(&mut line));
        }
    });
    let mut answers = Vec::new();
    loop {
        let line = answered
            .recv_timeout(HANG_GUARD)
            .unwrap_or_else(|_| panic!("`next` was never answered; answers: {answers:?}"));
        answers.push(serde_json::from_str::<serde_json::Value>(&line).unwrap());
        if line.contains(r#""id":"next""#) {
            break;
        }
    }
    let peak = peak_memory_kib(server.id());
    drop(input);
    let _ = server.kill();
    let _ = server.wait();
    let shown: Vec<_> = answers
        .iter()
        .map(|answer| (answer["id"].clone(), answer["error"]["code"].clone()))
        .collect();
    assert_eq!(
        shown,
        [
            (json!("long"), json!(-32600)),
            (json!("heavy"), json!(-32600)),
            (json!("next"), json!(null))
        ]
    );
    let said = |at: usize| answers[at]["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        said(0).contains("over the 16 MiB a message may take"),
        "{}",
        said(0)
    );
    assert!(said(1).contains("once parsed"), "{}", said(1));
    assert!(peak < 200 * 1024, "the server held {peak} KiB");
}

#[test]
fn a_client_that_does_not_read_its_answers_is_not_read_either() {
    let (mut server, mut input, mut output) = initialized_server();
    let started_with = peak_memory_kib(server.id());
    let mut line = String::new();

    // The pings are written without a line of the answers read, until the server has
    // them all or stops reading them (no more is written for a while).
    let written = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (written, done) = (written.clone(), done.clone());
        std::thread::spawn(move || {
            writeln!(
                input,
                r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
            )
            .unwrap();
            for id in 1..=PINGS {
                writeln!(input, r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).unwrap();
                written.store(id, Ordering::Release);
            }
            input.flush().unwrap();
            done.store(true, Ordering::Release);
            input
        })
    };
    let started = Instant::now();
    let mut last = (0, Instant::now());
    while !done.load(Ordering::Acquire) && last.1.elapsed() < Duration::from_secs(2) {
        assert!(started.elapsed() < HANG_GUARD, "the writer never stopped");
        std::thread::sleep(Duration::from_millis(100));
        let now = written.load(Ordering::Acquire);
        if now != last.0 {
            last = (now, Instant::now());
        }
    }
    let peak = peak_memory_kib(server.id());

    // Every ping is answered once the answers are read.
    let mut answered = 0;
    line.clear();
    while answered < PINGS && output.read_line(&mut line).unwrap() > 0 {
        if line.contains(r#""result":{}"#) {
            answered += 1;
        }
        line.clear();
    }
    let input = writer.join().unwrap();
    drop(input);
    let _ = server.wait();
    assert_eq!(answered, PINGS);
    // The server stops reading once 64 answers wait to be written, but rmcp spawns a task
    // for each request it is handed before any answer is written: on a loaded machine it is
    // handed thousands first (about 20 MB grown on a quiet one, 94 MB seen under CI). Holding
    // every answer grew it by 470 MB.
    let grown = peak.saturating_sub(started_with);
    assert!(grown < 256 * 1024, "the server grew by {grown} KiB");
}
