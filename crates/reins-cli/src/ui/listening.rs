//! Serving the inbox's connections until Ctrl-C or SIGTERM, each bounded so that no client
//! can wear the inbox out: any process on the machine can connect (and anyone on the network
//! when it listens off loopback), since a request is read before its token is checked.
//!
//! - A request's head must arrive within [`HEADER_TIMEOUT`] of the connection opening or of
//!   the previous answer: a connection that sends nothing, half a head, or a byte at a time,
//!   and one left idle between requests, is closed. Its body has a deadline of its own
//!   ([`super::body_deadline`]).
//! - An answer must be taken within [`WRITE_TIMEOUT`] ([`super::write_deadline`]): a client
//!   that stops reading (its buffers, then the system's, full) is disconnected.
//! - At most [`MAX_CONNECTIONS`] are open at once. The next one is not accepted until one
//!   ends: it waits in the system's listen queue, and is served when a slot frees (at the
//!   latest once the idle ones have timed out), rather than closed unanswered. The inbox
//!   thus never holds more than that many sockets, and keeps file descriptors for its store,
//!   its model connections and its tools' pipes.
//! - An accept that fails (out of file descriptors, say) is retried after a pause
//!   ([`reins_mcp::accept_connection`], shared with the MCP server); it never ends the inbox.
//!
//! A stop lets the requests being answered finish, at most [`STOP_GRACE`]: a client that
//! sent half a request and then nothing would otherwise keep the inbox from stopping.

use super::write_deadline::WriteDeadline;
use crate::interrupt::StopSignal;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

/// How long, after a stop, the requests still open may take to finish.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// How long a request's head may take to arrive, and a connection may stay idle between
/// requests. The pages' live part asks every two seconds, so an open page keeps its
/// connection.
const HEADER_TIMEOUT: Duration = Duration::from_secs(15);

/// Internal, for reins's own tests: [`HEADER_TIMEOUT`] in milliseconds, so that they need not
/// wait for it. Not a setting: it is not documented for users and may go.
const HEADER_TIMEOUT_ENV: &str = "REINS_INTERNAL_UI_HEADER_TIMEOUT_MS";

/// How long an answer may take to be written from its first byte to its last: a person's
/// browser takes even the largest page (a few megabytes) well within it.
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);

/// Internal, for reins's own tests, like [`HEADER_TIMEOUT_ENV`]: [`WRITE_TIMEOUT`] in
/// milliseconds.
const WRITE_TIMEOUT_ENV: &str = "REINS_INTERNAL_UI_WRITE_TIMEOUT_MS";

/// The most connections open at once, well under the usual limit of 1024 file descriptors.
const MAX_CONNECTIONS: usize = 256;

/// Serves `router` on `listener` until `stop`; then waits for the requests being answered, at
/// most [`STOP_GRACE`], and drops the rest.
pub(super) async fn serve_until_stopped(
    listener: TcpListener,
    router: Router,
    stop: &StopSignal,
) -> Result<(), String> {
    let header_timeout = internal_timeout(HEADER_TIMEOUT, HEADER_TIMEOUT_ENV)?;
    let write_timeout = internal_timeout(WRITE_TIMEOUT, WRITE_TIMEOUT_ENV)?;
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut connections = JoinSet::new();
    loop {
        // A slot first: at the cap, the next connection waits unaccepted.
        let slot = tokio::select! {
            () = stop.stopped() => break,
            slot = slots.clone().acquire_owned() => slot,
        };
        let Ok(slot) = slot else { break };
        let (stream, _peer) = tokio::select! {
            () = stop.stopped() => break,
            accepted = reins_mcp::accept_connection(&listener) => accepted,
        };
        while connections.try_join_next().is_some() {}
        connections.spawn(serve_connection(
            stream,
            slot,
            router.clone(),
            Deadlines {
                header: header_timeout,
                write: write_timeout,
            },
            stop.clone(),
        ));
    }
    // No connection is accepted any more; those open are told to close once their request
    // is answered (each saw the stop too).
    drop(listener);
    let finished = async { while connections.join_next().await.is_some() {} };
    // Past the grace, dropping the set ends the connections still open.
    let _ = tokio::time::timeout(STOP_GRACE, finished).await;
    Ok(())
}

/// `default`, or the internal variable `env`'s number of milliseconds when it is set (for
/// reins's own tests: see [`HEADER_TIMEOUT_ENV`]).
pub(super) fn internal_timeout(default: Duration, env: &str) -> Result<Duration, String> {
    match std::env::var(env) {
        Err(_) => Ok(default),
        Ok(millis) => millis
            .trim()
            .parse()
            .map(Duration::from_millis)
            .map_err(|_| format!("{env} is not a number of milliseconds")),
    }
}

/// A connection's deadlines: for a request's head, and for an answer to be written.
#[derive(Clone, Copy)]
struct Deadlines {
    header: Duration,
    write: Duration,
}

/// Serves one connection until it ends, holding `_slot` meanwhile; at `stop`, it ends once
/// the request being answered is.
async fn serve_connection(
    stream: TcpStream,
    _slot: OwnedSemaphorePermit,
    router: Router,
    deadlines: Deadlines,
    stop: StopSignal,
) {
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(deadlines.header);
    let stream = WriteDeadline::new(stream, deadlines.write);
    let connection =
        builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(router));
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        // Closed by the client, timed out, or broken: nothing more to do with it.
        _ended = connection.as_mut() => return,
        () = stop.stopped() => connection.as_mut().graceful_shutdown(),
    }
    let _ended = connection.await;
}
