//! Where the test servers are, and how to start them.

use reins_mcp::{McpClient, McpServer};
use std::path::PathBuf;
use std::process::Command;

/// The Python interpreter that has `mcp-server-time` (`$PYTHON`, else `python3`).
pub fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

/// `python3 -m mcp_server_time`, after checking the package is installed.
pub fn time_server() -> McpServer {
    let python = python();
    let installed = Command::new(&python)
        .args(["-c", "import mcp_server_time"])
        .output()
        .is_ok_and(|out| out.status.success());
    assert!(
        installed,
        "mcp-server-time is not installed for `{python}`: run \
         `{python} -m pip install mcp-server-time` (scripts/test.sh does)"
    );
    McpServer::stdio(python, ["-m", "mcp_server_time", "--local-timezone", "UTC"]).name("time")
}

/// The entry point of `@modelcontextprotocol/server-everything` in the workspace's `.tools`.
pub fn everything_script() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script =
        root.join(".tools/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        script.is_file(),
        "@modelcontextprotocol/server-everything is not installed: run \
         `npm install --prefix .tools/npm @modelcontextprotocol/server-everything` at the \
         workspace root (scripts/test.sh does)"
    );
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|out| out.status.success()),
        "node is not installed: install Node.js (apt-get install nodejs npm) to run \
         @modelcontextprotocol/server-everything"
    );
    script
}

/// `node .../server-everything/dist/index.js stdio`.
pub fn everything_server() -> McpServer {
    McpServer::stdio(
        "node",
        [everything_script().into_os_string(), "stdio".into()],
    )
    .name("everything")
}

pub async fn connect(server: McpServer) -> McpClient {
    match server.connect().await {
        Ok(client) => client,
        Err(error) => panic!("could not connect: {error}"),
    }
}

/// `server-everything` in its streamable HTTP mode on a free loopback port, killed on drop.
pub struct EverythingHttp {
    child: std::process::Child,
    pub port: u16,
}

impl EverythingHttp {
    pub async fn start() -> Self {
        let script = everything_script();
        let port = free_port();
        let child = Command::new("node")
            .arg(script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("could not start node");
        let server = EverythingHttp { child, port };
        wait_listening(port).await;
        server
    }

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

/// A loopback port nothing listens on right now.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("no free loopback port");
    listener
        .local_addr()
        .expect("bound listener has an address")
        .port()
}

/// Waits until something accepts connections on the loopback `port` (at most 30 s).
pub async fn wait_listening(port: u16) {
    for _ in 0..600 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("nothing listens on 127.0.0.1:{port} after 30 s");
}

/// Runs the MCP Inspector in CLI mode (`@modelcontextprotocol/inspector` in `.tools/npm`)
/// with `args`, and returns the JSON it prints.
pub async fn inspector(args: &[&str]) -> serde_json::Value {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cli = root.join(".tools/npm/node_modules/@modelcontextprotocol/inspector/cli/build/cli.js");
    assert!(
        cli.is_file(),
        "@modelcontextprotocol/inspector is not installed: run scripts/install/mcp.sh at the \
         workspace root"
    );
    let output = tokio::process::Command::new("node")
        .arg(cli)
        .arg("--cli")
        .args(args)
        .kill_on_drop(true)
        .output()
        .await
        .expect("could not run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the Inspector failed ({}): {stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("not JSON ({error}): {stdout}"))
}

/// `node .../server-filesystem/dist/index.js <allowed>`: the server may touch `allowed`.
pub fn filesystem_server(allowed: &std::path::Path) -> McpServer {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script =
        root.join(".tools/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    assert!(
        script.is_file(),
        "@modelcontextprotocol/server-filesystem is not installed: run \
         scripts/install/mcp.sh at the workspace root"
    );
    McpServer::stdio("node", [script.into_os_string(), allowed.into()]).name("filesystem")
}

/// A fresh, empty directory under the test target's temporary directory.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("reins-mcp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("could not create a temporary directory");
    dir
}
