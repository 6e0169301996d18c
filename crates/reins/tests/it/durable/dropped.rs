//! A durable run whose future is dropped (a timeout, a `select!`, an aborted task) gives its
//! lease back: another worker resumes it at once, not when the lease expires (five minutes
//! by default), and the call it had started waits in doubt, as after a crash. So does one
//! dropped while its very first write (the run's `create`) is in flight.

use super::faulty_store::{Fault, FaultyStore};
use super::per_store::per_store;
use super::renewal::slow_agent;
use super::store_faults::balance_agent;
use super::uuid_like;
use reins::agent::*;
use reins::store::{RunStore, StoreError};
use std::future::IntoFuture;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Far longer than the wait for the release: only a lease given back lets the run go.
const NO_DEADLINE: Duration = Duration::from_secs(30);

async fn a_dropped_run_is_free_at_once(store: impl RunStore + Clone) {
    let (started, runs) = (Arc::new(Notify::new()), Arc::new(AtomicUsize::new(0)));
    // The store's own lease: five minutes.
    let agent = slow_agent(None, started.clone(), runs.clone());
    let run_id = format!("dropped-{}", uuid_like());
    let run = agent
        .prompt("go")
        .run_id(run_id.clone())
        .durable(store.clone());
    let task = tokio::spawn(run.into_future());
    started.notified().await;
    task.abort();
    let _ = task.await;

    let resumed = resume_once_free(&agent, &store, &run_id).await;
    let Err(PromptError::Suspended { run }) = resumed else {
        panic!("expected the cut-off call to wait in doubt, got {resumed:?}");
    };
    let pending = &run.state.pending_calls;
    assert!(pending.len() == 1 && pending[0].in_doubt, "{pending:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the call did not run again");
}

per_store!(a_dropped_run_is_free_at_once, sqlite file);

/// Resumes the stored run `run_id` once no lease holds it (tried again while it is busy, up
/// to a time far longer than a release takes and far shorter than the lease).
async fn resume_once_free(
    agent: &Agent,
    store: &(impl RunStore + Clone),
    run_id: &str,
) -> Result<String, PromptError> {
    let asked = Instant::now();
    loop {
        match agent.resume_stored(store.clone(), run_id).await {
            Err(PromptError::Store {
                source: StoreError::Busy { .. },
                ..
            }) if asked.elapsed() < NO_DEADLINE => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            other => break other,
        }
    }
}

/// A run dropped while the store takes its first write, which creates it: the store took the
/// write and answers after the run is gone, with the lease the run would have held. That
/// lease is given back all the same, at once, and the run resumes from its start.
async fn a_run_dropped_during_its_first_write_is_free_at_once<S: RunStore + Clone>(inner: S) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let agent = balance_agent(&log);
    let store = FaultyStore::over(inner, Fault::HoldCreate);
    let run_id = format!("dropped-at-create-{}", uuid_like());
    let run = agent
        .prompt("check the balance")
        .run_id(run_id.clone())
        .durable(store.clone());
    let task = tokio::spawn(run.into_future());
    store.hung.notified().await;
    task.abort();
    let _ = task.await;
    // The write answers now that nobody waits for it.
    store.answer_create.notify_one();

    let resumed = resume_once_free(&agent, &store, &run_id).await;
    assert_eq!(resumed.unwrap(), "The balance is fine.");
    assert_eq!(*log.lock().unwrap(), vec!["balance"]);
}

per_store!(a_run_dropped_during_its_first_write_is_free_at_once, sqlite file);
