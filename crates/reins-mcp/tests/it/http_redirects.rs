//! A server that redirects the client elsewhere: another origin is never sent the request
//! (its bearer token, session id and headers with it).

use reins_mcp::McpServer;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Answers every request on `listener` with a `status` redirect to `location`.
async fn redirect_all(listener: TcpListener, status: &'static str, location: String) {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            return;
        };
        let location = location.clone();
        tokio::spawn(async move {
            let mut buffer = [0u8; 8192];
            let _ = stream.read(&mut buffer).await;
            let answer = format!(
                "HTTP/1.1 {status}\r\nLocation: {location}\r\nContent-Length: 0\r\n\
                 Connection: close\r\n\r\n"
            );
            let _ = stream.write_all(answer.as_bytes()).await;
        });
    }
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_not_followed() {
    // The other origin: the same address under another port.
    let elsewhere = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let elsewhere_url = format!("http://{}/mcp", elsewhere.local_addr().unwrap());
    for status in [
        "307 Temporary Redirect",
        "308 Permanent Redirect",
        "302 Found",
    ] {
        let redirecting = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", redirecting.local_addr().unwrap());
        let task = tokio::spawn(redirect_all(redirecting, status, elsewhere_url.clone()));
        let error = McpServer::http(url)
            .bearer_token("redirected-token-5")
            .connect_timeout(Duration::from_secs(10))
            .connect()
            .await
            .unwrap_err();
        task.abort();
        assert!(!error.to_string().contains("redirected-token-5"), "{error}");
    }
    // Whatever the client sent, it went to the redirecting server only: nobody connected
    // here (a connection made would be waiting to be accepted; the listener does not block).
    let elsewhere = elsewhere.into_std().unwrap();
    let accepted = elsewhere.accept();
    assert!(
        matches!(&accepted, Err(error) if error.kind() == std::io::ErrorKind::WouldBlock),
        "the client followed a redirect to another origin: {accepted:?}"
    );
}
