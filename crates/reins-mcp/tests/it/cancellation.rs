//! A tool call in flight that the client gives up — its run stopped (the run's future
//! dropped), or the tool's timeout past — is cancelled on the server: it is sent
//! `notifications/cancelled` naming the request id of that `tools/call`
//! (`recording_server.py` records every message it receives).

use crate::hostile_handshake::scratch_file;
use crate::servers::connect;
use crate::traced_secrets::recording_server;
use reins::agent::AgentBuilder;
use reins::testing::{ScriptedModel, Turn};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// The messages the server recorded in `file`, in order.
pub(crate) fn received(file: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The first recorded message that `matches`, waiting for it (up to 20 s).
async fn first_received(file: &Path, matches: impl Fn(&Value) -> bool) -> Option<Value> {
    for _ in 0..800 {
        if let Some(message) = received(file).into_iter().find(|m| matches(m)) {
            return Some(message);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    None
}

fn is_call_of(message: &Value, tool: &str) -> bool {
    message["method"] == "tools/call" && message["params"]["name"] == tool
}

/// The `notifications/cancelled` sent for the `tools/call` of `wait`, once it is recorded:
/// its request id must be that call's.
async fn cancelled_names_the_call(file: &Path) {
    let call = first_received(file, |m| is_call_of(m, "wait")).await;
    let call = call.expect("the call was never sent");
    let cancelled = first_received(file, |m| m["method"] == "notifications/cancelled").await;
    let Some(cancelled) = cancelled else {
        panic!("no notifications/cancelled: {:#?}", received(file));
    };
    assert_eq!(cancelled["params"]["requestId"], call["id"], "{cancelled}");
    assert!(call["id"].is_number() || call["id"].is_string(), "{call}");
}

#[tokio::test]
async fn a_run_stopped_during_a_call_cancels_that_call_on_the_server() {
    let record = scratch_file("cancelled-run");
    let client = connect(recording_server(&[(
        "RECORD_FILE",
        record.to_str().unwrap(),
    )]))
    .await;
    let tools = client.tools().await.unwrap();
    let model = ScriptedModel::new([
        Turn::tool_call("wait", json!({})),
        Turn::text("never reached"),
    ]);
    let agent = AgentBuilder::new(model).tools(tools).build();
    // The run is stopped (its future dropped) once the server has the call.
    tokio::select! {
        answer = agent.prompt("wait") => panic!("the run ended: {answer:?}"),
        call = first_received(&record, |m| is_call_of(m, "wait")) => {
            assert!(call.is_some(), "the call was never sent");
        }
    }
    cancelled_names_the_call(&record).await;
    // The connection goes on.
    assert_eq!(client.tools().await.unwrap().len(), 3);
    let _ = std::fs::remove_file(&record);
}

#[tokio::test]
async fn a_call_past_its_timeout_is_cancelled_on_the_server() {
    let record = scratch_file("cancelled-timeout");
    let server = recording_server(&[("RECORD_FILE", record.to_str().unwrap())])
        .call_timeout(Duration::from_millis(500));
    let client = connect(server).await;
    let tools = client.tools().await.unwrap();
    let model = ScriptedModel::new([Turn::tool_call("wait", json!({})), Turn::text("gave up")]);
    let agent = AgentBuilder::new(model).tools(tools).build();
    assert_eq!(agent.prompt("wait").await.unwrap(), "gave up");
    cancelled_names_the_call(&record).await;
    let _ = std::fs::remove_file(&record);
}
