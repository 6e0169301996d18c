//! What bounds the connections `reins ui` keeps open: anyone who can reach its port can
//! connect (the token is read with the request), so a connection that sends nothing, half
//! a request or its body a byte at a time, or never reads the answers, is closed by the inbox
//! after a while, and too many of them at once never take the file descriptors the inbox
//! needs to answer a person; a request refused for want of the token ends its connection, so
//! a client without it cannot keep every connection the inbox holds.

use crate::common::fakellm::FakeLlm;
use crate::common::inbox::Inbox;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// The inbox's deadline for a request's head, shortened (an internal variable) so that the
/// tests need not wait its 15 seconds.
const SHORT_HEADER_TIMEOUT: (&str, &str) = ("REINS_INTERNAL_UI_HEADER_TIMEOUT_MS", "500");

/// The inbox's deadlines for a request's body and for a client to take an answer, shortened
/// likewise (they are 30 and 60 seconds).
const SHORT_BODY_TIMEOUT: (&str, &str) = ("REINS_INTERNAL_UI_BODY_TIMEOUT_MS", "500");
const SHORT_WRITE_TIMEOUT: (&str, &str) = ("REINS_INTERNAL_UI_WRITE_TIMEOUT_MS", "500");

/// Far longer than the inbox's deadline: a connection still open then is one it kept.
const GENEROUS: Duration = Duration::from_secs(30);

fn started(extra: &[&str], open_files: Option<u32>) -> Inbox {
    let llm = FakeLlm::start(crate::ui::RULES);
    let agent = crate::ui::agent(&llm);
    Inbox::start_limited(
        &agent.file,
        "127.0.0.1:0",
        extra,
        &[
            SHORT_HEADER_TIMEOUT,
            SHORT_BODY_TIMEOUT,
            SHORT_WRITE_TIMEOUT,
        ],
        open_files,
    )
}

fn connect(inbox: &Inbox) -> TcpStream {
    TcpStream::connect(inbox.url.trim_start_matches("http://")).expect("connect")
}

/// Everything the inbox sends on `connection` until it closes it; fails if it keeps it open.
fn read_until_closed(mut connection: TcpStream) -> String {
    connection
        .set_read_timeout(Some(GENEROUS))
        .expect("read timeout");
    let mut received = Vec::new();
    connection
        .read_to_end(&mut received)
        .expect("the inbox closes the connection itself");
    String::from_utf8_lossy(&received).into_owned()
}

