//! A durable run cut off mid-run (its process died: its `invoke_agent` span never ended, so it
//! was never exported) and resumed from its store starts a trace of its own, linked to the
//! span it would have continued: a child of that span would hang under a parent no backend
//! received. A later resume of the run continues the new trace.

use crate::harness::{NamedModel, Recorded, attr, attr_str, span};
use opentelemetry::Value as OtelValue;
use opentelemetry::trace::SpanId;
use reins::agent::*;
use reins::store::{MemoryStore, RunStore};
use reins::testing::Turn;
use reins::tool::{RetrySafety, tool_fn};
use reins_otel::Telemetry;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::future::IntoFuture;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::Notify;

/// Bookings wait for a person's approval.
struct ApproveBookings;
impl AgentHook for ApproveBookings {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.tool_name() {
            Some("book") => DispatchAction::suspend("bookings need approval"),
            _ => DispatchAction::proceed(),
        }
    }
}

/// An agent whose first weather lookup never returns (it tells `started` when it begins);
/// lookups are safe to run again.
fn agent(model: NamedModel, started: Arc<Notify>) -> Agent {
    let hung = Arc::new(AtomicBool::new(false));
    let weather = tool_fn("weather", "Today's weather.", move |_: Value| {
        let (hung, started) = (Arc::clone(&hung), Arc::clone(&started));
        async move {
            if !hung.swap(true, Ordering::SeqCst) {
                started.notify_one();
                std::future::pending::<()>().await;
            }
            Ok::<_, Infallible>("rainy")
        }
    })
    .retry_safety(RetrySafety::Idempotent);
    AgentBuilder::new(model)
        .name("planner")
        .tool(weather)
        .tool(tool_fn("book", "Books a room.", |_: Value| async move {
            Ok::<_, Infallible>("booked")
        }))
        .add_hook(ApproveBookings)
        .build()
}

/// A span's context as a run stores it (W3C `traceparent`).
fn traceparent(trace_id: impl std::fmt::Display, span_id: SpanId) -> String {
    format!("00-{trace_id}-{span_id}-01")
}

#[tokio::test]
async fn a_run_resumed_after_its_process_died_starts_a_trace_linked_to_the_one_it_started_in() {
    let model = NamedModel::new([
        Turn::tool_call("weather", json!({"city": "Porto"})),
        Turn::tool_call("book", json!({"hotel": "Ribeira"})),
        Turn::text("Booked the Ribeira."),
    ]);
    let store = MemoryStore::new();
    let started = Arc::new(Notify::new());
    let agent = agent(model, Arc::clone(&started));

    // The first half stops while its tool runs, its future never polled again nor dropped: as
    // in a process killed then, no span of it ends after, and its lease is not given back.
    let first = Recorded::start(Telemetry::new());
    let mut run = Box::pin(
        agent
            .prompt("Check Porto's weather, then book the Ribeira.")
            .run_id("run-c")
            .worker("dead")
            .durable(store.clone())
            .into_future(),
    );
    tokio::select! {
        ended = &mut run => panic!("the run was to hang in its tool: {ended:?}"),
        () = started.notified() => {}
    }
    std::mem::forget(run);
    let first_spans = first.spans();
    drop(first);
    let chat = span(&first_spans, "chat gpt-test");
    assert_eq!(first_spans.len(), 1, "only the model call ended");
    let stored = store.load("run-c").await.unwrap();
    assert_eq!(stored.status, RunStatus::Running);
    // The context stored is the run's span's, which never ended: the model call's parent.
    let cut_off = traceparent(chat.span_context.trace_id(), chat.parent_span_id);
    assert_eq!(stored.trace_context.as_deref(), Some(cut_off.as_str()));

    // Taken over from the dead worker, and resumed under a new tracer provider (as in the
    // process that takes over): it runs the lookup again and suspends for the booking.
    let taken = store
        .claim_from("run-c", "supervisor", "dead")
        .await
        .unwrap();
    store
        .checkpoint(&taken.lease, &taken.state, &[], true)
        .await
        .unwrap();
    let second = Recorded::start(Telemetry::new());
    let error = agent
        .resume_stored(store.clone(), "run-c")
        .await
        .unwrap_err();
    assert!(matches!(error, PromptError::Suspended { .. }), "{error:?}");
    let second_spans = second.spans();
    drop(second);
    let resumed = span(&second_spans, "invoke_agent planner");
    assert_eq!(
        resumed.parent_span_id,
        SpanId::INVALID,
        "the root of a trace of its own"
    );
    assert_ne!(
        resumed.span_context.trace_id(),
        chat.span_context.trace_id()
    );
    let links: Vec<String> = resumed
        .links
        .iter()
        .map(|link| traceparent(link.span_context.trace_id(), link.span_context.span_id()))
        .collect();
    assert_eq!(
        links,
        [cut_off],
        "linked to the span it would have continued"
    );
    assert_eq!(attr(resumed, "reins.resumed"), Some(OtelValue::Bool(true)));
    assert_eq!(attr_str(resumed, "reins.resumed_from"), "running");
    assert_eq!(attr_str(resumed, "reins.run.status"), "suspended");
    let rerun = span(&second_spans, "execute_tool weather");
    assert_eq!(rerun.parent_span_id, resumed.span_context.span_id());
    // The run now stores the new trace's context.
    let new_trace = traceparent(
        resumed.span_context.trace_id(),
        resumed.span_context.span_id(),
    );
    let stored = store.load("run-c").await.unwrap();
    assert_eq!(stored.trace_context.as_deref(), Some(new_trace.as_str()));

    // Resumed again once approved, the run continues the new trace.
    let third = Recorded::start(Telemetry::new());
    let answer = agent
        .resume_stored(store.clone(), "run-c")
        .decide("t2c0", ToolDecision::Approve)
        .await
        .unwrap();
    assert_eq!(answer, "Booked the Ribeira.");
    let third_spans = third.spans();
    let last = span(&third_spans, "invoke_agent planner");
    assert_eq!(
        last.span_context.trace_id(),
        resumed.span_context.trace_id()
    );
    assert_eq!(last.parent_span_id, resumed.span_context.span_id());
    assert!(last.links.is_empty(), "{:?}", last.links);
    assert_eq!(attr_str(last, "reins.resumed_from"), "suspended");
}
