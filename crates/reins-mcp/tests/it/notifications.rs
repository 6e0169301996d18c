//! What a server sends unasked reaches `tracing`: server-everything's log messages and the
//! progress of its long-running operation.

use crate::servers::{connect, everything_server};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Keeps `target: field=value ...` for every event of a `reins_mcp` target.
#[derive(Clone, Default)]
pub(crate) struct Captured(pub(crate) Arc<Mutex<Vec<String>>>);

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl Subscriber for Captured {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("reins_mcp")
    }
    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _span: &Id, _values: &Record<'_>) {}
    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields(event.metadata().target().to_owned());
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }
    fn enter(&self, _span: &Id) {}
    fn exit(&self, _span: &Id) {}
}

impl Captured {
    pub(crate) async fn wait_for(&self, what: impl Fn(&str) -> bool) -> bool {
        for _ in 0..400 {
            if self.0.lock().unwrap().iter().any(|line| what(line)) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        false
    }
}

// The test's runtime runs every task on this thread, so the thread's default subscriber
// sees the client's notification handler.
#[tokio::test(flavor = "current_thread")]
async fn server_logs_and_progress_go_to_tracing() {
    let captured = Captured::default();
    reins_test_servers::ask_every_subscriber();
    let _guard = tracing::subscriber::set_default(captured.clone());
    let client = connect(everything_server()).await;

    client
        .call_tool("toggle-simulated-logging", json!({}), None)
        .await
        .unwrap();
    assert!(
        captured
            .wait_for(|line| line.starts_with("reins_mcp::server_log")
                && line.contains("server=everything")
                && line.contains("message"))
            .await,
        "no server log reached tracing: {:#?}",
        captured.0.lock().unwrap()
    );

    let done = client
        .call_tool(
            "trigger-long-running-operation",
            json!({"duration": 0.3, "steps": 3}),
            None,
        )
        .await
        .unwrap();
    assert!(!done.is_error, "{done:?}");
    let lines = captured.0.lock().unwrap().clone();
    let progress: Vec<&String> = lines
        .iter()
        .filter(|line| line.starts_with("reins_mcp::progress"))
        .collect();
    assert!(
        progress
            .iter()
            .any(|line| line.contains("progress=3.0") && line.contains("total=3.0")),
        "{progress:#?}"
    );
}

// A log or progress message of megabytes, with terminal control sequences, reaches the logs
// cut and as text, like the server's stderr lines: the server cannot fill the user's log
// files or drive their terminal.
#[tokio::test(flavor = "current_thread")]
async fn a_server_s_huge_log_and_progress_messages_are_cut_and_shown_as_text() {
    let captured = Captured::default();
    reins_test_servers::ask_every_subscriber();
    let _guard = tracing::subscriber::set_default(captured.clone());
    let client = connect(crate::hostile::hostile_server("loud-log")).await;
    let result = client.call_tool("echo", json!({}), None).await.unwrap();
    assert_eq!(result.text(), "logged");
    let both = captured
        .wait_for(|line| line.starts_with("reins_mcp::server_log"))
        .await
        && captured
            .wait_for(|line| line.starts_with("reins_mcp::progress"))
            .await;
    let lines = captured.0.lock().unwrap().clone();
    assert!(
        both,
        "{:?}",
        lines.iter().map(|line| line.len()).collect::<Vec<_>>()
    );
    for line in lines.iter().filter(|line| {
        line.starts_with("reins_mcp::server_log") || line.starts_with("reins_mcp::progress")
    }) {
        assert!(line.len() < 16 * 1024, "a line of {} bytes", line.len());
        assert!(!line.contains('\u{1b}'), "a raw escape: {:?}", &line[..200]);
    }
}
