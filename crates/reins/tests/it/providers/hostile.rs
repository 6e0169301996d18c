//! A tiny HTTP/1.1 server for what wiremock cannot do: bodies written in timed pieces,
//! connections dropped mid-body, lines that never end, redirects to another origin. It reads
//! each request (headers and a `Content-Length` body), records it, and answers from a script.
//! Every loop is bounded, and the server stops when it is dropped.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// A request as the server read it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    /// The path with its query.
    pub target: String,
    /// Header names lowercased, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

#[derive(Clone, Debug)]
enum Step {
    Write(Vec<u8>),
    Wait(Duration),
    /// `bytes` as a chunk, `times` times, `every` apart.
    Repeat {
        bytes: Vec<u8>,
        every: Duration,
        times: usize,
    },
    /// Resets the connection (an RST, not an orderly close).
    Reset,
}

/// What the server writes for one request. After the last step the connection is closed:
/// a chunked reply that was not [`finish`](Reply::finish)ed is thereby cut mid-body.
#[derive(Clone, Debug)]
pub struct Reply {
    steps: Vec<Step>,
    chunked: bool,
}

impl Reply {
    /// A whole response with a `Content-Length` body.
    pub fn fixed(status: u16, headers: &[(&str, &str)], body: impl Into<Vec<u8>>) -> Reply {
        let body = body.into();
        let mut head = head(status, headers);
        head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&body);
        Reply {
            steps: vec![Step::Write(bytes)],
            chunked: false,
        }
    }

    /// A 200 with JSON.
    pub fn json(body: &serde_json::Value) -> Reply {
        Reply::fixed(
            200,
            &[("content-type", "application/json")],
            body.to_string(),
        )
    }

    /// A redirect to `location`.
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply::fixed(status, &[("location", location)], "")
    }

    /// Reads the request and never answers (until the test ends).
    pub fn silent() -> Reply {
        Reply {
            steps: vec![Step::Wait(Duration::from_secs(60))],
            chunked: false,
        }
    }

    /// Reads the request and resets the connection without a word.
    pub fn reset() -> Reply {
        Reply {
            steps: vec![Step::Reset],
            chunked: false,
        }
    }

    /// The head of a chunked response; add its body with [`chunk`](Reply::chunk) and friends.
    pub fn chunked(status: u16, content_type: &str) -> Reply {
        let mut head = head(
            status,
            &[
                ("content-type", content_type),
                ("transfer-encoding", "chunked"),
            ],
        );
        head.push_str("\r\n");
        Reply {
            steps: vec![Step::Write(head.into_bytes())],
            chunked: true,
        }
    }

    /// An event stream of `events`, each a chunk. As it is, the stream is then cut (the
    /// connection drops mid-body); [`finish`](Reply::finish) ends it properly.
    pub fn events(events: &[String]) -> Reply {
        events
            .iter()
            .fold(Reply::chunked(200, "text/event-stream"), |reply, event| {
                reply.chunk(event.as_bytes())
            })
    }

    /// Writes `bytes` as one chunk.
    pub fn chunk(mut self, bytes: &[u8]) -> Reply {
        assert!(self.chunked, "chunk() needs a chunked reply");
        self.steps.push(Step::Write(frame(bytes)));
        self
    }

    /// Pauses.
    pub fn wait(mut self, duration: Duration) -> Reply {
        self.steps.push(Step::Wait(duration));
        self
    }

    /// Writes `bytes` as a chunk `times` times, `every` apart.
    pub fn repeat(mut self, bytes: &[u8], every: Duration, times: usize) -> Reply {
        assert!(self.chunked, "repeat() needs a chunked reply");
        self.steps.push(Step::Repeat {
            bytes: frame(bytes),
            every,
            times,
        });
        self
    }

    /// Ends the chunked body properly.
    pub fn finish(mut self) -> Reply {
        assert!(self.chunked, "finish() needs a chunked reply");
        self.steps.push(Step::Write(b"0\r\n\r\n".to_vec()));
        self
    }
}

