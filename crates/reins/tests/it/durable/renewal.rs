//! A run keeps its lease while a step takes longer than the lease, and stops where it is once
//! the lease is lost to another worker.

use super::uuid_like;
use crate::common::EchoArgs;
use reins::agent::*;
use reins::store::{MemoryStore, RunStore, SqliteStore, StoreError};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use serde_json::json;
use std::future::IntoFuture;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

#[cfg(feature = "postgres")]
use super::postgres_store;

/// The lease of the stores here: far shorter than the slow step.
pub(super) const LEASE: Duration = Duration::from_millis(60);

/// How a slow tool takes its time once it started.
#[derive(Clone, Copy)]
enum Slowness {
    /// It awaits this long.
    Awaits(Duration),
    /// It blocks its thread this long (the run's renewals cannot run meanwhile), then never
    /// finishes.
    BlocksThenHangs(Duration),
}

/// An agent whose one tool call is slow; `started` is told when it starts, `runs` counts its
/// executions.
fn slow_agent(slowness: Slowness, started: Arc<Notify>, runs: Arc<AtomicUsize>) -> Agent {
    let slow = tool_fn("slow", "Takes a while.", move |args: EchoArgs| {
        let (started, runs) = (started.clone(), runs.clone());
        async move {
            runs.fetch_add(1, Ordering::SeqCst);
            started.notify_one();
            match slowness {
                Slowness::Awaits(time) => tokio::time::sleep(time).await,
                Slowness::BlocksThenHangs(time) => {
                    std::thread::sleep(time);
                    std::future::pending::<()>().await;
                }
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

/// A tool that takes several leases' time keeps the run: its lease is renewed meanwhile, so
/// another worker's claim is refused all along, and the tool runs once.
pub(super) async fn a_slow_step_keeps_the_run(store: impl RunStore + Clone) {
    let (started, runs) = (Arc::new(Notify::new()), Arc::new(AtomicUsize::new(0)));
    let agent = slow_agent(Slowness::Awaits(LEASE * 6), started.clone(), runs.clone());
    let run_id = format!("slow-{}", uuid_like());
    let run = agent
        .prompt("go")
        .run_id(run_id.clone())
        .durable(store.clone());
    let run = tokio::spawn(run.into_future());
    started.notified().await;
    for _ in 0..5 {
        tokio::time::sleep(LEASE).await;
        let claim = store.claim(&run_id, "other").await;
        assert!(
            matches!(claim, Err(StoreError::Busy { .. })),
            "the run is still held: {claim:?}"
        );
    }
    assert_eq!(run.await.unwrap().unwrap(), "Finished.");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_slow_step_keeps_the_run_in_memory() {
    a_slow_step_keeps_the_run(MemoryStore::new().with_lease(LEASE)).await;
}

#[tokio::test]
async fn a_slow_step_keeps_the_run_in_sqlite() {
    let path = std::env::temp_dir().join(format!("reins-renewal-{}.sqlite", uuid_like()));
    a_slow_step_keeps_the_run(SqliteStore::open(&path).unwrap().with_lease(LEASE)).await;
    let _ = std::fs::remove_file(&path);
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_slow_step_keeps_the_run_in_postgres() {
    a_slow_step_keeps_the_run(postgres_store().await.with_lease(LEASE)).await;
}

/// A run whose lease lapsed (its thread was blocked past it) and was claimed by another worker
/// stops at its next renewal, its tool call dropped, rather than going on beside the new
/// owner until it next writes (here: never, the tool does not finish).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_lost_its_lease_stops_where_it_is() {
    let store = MemoryStore::new().with_lease(LEASE);
    let (started, runs) = (Arc::new(Notify::new()), Arc::new(AtomicUsize::new(0)));
    let agent = slow_agent(Slowness::BlocksThenHangs(LEASE * 4), started.clone(), runs);
    let run = agent.prompt("go").run_id("lapsed").durable(store.clone());
    let run = tokio::spawn(run.into_future());
    started.notified().await;
    let claimed = loop {
        match store.claim("lapsed", "other").await {
            Ok(claimed) => break claimed,
            Err(StoreError::Busy { .. }) => tokio::time::sleep(LEASE / 4).await,
            Err(error) => panic!("{error:?}"),
        }
    };
    // Bounded only so that a run that never stops fails the test instead of hanging it.
    let ended = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the run stops once its lease is found lost")
        .unwrap();
    let Err(PromptError::Store { source, .. }) = &ended else {
        panic!("expected the lost lease, got {ended:?}");
    };
    assert!(matches!(source, StoreError::Conflict { .. }), "{source:?}");
    // The new owner's claim is untouched: it checkpoints with its lease.
    store
        .checkpoint(&claimed.lease, &claimed.state, &[], true)
        .await
        .expect("the new owner still holds the run");
}
