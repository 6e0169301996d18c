//! Where the test servers are, and how to start them.

use reins::tool::{ToolCallContext, ToolExecution, ToolSet};
use reins_mcp::{McpClient, McpServer};
pub use reins_test_servers::{EverythingHttp, everything_script, free_port, npm_modules};
use serde_json::Value;
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

/// Runs the MCP Inspector in CLI mode (`@modelcontextprotocol/inspector` in `.tools/npm`)
/// with `args`, and returns the JSON it prints.
pub async fn inspector(args: &[&str]) -> serde_json::Value {
    let cli = npm_modules().join("@modelcontextprotocol/inspector/cli/build/cli.js");
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
    let script = npm_modules().join("@modelcontextprotocol/server-filesystem/dist/index.js");
    assert!(
        script.is_file(),
        "@modelcontextprotocol/server-filesystem is not installed: run \
         scripts/install/mcp.sh at the workspace root"
    );
    McpServer::stdio("node", [script.into_os_string(), allowed.into()]).name("filesystem")
}

/// `node tests/it/fixtures/<script>`: a fixture server written on the MCP TypeScript SDK,
/// with `NODE_PATH` at the workspace's `.tools/npm` (where the SDK is installed beside
/// server-everything), named `name`.
pub fn sdk_fixture_server(script: &str, name: &str) -> McpServer {
    let node_modules = npm_modules();
    assert!(
        node_modules.join("@modelcontextprotocol/sdk").is_dir(),
        "the MCP TypeScript SDK is not installed: run scripts/install/mcp.sh (it comes with \
         @modelcontextprotocol/server-everything)"
    );
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/fixtures")
        .join(script);
    McpServer::stdio("node", [script.into_os_string()])
        .env("NODE_PATH", node_modules)
        .name(name)
}

/// A fresh, empty directory under the test target's temporary directory.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("reins-mcp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("could not create a temporary directory");
    dir
}

/// `name` called with `args` through `set`, as a run would call it (the call's id is the
/// tool's name).
pub async fn call(set: &ToolSet, name: &str, args: Value) -> ToolExecution {
    set.call(name, &args, ToolCallContext::new("run", name, "p"))
        .await
}
