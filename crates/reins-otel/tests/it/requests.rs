//! Reading the requests an exporter sends to the tests' stand-in collectors: plain HTTP/1.1
//! on loopback, a head and a body of `Content-Length` bytes.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::net::TcpStream;

/// One request a stand-in collector received: its headers (names in lower case) and body.
pub struct Received {
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

/// Reads one request from `stream`.
pub fn read_request(stream: &TcpStream) -> std::io::Result<Received> {
    let mut reader = BufReader::new(stream);
    let mut headers = HashMap::new();
    let mut request_line = String::new();
    if reader.read_line(&mut request_line)? == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        if line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    let length = headers
        .get("content-length")
        .and_then(|length| length.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(Received { headers, body })
}
