//! What reaches a trace of a problem a run recovers from: a library's warning logged inside a
//! run's span (a tool source that fails to list its tools, its previous list kept) neither
//! fails the span nor exports the error's text, which may hold a server's words or a URL's
//! credentials. Nor does a caught panic's message (a tool source's), which is whatever the
//! user's code put in it.

use crate::harness::{NamedModel, Recorded, span};
use futures::future::BoxFuture;
use opentelemetry::trace::Status;
use reins::agent::AgentBuilder;
use reins::testing::Turn;
use reins::tool::{ToolSet, ToolSource};
use reins_otel::Telemetry;

const SECRET: &str = "tok-4f9a1c77e2b0";

/// A source that always says it changed and fails to list its tools, saying a URL with a
/// token in its error.
struct FailingSource;

impl ToolSource for FailingSource {
    fn current(&self) -> ToolSet {
        ToolSet::new()
    }

    fn changed(&self) -> bool {
        true
    }

    fn refresh(&self) -> BoxFuture<'_, Result<ToolSet, String>> {
        Box::pin(async {
            Err(format!(
                "listing failed: https://mcp.example/sse?token={SECRET}"
            ))
        })
    }
}

#[tokio::test]
async fn a_warning_the_run_recovers_from_neither_fails_its_span_nor_exports_its_text() {
    let recorded = Recorded::start(Telemetry::new());
    let answer = AgentBuilder::new(NamedModel::new([Turn::text("Done.")]))
        .tool_source(FailingSource)
        .build()
        .prompt("hi")
        .await
        .unwrap();
    assert_eq!(answer, "Done.");
    let spans = recorded.spans();
    let run = span(&spans, "invoke_agent");
    assert_eq!(run.status, Status::Unset, "the run completed");
    for span in &spans {
        let exported = format!("{:?} {:?} {:?}", span.attributes, span.events, span.status);
        assert!(!exported.contains(SECRET), "{}: {exported}", span.name);
    }
}

/// A source that panics saying whether it changed, or, when `in_refresh`, listing its tools,
/// its message holding a token.
struct PanickingSource {
    in_refresh: bool,
}

impl ToolSource for PanickingSource {
    fn current(&self) -> ToolSet {
        ToolSet::new()
    }

    fn changed(&self) -> bool {
        if !self.in_refresh {
            panic!("changed() broke on https://mcp.example/sse?token={SECRET}");
        }
        true
    }

    fn refresh(&self) -> BoxFuture<'_, Result<ToolSet, String>> {
        Box::pin(async { panic!("refresh() broke on https://mcp.example/sse?token={SECRET}") })
    }
}

#[tokio::test]
async fn a_panics_message_the_run_recovers_from_is_not_exported() {
    let recorded = Recorded::start(Telemetry::new());
    let answer = AgentBuilder::new(NamedModel::new([Turn::text("Done.")]))
        .tool_source(PanickingSource { in_refresh: false })
        .tool_source(PanickingSource { in_refresh: true })
        .build()
        .prompt("hi")
        .await
        .unwrap();
    assert_eq!(answer, "Done.");
    let spans = recorded.spans();
    assert_eq!(span(&spans, "invoke_agent").status, Status::Unset);
    for span in &spans {
        let exported = format!("{:?} {:?} {:?}", span.attributes, span.events, span.status);
        assert!(!exported.contains(SECRET), "{}: {exported}", span.name);
    }
}
