//! A bearer token reaches the ingress and the admin API in the `Authorization` header, and is
//! never shown: a tiny HTTP server on loopback stands in for an authenticating proxy (the
//! open-source `restate-server` checks no token).

use reins_restate::{ClientError, RestateRuns, register_deployment_with_token};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const TOKEN: &str = "tok-9f8e7d";

/// One request the stand-in received: its request line and its `Authorization` headers.
#[derive(Debug, Clone)]
struct Seen {
    line: String,
    authorization: Vec<String>,
}

/// Serves HTTP/1.1 on loopback, one request per connection: 401 unless the request carries
/// exactly `Authorization: Bearer <TOKEN>`, else 200 with a run's progress. Returns its URL
/// and what it saw.
async fn proxy() -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut request = Vec::new();
            let mut buffer = [0u8; 4096];
            // The head ends with an empty line; the bodies sent here are small JSON.
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buffer[..n]),
                }
            }
            let head = String::from_utf8_lossy(&request).into_owned();
            let mut lines = head.lines();
            let line = lines.next().unwrap_or_default().to_owned();
            let authorization: Vec<String> = lines
                .filter_map(|l| l.split_once(':'))
                .filter(|(name, _)| name.eq_ignore_ascii_case("authorization"))
                .map(|(_, value)| value.trim().to_owned())
                .collect();
            let allowed = authorization == [format!("Bearer {TOKEN}")];
            log.lock().expect("the log").push(Seen {
                line,
                authorization,
            });
            let (status, body) = if allowed {
                ("200 OK", r#"{"steps":["r/model/1"],"pending":[]}"#)
            } else {
                ("401 Unauthorized", "missing or wrong bearer token")
            };
            let response = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
        }
    });
    (url, seen)
}

#[tokio::test]
async fn the_bearer_token_is_sent_to_the_ingress_and_never_shown() {
    let (url, seen) = proxy().await;

    let anonymous = RestateRuns::new(&url).expect("a valid URL");
    match anonymous.status("r").await {
        Err(ClientError::Http { status: 401, .. }) => {}
        other => panic!("the stand-in refuses a call without the token, got {other:?}"),
    }

    // User info in the URL would be basic authentication: the token replaces it.
    let with_user_info = url.replace("http://", "http://ann:pw@");
    let runs = RestateRuns::new(&with_user_info)
        .and_then(|runs| runs.bearer_token(TOKEN))
        .expect("a client with a token");
    let progress = runs.status("r").await.expect("the token is accepted");
    assert_eq!(progress.steps, ["r/model/1"]);
    let last = seen.lock().expect("the log").last().cloned();
    let last = last.expect("a request");
    assert_eq!(last.line, "POST /ReinsAgent/r/status HTTP/1.1");
    assert_eq!(last.authorization, [format!("Bearer {TOKEN}")]);

    // Its `Debug` masks it: client.rs's unit tests check that with the URL's credentials.

    // A refused token and an unreachable ingress: neither error repeats it.
    let wrong = RestateRuns::new(&url)
        .and_then(|runs| runs.bearer_token(&format!("{TOKEN}-stale")))
        .expect("a client");
    let refused = wrong
        .status("r")
        .await
        .expect_err("a wrong token is refused");
    assert!(matches!(refused, ClientError::Http { status: 401, .. }));
    let closed = format!("http://127.0.0.1:{}", reins_test_servers::free_port());
    let unreachable = RestateRuns::new(&closed)
        .and_then(|runs| runs.bearer_token(TOKEN))
        .expect("a client")
        .start("r", "hi")
        .await
        .expect_err("nothing listens");
    for error in [refused, unreachable] {
        for shown in [error.to_string(), format!("{error:?}")] {
            assert!(!shown.contains(TOKEN), "{shown}");
        }
    }

    match RestateRuns::new(&url).and_then(|runs| runs.bearer_token("a\nb")) {
        Err(error @ ClientError::InvalidToken) => {
            assert!(!error.to_string().contains("a\nb"));
        }
        other => panic!("a token with a line break is refused, got {other:?}"),
    }
}

#[tokio::test]
async fn the_bearer_token_is_sent_to_the_admin_api_when_registering() {
    let (url, seen) = proxy().await;
    register_deployment_with_token(&url, "http://127.0.0.1:9080", TOKEN)
        .await
        .expect("the token is accepted");
    let last = seen.lock().expect("the log").last().cloned();
    let last = last.expect("a request");
    assert_eq!(last.line, "POST /deployments HTTP/1.1");
    assert_eq!(last.authorization, [format!("Bearer {TOKEN}")]);

    let refused = register_deployment_with_token(&url, "http://127.0.0.1:9080", "tok-other-55")
        .await
        .expect_err("a wrong token is refused");
    assert!(!refused.to_string().contains("tok-other-55"), "{refused}");
}
