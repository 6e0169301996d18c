//! Accepting a listener's next connection the way reins's HTTP servers do (this crate's MCP
//! server and the CLI's inbox): a connection whose client gave up before it was accepted is
//! skipped, and a failure of the listener itself (out of file descriptors, say) is logged and
//! retried after `ACCEPT_BACKOFF`. Retrying at once would spin and log without end while
//! the condition lasts; giving up would end the server over something that passes.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

/// How long to wait after an accept failed for a reason other than the connection itself.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(250);

/// The next connection `listener` accepts, with its peer's address. It never fails: a
/// connection whose client gave up before it was accepted is skipped, and a failure of the
/// listener itself (out of file descriptors, say) is logged as a warning and retried after
/// 250 ms, rather than at once (which would spin while the condition lasts).
///
/// Cancel-safe, so it can race a stop in `tokio::select!`: dropped before it returns, it
/// has accepted nothing.
///
/// ```no_run
/// # async fn serve() -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// loop {
///     let (stream, peer) = reins_mcp::accept_connection(&listener).await;
///     drop((stream, peer)); // serve it
/// }
/// # }
/// ```
pub async fn accept_connection(listener: &TcpListener) -> (TcpStream, SocketAddr) {
    loop {
        match listener.accept().await {
            Ok(accepted) => return accepted,
            // The client gave up before it was accepted: nothing to wait for.
            Err(error) if is_connection_error(error.kind()) => {}
            Err(error) => {
                tracing::warn!(%error, "accepting a connection failed; retrying");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
            }
        }
    }
}

/// Errors of the one connection being accepted, not of the listener.
fn is_connection_error(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    )
}
