//! A run dropped before its end (a timeout, a `select!`, an aborted task, a dropped stream):
//! its spans say it was cancelled, with what it had done, rather than end as if it succeeded.

use crate::harness::{NamedModel, Recorded, attr, attr_i64, attr_str, names, span};
use futures::StreamExt;
use opentelemetry::trace::Status;
use opentelemetry_sdk::trace::SpanData;
use reins::agent::{Agent, AgentBuilder};
use reins::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, Usage,
};
use reins::testing::Turn;
use reins::tool::tool_fn;
use reins_otel::Telemetry;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::future::IntoFuture;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Notify;

/// A model that answers its script's first `answers` calls, then says it was called
/// (`stalled`) and never answers: the run is cut off mid-call when its future is dropped.
#[derive(Clone)]
struct Stalling {
    script: NamedModel,
    answers: usize,
    calls: Arc<AtomicUsize>,
    stalled: Arc<Notify>,
}

impl CompletionModel for Stalling {
    async fn completion(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        if self.calls.fetch_add(1, Ordering::SeqCst) < self.answers {
            return self.script.completion(request).await;
        }
        self.stalled.notify_one();
        std::future::pending().await
    }

    fn model_name(&self) -> Option<&str> {
        self.script.model_name()
    }

    fn provider_name(&self) -> Option<&str> {
        self.script.provider_name()
    }
}

/// An agent whose model calls `lookup` (11 tokens in, 7 out), then stalls on its second call.
fn stalling_on_second_call(stalled: &Arc<Notify>) -> Agent {
    let model = Stalling {
        script: NamedModel::new([
            Turn::tool_call("lookup", json!({"city": "Paris"})).usage(Usage::new(11, 7))
        ]),
        answers: 1,
        calls: Arc::default(),
        stalled: Arc::clone(stalled),
    };
    let lookup = tool_fn("lookup", "Looks up.", |_: Value| async move {
        Ok::<_, Infallible>("sunny")
    });
    AgentBuilder::new(model).tool(lookup).build()
}

/// Whether a trace viewer shows `span` as failed.
fn failed(span: &SpanData) -> bool {
    matches!(span.status, Status::Error { .. })
}

/// Checks that `span` says it was cut off: `cancelled`, and failed.
fn assert_cancelled(span: &SpanData) {
    assert_eq!(attr_str(span, "error.type"), "cancelled", "{}", span.name);
    assert_eq!(span.status, Status::error("cancelled"), "{}", span.name);
}

/// Checks the spans of a run cut off in its second model call: the run and that call were
/// cancelled, the first call and the tool call finished, and the run kept their usage.
fn assert_cut_off_in_second_call(spans: &[SpanData]) {
    assert_eq!(
        names(spans),
        [
            "chat gpt-test",
            "execute_tool lookup",
            "chat gpt-test",
            "invoke_agent"
        ]
    );
    let run = span(spans, "invoke_agent");
    assert_cancelled(run);
    assert_eq!(attr_str(run, "reins.run.status"), "cancelled");
    assert_eq!(attr_i64(run, "gen_ai.usage.input_tokens"), 11);
    assert_eq!(attr_i64(run, "gen_ai.usage.output_tokens"), 7);
    assert_eq!(attr_i64(run, "reins.turn"), 2);
    assert_cancelled(&spans[2]);
    assert_eq!(attr(&spans[0], "error.type"), None);
    assert!(!failed(&spans[0]));
    assert!(!failed(span(spans, "execute_tool lookup")));
}

#[tokio::test]
async fn a_run_dropped_mid_call_is_cancelled_with_the_usage_of_its_finished_turns() {
    let recorded = Recorded::start(Telemetry::new());
    let stalled = Arc::new(Notify::new());
    let run = stalling_on_second_call(&stalled)
        .prompt("Weather?")
        .into_future();
    // As a `select!` or a timeout drops a run that lost the race.
    tokio::select! {
        _ = run => panic!("the model never answers its second call"),
        () = stalled.notified() => {}
    }
    assert_cut_off_in_second_call(&recorded.spans());
}

#[tokio::test]
async fn a_dropped_stream_cancels_its_run_in_the_trace() {
    let recorded = Recorded::start(Telemetry::new());
    let stalled = Arc::new(Notify::new());
    let mut stream = stalling_on_second_call(&stalled)
        .prompt("Weather?")
        .stream();
    loop {
        tokio::select! {
            item = stream.next() => assert!(item.is_some(), "the model never answers"),
            () = stalled.notified() => break,
        }
    }
    drop(stream);
    assert_cut_off_in_second_call(&recorded.spans());
}

/// A `lookup` tool that says it runs (`running`) and never answers.
fn hanging_lookup(running: &Arc<Notify>) -> impl reins::tool::Tool {
    let running = Arc::clone(running);
    tool_fn("lookup", "Never answers.", move |_: Value| {
        let running = Arc::clone(&running);
        async move {
            running.notify_one();
            std::future::pending::<()>().await;
            Ok::<_, Infallible>("never")
        }
    })
}

#[tokio::test]
async fn a_run_dropped_mid_tool_call_cancels_the_tool_call_and_the_run() {
    let recorded = Recorded::start(Telemetry::new());
    let stalled = Arc::new(Notify::new());
    let model = NamedModel::new([
        Turn::tool_call("lookup", json!({"city": "Paris"})).usage(Usage::new(11, 7))
    ]);
    let run = AgentBuilder::new(model)
        .tool(hanging_lookup(&stalled))
        .build()
        .prompt("Weather?")
        .into_future();
    tokio::select! {
        _ = run => panic!("the tool never answers"),
        () = stalled.notified() => {}
    }
    let spans = recorded.spans();
    assert_eq!(
        names(&spans),
        ["chat gpt-test", "execute_tool lookup", "invoke_agent"]
    );
    assert_cancelled(span(&spans, "execute_tool lookup"));
    assert!(!failed(span(&spans, "chat gpt-test")));
    let run = span(&spans, "invoke_agent");
    assert_cancelled(run);
    assert_eq!(attr_str(run, "reins.run.status"), "cancelled");
    assert_eq!(attr_i64(run, "gen_ai.usage.input_tokens"), 11);
    assert_eq!(attr_i64(run, "reins.turn"), 1);
}

#[tokio::test]
async fn concurrent_tool_calls_cut_off_are_each_cancelled() {
    let recorded = Recorded::start(Telemetry::new());
    let stalled = Arc::new(Notify::new());
    let model = NamedModel::new([Turn::tool_calls([
        ("lookup", json!({"city": "Paris"})),
        ("lookup", json!({"city": "Rome"})),
    ])]);
    let run = AgentBuilder::new(model)
        .tool(hanging_lookup(&stalled))
        .build()
        .prompt("Weather?")
        .tool_concurrency(2)
        .into_future();
    tokio::select! {
        _ = run => panic!("the tool never answers"),
        () = stalled.notified() => {}
    }
    let spans = recorded.spans();
    let tools: Vec<&SpanData> = spans
        .iter()
        .filter(|span| span.name == "execute_tool lookup")
        .collect();
    assert_eq!(tools.len(), 2, "{:?}", names(&spans));
    for tool in tools {
        assert_cancelled(tool);
    }
    assert_cancelled(span(&spans, "invoke_agent"));
}