fn head(status: u16, headers: &[(&str, &str)]) -> String {
    let mut head = format!("HTTP/1.1 {status} Hostile\r\nconnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head
}

fn frame(bytes: &[u8]) -> Vec<u8> {
    let mut framed = format!("{:x}\r\n", bytes.len()).into_bytes();
    framed.extend_from_slice(bytes);
    framed.extend_from_slice(b"\r\n");
    framed
}

/// The server. Request `n` gets the script's reply `n`, or its last reply once the script
/// has run out.
pub struct Hostile {
    address: std::net::SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    task: JoinHandle<()>,
}

impl Hostile {
    pub async fn start(script: Vec<Reply>) -> Hostile {
        Hostile::start_with(|_| script).await
    }

    /// A server whose script is written knowing its own URL (e.g. to redirect to itself).
    pub async fn start_with(script: impl FnOnce(&str) -> Vec<Reply>) -> Hostile {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let script = script(&format!("http://{address}"));
        assert!(!script.is_empty(), "a script of at least one reply");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        let task = tokio::spawn(async move {
            // Connections live in the set, so aborting this task ends them too.
            let mut connections = JoinSet::new();
            for index in 0.. {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let reply = script[index.min(script.len() - 1)].clone();
                connections.spawn(serve(socket, reply, Arc::clone(&recorded)));
            }
        });
        Hostile {
            address,
            requests,
            task,
        }
    }

    /// A server answering every request with `reply`.
    pub async fn always(reply: Reply) -> Hostile {
        Hostile::start(vec![reply]).await
    }

    /// `http://127.0.0.1:port`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(mut socket: TcpStream, reply: Reply, requests: Arc<Mutex<Vec<Recorded>>>) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    requests.lock().unwrap().push(request);
    for step in reply.steps {
        let written = match step {
            Step::Write(bytes) => socket.write_all(&bytes).await,
            Step::Wait(duration) => {
                tokio::time::sleep(duration).await;
                Ok(())
            }
            Step::Repeat {
                bytes,
                every,
                times,
            } => repeat(&mut socket, &bytes, every, times).await,
            Step::Reset => {
                // Lingering zero seconds makes the close an RST.
                let _ = socket.set_zero_linger();
                return;
            }
        };
        // The client hung up (it gave up on the reply): nothing more to do.
        if written.is_err() {
            return;
        }
    }
    let _ = socket.flush().await;
    // Dropping the socket closes the connection, cutting a body that was not finished.
}

async fn repeat(
    socket: &mut TcpStream,
    bytes: &[u8],
    every: Duration,
    times: usize,
) -> std::io::Result<()> {
    for _ in 0..times {
        socket.write_all(bytes).await?;
        if !every.is_zero() {
            tokio::time::sleep(every).await;
        }
    }
    Ok(())
}

/// The largest request the server reads; reins' requests are far smaller.
const MAX_REQUEST: usize = 16 * 1024 * 1024;

async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut received = Vec::new();
    let mut buffer = [0u8; 8192];
    let header_end = loop {
        if let Some(end) = find(&received, b"\r\n\r\n") {
            break end;
        }
        let read = socket.read(&mut buffer).await.ok()?;
        if read == 0 || received.len() > MAX_REQUEST {
            return None;
        }
        received.extend_from_slice(&buffer[..read]);
    };
    let head = String::from_utf8_lossy(&received[..header_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let target = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            Some((name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        })
        .collect();
    let length = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse::<usize>().ok())
        .unwrap_or(0)
        .min(MAX_REQUEST);
    let mut body = received[header_end + 4..].to_vec();
    while body.len() < length {
        let read = socket.read(&mut buffer).await.ok()?;
        if read == 0 {
            return None;
        }
        body.extend_from_slice(&buffer[..read]);
    }
    Some(Recorded {
        method,
        target,
        headers,
        body,
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}
