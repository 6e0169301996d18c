//! Servers that fail to start, die mid-run, and processes that must not outlive the client.

use crate::servers::{call, connect, everything_server, python, time_server};
use reins::tool::{ToolFailure, ToolOutcome, ToolSet};
use reins_mcp::{McpError, McpServer};
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_missing_command_is_a_spawn_error_naming_the_server() {
    let error = McpServer::stdio("reins-no-such-mcp-server", ["--stdio"])
        .name("ghost")
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Spawn { .. }), "{error:?}");
    assert_eq!(error.server(), "ghost");
    let text = error.to_string();
    assert!(text.contains("MCP server `ghost`"), "{text}");
    assert!(text.contains("reins-no-such-mcp-server"), "{text}");
}

#[tokio::test]
async fn a_server_that_exits_at_once_fails_the_handshake_with_its_stderr() {
    let error = McpServer::stdio(
        python(),
        [
            "-c",
            "import sys; sys.stderr.write('no config found\\n'); sys.exit(3)",
        ],
    )
    .name("broken")
    .connect()
    .await
    .unwrap_err();
    assert!(matches!(error, McpError::Handshake { .. }), "{error:?}");
    let text = error.to_string();
    assert!(
        text.contains("MCP server `broken` failed to start"),
        "{text}"
    );
    assert!(text.contains("no config found"), "{text}");
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_at_connect() {
    let error = McpServer::stdio("sleep", ["30"])
        .name("mute")
        .connect_timeout(Duration::from_millis(300))
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Timeout { .. }), "{error:?}");
    assert!(error.to_string().contains("`mute`"), "{error}");
}

#[tokio::test]
async fn the_default_name_is_the_command_line() {
    let error = McpServer::stdio("reins-no-such-mcp-server", ["a", "b"])
        .connect()
        .await
        .unwrap_err();
    assert_eq!(error.server(), "reins-no-such-mcp-server a b");
}

fn kill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Whether the process is gone (or a zombie waiting to be reaped).
fn is_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

async fn wait_gone(pid: u32) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if is_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn a_server_killed_mid_run_fails_the_next_call_clearly() {
    let client = connect(time_server().max_restarts(0)).await;
    let mut set = ToolSet::new();
    for tool in client.tools().await.unwrap() {
        set.add(tool);
    }
    let args = json!({"timezone": "UTC"});
    let first = call(&set, "get_current_time", args.clone()).await;
    assert!(first.outcome.is_success(), "{:?}", first.output);

    let pid = client.process_id().unwrap();
    kill(pid);
    assert!(wait_gone(pid).await);

    let second = call(&set, "get_current_time", args.clone()).await;
    let ToolOutcome::Failed(ToolFailure::Execution { message }) = &second.outcome else {
        panic!("expected an execution failure, got {:?}", second.outcome);
    };
    assert!(
        message.contains("MCP server `time` is no longer connected"),
        "{message}"
    );
    let error = client
        .call_tool("get_current_time", args, None)
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Disconnected { .. }), "{error:?}");
}

#[tokio::test]
async fn the_process_dies_with_the_client_and_its_tools() {
    let client = connect(everything_server()).await;
    let pid = client.process_id().unwrap();
    let tools = client.tools().await.unwrap();
    drop(client);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!is_gone(pid), "the tools still hold the connection");
    drop(tools);
    assert!(wait_gone(pid).await, "process {pid} outlived its client");
}

#[tokio::test]
async fn close_kills_the_process_and_later_calls_fail() {
    let client = connect(everything_server()).await;
    let pid = client.process_id().unwrap();
    let tools = client.tools().await.unwrap();
    client.close();
    assert!(wait_gone(pid).await, "process {pid} survived close()");
    let mut set = ToolSet::new();
    set.add(tools.get("echo").unwrap().clone());
    let execution = call(&set, "echo", json!({"message": "x"})).await;
    assert!(
        execution.output.render().contains("is no longer connected"),
        "{:?}",
        execution.output
    );
}

#[tokio::test]
async fn a_crashed_server_is_started_again_on_the_next_call_within_the_bound() {
    let client = connect(time_server().max_restarts(1)).await;
    let args = json!({"timezone": "UTC"});
    let first_pid = client.process_id().unwrap();
    kill(first_pid);
    assert!(wait_gone(first_pid).await);
    // The call that finds it dead may fail or restart it, depending on whether the client
    // saw the exit yet; the one after it runs on a new process.
    let _ = client
        .call_tool("get_current_time", args.clone(), None)
        .await;
    let answer = client
        .call_tool("get_current_time", args.clone(), None)
        .await
        .unwrap();
    assert!(answer.text().contains("UTC"), "{answer:?}");
    assert_eq!(client.restarts(), 1);
    let second_pid = client.process_id().unwrap();
    assert_ne!(first_pid, second_pid);
    assert!(
        client.tools_changed(),
        "a restarted server's tools should be listed again"
    );

    // The bound is reached: the next crash is final.
    kill(second_pid);
    assert!(wait_gone(second_pid).await);
    let _ = client
        .call_tool("get_current_time", args.clone(), None)
        .await;
    let error = client
        .call_tool("get_current_time", args, None)
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Disconnected { .. }), "{error:?}");
    assert_eq!(client.restarts(), 1);
}
