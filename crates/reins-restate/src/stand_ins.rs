//! Servers that stand in for Restate's ingress or admin API in this crate's unit tests.

use std::net::SocketAddr;
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

/// An address on loopback that nothing listens on (a port bound, then let go).
pub(crate) fn closed_address() -> SocketAddr {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    closed.local_addr().unwrap()
}
