//! A run keeps its lease while a step takes longer than the lease, and while its caller does
//! not poll it (a stream read slowly). (One that loses its lease stops where it is: see
//! `store_faults`, whose store fails the renewals that would keep it.)

use super::per_store::per_store;
use super::uuid_like;
use crate::common::EchoArgs;
use reins::agent::*;
use reins::store::{MemoryStore, RunStore, StoreError};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use serde_json::json;
use std::future::IntoFuture;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

/// The lease of the stores here: far shorter than the slow step, and long enough that a
/// loaded machine (a CI run's two cores shared by every test) renews it in time: at 60 ms,
/// a renewal held up behind other tests let another worker's claim through.
pub(super) const LEASE: Duration = Duration::from_millis(250);

/// An agent whose one tool call takes `time` (for ever when `None`); `started` is told when
/// it starts, `runs` counts its executions.
pub(super) fn slow_agent(
    time: Option<Duration>,
    started: Arc<Notify>,
    runs: Arc<AtomicUsize>,
) -> Agent {
    let slow = tool_fn("slow", "Takes a while.", move |args: EchoArgs| {
        let (started, runs) = (started.clone(), runs.clone());
        async move {
            runs.fetch_add(1, Ordering::SeqCst);
            started.notify_one();
            match time {
                Some(time) => tokio::time::sleep(time).await,
                None => std::future::pending::<()>().await,
            }
            Ok::<_, std::convert::Infallible>(args.text)
        }
    });
    let model = ScriptedModel::new([
        Turn::tool_call("slow", json!({"text": "done"})),
        Turn::text("Finished."),
    ]);
    AgentBuilder::new(model).tool(slow).build()
}

/// Checks for five leases' time that another worker's claim of `run_id` is refused.
async fn stays_held(store: &impl RunStore, run_id: &str) {
    for _ in 0..5 {
        tokio::time::sleep(LEASE).await;
        let claim = store.claim(run_id, "other").await;
        assert!(
            matches!(claim, Err(StoreError::Busy { .. })),
            "the run is still held: {claim:?}"
        );
    }
}

/// A tool that takes several leases' time keeps the run: its lease is renewed meanwhile, so
/// another worker's claim is refused all along, and the tool runs once.
pub(super) async fn a_slow_step_keeps_the_run(store: impl RunStore + Clone) {
    let (started, runs) = (Arc::new(Notify::new()), Arc::new(AtomicUsize::new(0)));
    let agent = slow_agent(Some(LEASE * 6), started.clone(), runs.clone());
    let run_id = format!("slow-{}", uuid_like());
    let run = agent
        .prompt("go")
        .run_id(run_id.clone())
        .durable(store.clone());
    let run = tokio::spawn(run.into_future());
    started.notified().await;
    stays_held(&store, &run_id).await;
    assert_eq!(run.await.unwrap().unwrap(), "Finished.");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

per_store!(a_slow_step_keeps_the_run, sqlite file, each .with_lease(LEASE));

/// A streamed run whose consumer stops reading for several leases (it shows a result to a
/// person, say) keeps its lease meanwhile: another worker's claim is refused all along, and
/// the run finishes once read again.
#[tokio::test]
async fn a_stream_read_slowly_keeps_the_run() {
    use futures::StreamExt;
    let store = MemoryStore::new().with_lease(LEASE);
    let (started, runs) = (Arc::new(Notify::new()), Arc::new(AtomicUsize::new(0)));
    let agent = slow_agent(Some(Duration::ZERO), started, runs.clone());
    let run_id = format!("read-slowly-{}", uuid_like());
    let mut stream = agent
        .prompt("go")
        .run_id(run_id.clone())
        .durable(store.clone())
        .stream();
    assert!(stream.next().await.is_some(), "the run streams");
    stays_held(&store, &run_id).await;
    let mut last = None;
    while let Some(item) = stream.next().await {
        last = Some(item);
    }
    assert!(
        matches!(&last, Some(Ok(StreamItem::Final(final_answer))) if final_answer.output == "Finished."),
        "{last:?}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}
