//! `@modelcontextprotocol/server-everything`, installed by scripts/install/mcp.sh into the
//! workspace's `.tools/npm`.

use crate::{free_port, wait_listening};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The workspace's `.tools/npm/node_modules` (where scripts/install/mcp.sh puts the MCP
/// servers, the Inspector and the TypeScript SDK they depend on).
pub fn npm_modules() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.tools/npm/node_modules")
}

/// The entry point of server-everything; fails the test with the install command when it or
/// `node` is missing.
pub fn everything_script() -> PathBuf {
    let script = npm_modules().join("@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        script.is_file(),
        "@modelcontextprotocol/server-everything is not installed: run scripts/install/mcp.sh \
         at the workspace root (scripts/test.sh does)"
    );
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|out| out.status.success()),
        "node is not installed: install Node.js (apt-get install nodejs npm) to run \
         @modelcontextprotocol/server-everything"
    );
    script
}

/// server-everything in its streamable HTTP mode on a free loopback port, killed on drop.
pub struct EverythingHttp {
    child: Child,
    /// The port it listens on.
    pub port: u16,
}

impl EverythingHttp {
    /// Starts it and waits until it listens (at most 30 s).
    pub fn start() -> EverythingHttp {
        let script = everything_script();
        let port = free_port();
        let child = Command::new("node")
            .arg(script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("could not start node");
        let server = EverythingHttp { child, port };
        wait_listening(port, Duration::from_secs(30), "server-everything");
        server
    }

    /// Its MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for EverythingHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
