//! The servers the workspace's tests talk to, started on loopback ports and stopped when
//! dropped: [`FakeLlm`] (the `fakellm` mock model server from PyPI), [`EverythingHttp`]
//! (`@modelcontextprotocol/server-everything` from npm over streamable HTTP) and
//! [`RestateServer`] (`restate-server` from npm, for Restate-backed runs), and a terminal
//! to type into, [`Tmux`]. Each fails the test with the install command when its program is
//! missing (`scripts/test.sh` installs them all); and [`ask_every_subscriber`], for tests
//! that record tracing. One place for what several crates' tests need.
//!
//! Each server keeps its files, and its temporary files (its `TMPDIR`), in a [`ScratchDir`] of
//! its own, removed when the server is dropped — also when the test fails — so that a run of
//! the tests leaves nothing in the system's temporary directory.
#![deny(missing_docs)]

mod everything;
mod fakellm;
mod restate;
mod scratch;
mod subscribers;
mod tmux;

pub use everything::{EverythingHttp, everything_script, npm_modules};
pub use fakellm::FakeLlm;
pub use restate::{RestateServer, restate_server_binary};
pub use scratch::{ScratchDir, last_lines};
pub use subscribers::ask_every_subscriber;
pub use tmux::Tmux;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A loopback port nothing listens on right now, never one handed out before in this
/// process.
///
/// Ports are taken in turn from a range below the system's ephemeral ports, starting at a
/// place that depends on the process id. The system's own choice (`bind` to port 0) can give
/// a port just released to the next caller: two tests running at once could both start a
/// server on it, and the one that failed to bind would have the other test's server answer in
/// its place (its readiness check reaches the other server).
pub fn free_port() -> u16 {
    const FIRST: u32 = 20_000;
    const COUNT: u32 = 12_000;
    static HANDED_OUT: AtomicU32 = AtomicU32::new(0);
    let start = std::process::id() % COUNT;
    loop {
        let turn = HANDED_OUT.fetch_add(1, Ordering::Relaxed);
        assert!(
            turn < COUNT,
            "no free loopback port left in {FIRST}..{}",
            FIRST + COUNT
        );
        let port = u16::try_from(FIRST + (start + turn) % COUNT).expect("the range fits a port");
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// Waits until something accepts connections on the loopback `port`; fails the test after
/// `limit`, naming `what`.
pub fn wait_listening(port: u16, limit: Duration, what: &str) {
    let deadline = Instant::now() + limit;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{what} did not listen on 127.0.0.1:{port} within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
