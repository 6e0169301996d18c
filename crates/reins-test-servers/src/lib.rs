//! The servers the workspace's tests talk to, started on loopback ports and stopped when
//! dropped: [`FakeLlm`] (the `fakellm` mock model server from PyPI), [`EverythingHttp`]
//! (`@modelcontextprotocol/server-everything` from npm over streamable HTTP) and
//! [`RestateServer`] (`restate-server` from npm, for Restate-backed runs). Each fails the
//! test with the install command when its program is missing (`scripts/test.sh` installs
//! them all). One place for what several crates' tests need.
#![deny(missing_docs)]

mod everything;
mod fakellm;
mod restate;

pub use everything::{EverythingHttp, everything_script, npm_modules};
pub use fakellm::FakeLlm;
pub use restate::{RestateServer, restate_server_binary};

use std::time::{Duration, Instant};

/// A loopback port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free loopback port")
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
