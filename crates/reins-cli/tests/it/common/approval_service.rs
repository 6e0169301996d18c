//! An approval webhook's service for the tests: answers every request with one JSON answer
//! and keeps what it received.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// What the approval service received: each request's headers (lower-cased names) and body.
pub type Received = Arc<Mutex<Vec<(Vec<(String, String)>, Vec<u8>)>>>;

/// An HTTP service on loopback answering every request with `answer` as JSON. Returns its
/// URL and what it receives.
pub fn approval_service(answer: &'static str) -> (String, Received) {
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{answer}",
        answer.len()
    );
    raw_service(response)
}

/// A service on loopback that reads each request and sends `response`, bytes as they are
/// (an empty one closes the connection without an answer). Returns its URL and what it
/// receives.
pub fn raw_service(response: String) -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/approve", listener.local_addr().expect("address"));
    let received = Received::default();
    let log = Arc::clone(&received);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut headers = Vec::new();
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                if let Some((name, value)) = line.trim_end().split_once(": ") {
                    headers.push((name.to_ascii_lowercase(), value.to_owned()));
                }
                line.clear();
            }
            let length = headers
                .iter()
                .find(|(name, _)| name == "content-length")
                .and_then(|(_, value)| value.parse().ok())
                .unwrap_or(0);
            let mut body = vec![0; length];
            reader.read_exact(&mut body).expect("body");
            log.lock().expect("log").push((headers, body));
            let _ = stream.write_all(response.as_bytes());
        }
    });
    (url, received)
}

/// An approval service on loopback that takes each request and never answers it (the
/// connection stays open until the test process ends). Returns its URL.
pub fn silent_service() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/approve", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            held.push(stream);
        }
    });
    url
}
