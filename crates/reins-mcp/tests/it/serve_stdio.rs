//! A tool set served over stdio (`reins-mcp-demo`) to a client that sends requests without
//! reading the answers: the server stops reading (the client's writes block on its full
//! pipe) rather than holding every answer in memory, and answers them all once read.

#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Pings sent unread: about 370 MB of answers held when each was kept.
const PINGS: usize = 100_000;

/// Only against a hang: what these tests wait for happens long before.
const HANG_GUARD: Duration = Duration::from_secs(120);

/// The peak memory of process `pid`, in KiB (`VmHWM`).
fn peak_memory_kib(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM in {status}"))
}

#[test]
fn a_client_that_does_not_read_its_answers_is_not_read_either() {
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
    assert!(peak < 100 * 1024, "the server held {peak} KiB");
}