#[test]
fn a_half_sent_request_head_and_an_idle_connection_are_closed_by_the_inbox() {
    let inbox = started(&["--no-token"], None);
    let host = inbox.url.trim_start_matches("http://").to_owned();

    let mut half_head = connect(&inbox);
    half_head
        .write_all(format!("GET / HTTP/1.1\r\nHost: {host}\r\n").as_bytes())
        .expect("send");
    let answered = read_until_closed(half_head);
    assert!(
        !answered.contains("200 OK"),
        "half a request is not answered\n{answered}"
    );

    // A whole request is answered, and its connection, kept alive, is closed once idle.
    let mut kept_alive = connect(&inbox);
    kept_alive
        .write_all(format!("GET / HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes())
        .expect("send");
    let answered = read_until_closed(kept_alive);
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");

    let (status, stderr) = inbox.stop("INT");
    assert!(status.success(), "{status}\n{stderr}");
}

#[test]
fn connections_held_open_beyond_the_cap_do_not_keep_the_inbox_from_answering() {
    // More idle connections than the inbox may hold (256), and than it has file descriptors
    // for: without a cap it would run out of them, and then accept nobody.
    let inbox = started(&[], Some(320));
    let idle: Vec<TcpStream> = (0..340).map(|_| connect(&inbox)).collect();

    let client = inbox.http();
    let page = client
        .get(format!("{}/", inbox.url))
        .timeout(GENEROUS)
        .send()
        .expect("the inbox answers while the idle connections are held");
    assert_eq!(page.status(), 200);
    drop(idle);
    let again = client
        .get(format!("{}/", inbox.url))
        .timeout(GENEROUS)
        .send()
        .expect("the inbox is still up");
    assert_eq!(again.status(), 200);

    let (status, stderr) = inbox.stop("TERM");
    assert!(status.success(), "{status}\n{stderr}");
}

#[test]
fn a_request_body_sent_a_byte_at_a_time_is_answered_408_and_its_connection_closed() {
    let inbox = started(&["--no-token"], None);
    let host = inbox.url.trim_start_matches("http://").to_owned();
    let mut slow = connect(&inbox);
    // A whole head in time, announcing a large form, then its body a byte at a time: each
    // byte arrives well within the deadline for a head, the whole body never does.
    slow.write_all(
        format!(
            "POST /runs/r/resume HTTP/1.1\r\nHost: {host}\r\n\
             Content-Type: application/x-www-form-urlencoded\r\n\
             Content-Length: 1000000\r\n\r\ncsrf="
        )
        .as_bytes(),
    )
    .expect("send the head");
    let mut trickle = slow.try_clone().expect("a second handle");
    let trickling = std::thread::spawn(move || {
        // Until the inbox closes the connection (bounded, so that the test ends anyway).
        for _ in 0..600 {
            if trickle.write_all(b"a").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let answered = read_until_closed(slow);
    assert!(answered.starts_with("HTTP/1.1 408"), "{answered}");
    let lowercase = answered.to_ascii_lowercase();
    assert!(lowercase.contains("content-type: text/html"), "{answered}");
    assert!(lowercase.contains("connection: close"), "{answered}");
    assert!(answered.contains("x-frame-options: DENY"), "{answered}");
    assert!(answered.contains("did not arrive within"), "{answered}");
    let _ = trickling.join();

    let (status, stderr) = inbox.stop("INT");
    assert!(status.success(), "{status}\n{stderr}");
}

#[test]
fn a_client_that_never_reads_its_answers_is_disconnected() {
    let inbox = started(&["--no-token"], None);
    let host = inbox.url.trim_start_matches("http://").to_owned();
    let mut never_reads = connect(&inbox);
    never_reads
        .set_write_timeout(Some(GENEROUS))
        .expect("write timeout");
    // Requests sent one after another on the connection (pipelined), their answers never
    // read: once the system's buffers are full, the inbox's answer cannot be written.
    let requests = format!("GET /inbox.js HTTP/1.1\r\nHost: {host}\r\n\r\n").repeat(64);
    let stopped = loop {
        if let Err(error) = never_reads.write_all(requests.as_bytes()) {
            break error;
        }
    };
    // Closed by the inbox, not a write of ours that waited in vain.
    assert!(
        matches!(
            stopped.kind(),
            std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::BrokenPipe
                | std::io::ErrorKind::ConnectionAborted
        ),
        "{stopped:?}"
    );
    let page = inbox
        .http()
        .get(format!("{}/", inbox.url))
        .timeout(GENEROUS)
        .send()
        .expect("the inbox still answers");
    assert_eq!(page.status(), 200);

    let (status, stderr) = inbox.stop("TERM");
    assert!(status.success(), "{status}\n{stderr}");
}

/// The most connections the inbox holds at once (its `MAX_CONNECTIONS`).
const INBOX_CONNECTIONS: usize = 256;

/// A client without the token keeping busy every connection the inbox holds: each asks again
/// and again, well within the deadline for a head, reading the refusals. Stops when told, or
/// after a minute at most.
fn keep_busy(inbox: &Inbox, stop: std::sync::Arc<std::sync::atomic::AtomicBool>) -> impl FnOnce() {
    use std::sync::atomic::Ordering;
    let address = inbox.url.trim_start_matches("http://").to_owned();
    let request = format!("GET / HTTP/1.1\r\nHost: {address}\r\n\r\n");
    let open = |address: &str| {
        let connection = TcpStream::connect(address).expect("connect");
        connection.set_nonblocking(true).expect("nonblocking");
        connection
    };
    // Every connection accepted and answered once before the person asks.
    let mut held: Vec<TcpStream> = (0..INBOX_CONNECTIONS)
        .map(|_| {
            let mut connection = TcpStream::connect(&address).expect("connect");
            connection.write_all(request.as_bytes()).expect("send");
            connection
                .set_read_timeout(Some(GENEROUS))
                .expect("read timeout");
            let mut answer = [0u8; 4096];
            let read = connection.read(&mut answer).expect("an answer");
            assert!(answer[..read].starts_with(b"HTTP/1.1 401"), "refused");
            connection.set_nonblocking(true).expect("nonblocking");
            connection
        })
        .collect();
    let busy = std::thread::spawn(move || {
        let mut answer = [0u8; 64 * 1024];
        for _ in 0..600 {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            for connection in &mut held {
                // Its answers read, so that none waits to be written; closed by the inbox,
                // opened again (after the connections already waiting to be accepted).
                let closed = loop {
                    match connection.read(&mut answer) {
                        Ok(0) => break true,
                        Ok(_) => {}
                        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                            break false;
                        }
                        Err(_) => break true,
                    }
                };
                if closed || connection.write_all(request.as_bytes()).is_err() {
                    *connection = open(&address);
                    let _ = connection.write_all(request.as_bytes());
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    move || busy.join().expect("the busy client")
}

#[test]
fn a_client_without_the_token_keeping_every_connection_busy_does_not_lock_the_person_out() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let inbox = started(&[], None);
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let finished = keep_busy(&inbox, stop.clone());

    let page = inbox
        .http()
        .get(format!("{}/", inbox.url))
        .timeout(GENEROUS)
        .send();
    stop.store(true, Ordering::Relaxed);
    finished();
    let page = page.expect("the person is answered while the other client keeps asking");
    assert_eq!(page.status(), 200);

    let (status, stderr) = inbox.stop("INT");
    assert!(status.success(), "{status}\n{stderr}");
}
