//! A stand-in for Restate's ingress on a free loopback port, for tests that script what a
//! follower reads: each request (a read, with no body) is answered by the test's `answer`
//! to its head, with a status and a JSON body, one request a connection.

use serde_json::Value;
use std::io::{Read, Write};

/// Starts the stand-in, answering each request's head with `answer`; its URL.
pub fn stand_in_ingress(answer: impl Fn(&str) -> (u16, Value) + Send + 'static) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let url = format!("http://{}", listener.local_addr().expect("its address"));
    std::thread::spawn(move || {
        for mut stream in listener.incoming().map_while(Result::ok) {
            // The reads have no body: the request's head is all there is.
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let (code, body) = answer(&String::from_utf8_lossy(&head));
            let body = body.to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}
