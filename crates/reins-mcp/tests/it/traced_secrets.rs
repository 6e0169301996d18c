//! A credential a server quotes back (in a message's `id`, an error's text, a log message,
//! its own name) reaches no `tracing` output at any level, under any target: rmcp's own
//! (which logs every message it is given, at TRACE) as well as reins-mcp's.

use crate::hostile_bounds::HANG_GUARD;
use crate::hostile_http::HostileHttp;
use crate::servers::{connect, python};
use reins_mcp::McpServer;
use serde_json::json;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Every event and span of every target, at every level, as `target: field=value ...`.
#[derive(Clone, Default)]
pub(crate) struct EveryTarget(pub(crate) Arc<Mutex<Vec<String>>>);

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl EveryTarget {
    fn keep(&self, target: &str, record: impl FnOnce(&mut Fields)) {
        let mut fields = Fields(target.to_owned());
        record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }

    /// The lines that quote `secret`.
    pub(crate) fn quoting(&self, secret: &str) -> Vec<String> {
        let lines = self.0.lock().unwrap();
        lines
            .iter()
            .filter(|line| line.contains(secret))
            .cloned()
            .collect()
    }

    /// Whether anything of rmcp's was captured (the capture sees its target at all).
    fn saw_rmcp(&self) -> bool {
        self.0
            .lock()
            .unwrap()
            .iter()
            .any(|line| line.starts_with("rmcp"))
    }
}

impl Subscriber for EveryTarget {
    fn enabled(&self, _metadata: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        self.keep(span.metadata().target(), |fields| span.record(fields));
        Id::from_u64(1)
    }
    fn record(&self, _span: &Id, values: &Record<'_>) {
        self.keep("span", |fields| values.record(fields));
    }
    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}
    fn event(&self, event: &Event<'_>) {
        self.keep(event.metadata().target(), |fields| event.record(fields));
    }
    fn enter(&self, _span: &Id) {}
    fn exit(&self, _span: &Id) {}
}

/// `recording_server.py`, its environment holding `SERVICE_TOKEN`.
pub(crate) fn recording_server(env: &[(&str, &str)]) -> McpServer {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/it/fixtures/recording_server.py"
    );
    let mut server = McpServer::stdio(python(), [script]).name("recording");
    for (name, value) in env {
        server = server.env(name, value);
    }
    server
}

// The test's runtime runs every task on this thread, so the thread's default subscriber
// sees rmcp's service and the transport.
#[tokio::test(flavor = "current_thread")]
async fn a_credential_a_server_quotes_in_ids_and_errors_is_traced_nowhere_over_stdio() {
    const TOKEN: &str = "tok-stdio-0123456789";
    let captured = EveryTarget::default();
    let _guard = tracing::subscriber::set_default(captured.clone());
    let server = recording_server(&[("SERVICE_TOKEN", TOKEN)]).call_timeout(HANG_GUARD);
    let client = connect(server).await;
    let error = client
        .call_tool("quote", json!({}), None)
        .await
        .expect_err("the server answers with an error");
    assert!(!format!("{error} {error:?}").contains(TOKEN), "{error:?}");
    // The client is still there: the server's ping was answered, the stray answer ignored.
    client.tools().await.unwrap();
    assert!(captured.saw_rmcp(), "rmcp's events were not captured");
    assert_eq!(captured.quoting(TOKEN), Vec::<String>::new());
}

#[tokio::test(flavor = "current_thread")]
async fn a_bearer_token_a_server_quotes_is_traced_nowhere_over_http() {
    const TOKEN: &str = "tok-http-0123456789";
    // A JSON body, an event stream on the POST, and one on the GET.
    for flags in [&[][..], &["--sse"], &["--get"]] {
        let captured = EveryTarget::default();
        let _guard = tracing::subscriber::set_default(captured.clone());
        let server = HostileHttp::start_with("echo-auth", flags);
        let client = connect(server.server().bearer_token(TOKEN)).await;
        let result = client.call_tool("echo", json!({}), None).await.unwrap();
        assert_eq!(result.text(), "you sent Bearer [redacted]", "{flags:?}");
        assert!(captured.saw_rmcp(), "rmcp's events were not captured");
        assert_eq!(captured.quoting(TOKEN), Vec::<String>::new(), "{flags:?}");
    }
}
