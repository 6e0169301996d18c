//! Servers that stand in for Restate's ingress or admin API in this crate's unit tests.

use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::task::JoinHandle;

/// A server that accepts connections and holds them open, never answering: its address,
/// and the task to abort.
pub(crate) async fn silent_server() -> (SocketAddr, JoinHandle<()>) {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = silent.local_addr().unwrap();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            open.push(stream);
        }
    });
    (address, held)
}

/// A server that answers every request with `head` (the status line, the headers, the blank
/// line and the body's start) and then `block`, again and again, for as long as the client
/// reads: a body without end. Its address, and the task to abort.
pub(crate) async fn endless_server(head: &str, block: &[u8]) -> (SocketAddr, JoinHandle<()>) {
    let server = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = server.local_addr().unwrap();
    let head: Arc<[u8]> = head.as_bytes().into();
    let block: Arc<[u8]> = block.into();
    let serving = tokio::spawn(async move {
        while let Ok((mut stream, _)) = server.accept().await {
            let (head, block) = (head.clone(), block.clone());
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = stream.read(&mut request).await;
                if stream.write_all(&head).await.is_err() {
                    return;
                }
                while stream.write_all(&block).await.is_ok() {}
            });
        }
    });
    (address, serving)
}

/// An address on loopback that nothing listens on (a port bound, then let go).
pub(crate) fn closed_address() -> SocketAddr {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    closed.local_addr().unwrap()
}
