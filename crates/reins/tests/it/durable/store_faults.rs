//! A store's faults. One whose own code panics fails the run with `StoreError::Panicked`: the
//! panic never unwinds into the task awaiting the run, whether it comes while the store's
//! method runs before returning its future or while that future is polled. One that fails a
//! write (a lost connection) ends the run with the store's error, but does not record it as
//! failed: the run is given back as last stored, and resumes at once. So is a run dropped
//! while the store was taking a write that it took.

use super::faulty_store::{Fault, FaultyStore};
use super::{Seen, agent, script};
use crate::common::echo_tool;
use reins::agent::*;
use reins::store::{BoxedStore, MemoryStore, RunStore, StoreError};
use reins::testing::{ScriptedModel, Turn};
use serde_json::json;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_store_panicking_in_its_call_or_its_future_fails_the_run_with_a_store_error() {
    let mut stored = Vec::new();
    for (at, message) in [
        (Fault::PanicInCreateCall, "store bug in create"),
        (Fault::PanicInCheckpointPoll, "store bug in checkpoint"),
    ] {
        let log = Arc::new(Mutex::new(Vec::new()));
        let store = FaultyStore::new(at);
        // Awaited in a task of its own: a panic escaping the run would end the task.
        let run = agent(script(), log.clone(), Seen::default())
            .prompt("pay the bill")
            .run_id("panicky")
            .durable(store.clone());
        let ended = tokio::spawn(run.into_future()).await;
        let Ok(Err(PromptError::Store { source, run_id, .. })) = ended else {
            panic!("{at:?}: expected a store error, got {ended:?}");
        };
        assert_eq!(run_id, "panicky");
        let StoreError::Panicked(said) = &source else {
            panic!("{at:?}: expected `Panicked`, got {source:?}");
        };
        assert!(said.contains(message), "{at:?}: {said}");
        assert!(
            source.to_string().starts_with("the run store panicked"),
            "{source}"
        );
        // No tool ran past a state the store failed to write.
        assert!(log.lock().unwrap().is_empty(), "{at:?}: {log:?}");
        stored.extend(store.inner.load("panicky").await.ok());
    }
    // The run was created before the checkpoint that panicked.
    let [state] = &stored[..] else {
        panic!("one run was stored: {stored:?}")
    };

    // A boxed store answers the same for a direct call.
    let boxed = BoxedStore::new(FaultyStore::new(Fault::PanicInCreateCall));
    let created = boxed.create(state, "worker").await;
    assert!(
        matches!(&created, Err(StoreError::Panicked(said)) if said.contains("store bug")),
        "{created:?}"
    );
}

/// An agent whose model looks the balance up (`lookup`, logging its text to `log`), then
/// answers.
pub(super) fn balance_agent(log: &Arc<Mutex<Vec<String>>>) -> Agent {
    let model = ScriptedModel::resumable([
        Turn::tool_call("lookup", json!({"text": "balance"})),
        Turn::text("The balance is fine."),
    ]);
    AgentBuilder::new(model)
        .tool(echo_tool("lookup", log.clone()))
        .build()
}

/// A write the store fails (here the checkpoint of the tool call's start, so the tool never
/// ran) ends the run with the store's error; the run is not recorded as failed, which would
/// be final, but given back as last stored, lease released: it resumes at once and the tool
/// runs once.
#[tokio::test]
async fn a_write_the_store_failed_leaves_the_run_to_resume_at_once() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let agent = balance_agent(&log);
    // The first checkpoint records the model's turn, the second the call's start.
    let store = FaultyStore::new(Fault::FailCheckpoint(2));
    let ended = agent
        .prompt("check the balance")
        .run_id("flaky")
        .durable(store.clone())
        .await;
    let Err(PromptError::Store { source, .. }) = &ended else {
        panic!("expected the store's error, got {ended:?}");
    };
    assert!(matches!(source, StoreError::Backend(_)), "{source:?}");
    assert!(
        log.lock().unwrap().is_empty(),
        "the call's start was not stored"
    );
    let stored = store.load("flaky").await.unwrap();
    assert_eq!(stored.status, RunStatus::Running, "not failed for good");

    let answer = agent.resume_stored(store.clone(), "flaky").await.unwrap();
    assert_eq!(answer, "The balance is fine.");
    assert_eq!(*log.lock().unwrap(), vec!["balance"]);
}

/// A run dropped while its store was taking a write (here the call's start) that the store
/// took: the run is a version past the lease it knows, and is given back all the same, at
/// once, rather than when the lease expires; the call it started waits in doubt.
#[tokio::test]
async fn a_run_dropped_during_a_write_the_store_took_is_free_at_once() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let agent = balance_agent(&log);
    // The first checkpoint records the model's turn, the second the call's start.
    let store = FaultyStore::new(Fault::HangAfterCheckpoint(2));
    let run = agent
        .prompt("check the balance")
        .run_id("cut-off")
        .durable(store.clone());
    let task = tokio::spawn(run.into_future());
    store.hung.notified().await;
    task.abort();
    let _ = task.await;

    // Far longer than the release takes, far shorter than the lease (five minutes).
    let asked = Instant::now();
    let resumed = loop {
        match agent.resume_stored(store.clone(), "cut-off").await {
            Err(PromptError::Store {
                source: StoreError::Busy { .. },
                ..
            }) if asked.elapsed() < Duration::from_secs(30) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            other => break other,
        }
    };
    let Err(PromptError::Suspended { run }) = resumed else {
        panic!("expected the started call to wait in doubt, got {resumed:?}");
    };
    let pending = &run.state.pending_calls;
    assert!(pending.len() == 1 && pending[0].in_doubt, "{pending:?}");
    assert!(log.lock().unwrap().is_empty(), "the tool never ran");
}

/// A store that does not renew leases itself gets the trait's renewal, which writes the
/// stored state again: a step longer than the lease keeps the run all the same.
#[tokio::test]
async fn a_store_without_a_renewal_of_its_own_keeps_a_slow_steps_lease() {
    let inner = MemoryStore::new().with_lease(super::renewal::LEASE);
    let store = FaultyStore::over(inner, Fault::None);
    super::renewal::a_slow_step_keeps_the_run(store.clone()).await;
    assert!(
        store.checkpoints.load(Ordering::SeqCst) > 6,
        "the renewals were written as checkpoints"
    );
}

/// A run whose lease lapsed (its store could not renew it) and was claimed by another worker
/// has stopped, its tool call dropped, rather than going on beside the new owner until it
/// next writes (here: never, the tool does not finish): once its lease ran out by its own
/// clock (see `lapsed_lease`), or at its next renewal, refused.
#[tokio::test]
async fn a_run_that_lost_its_lease_stops_where_it_is() {
    let lease = super::renewal::LEASE;
    let store = FaultyStore::over(
        MemoryStore::new().with_lease(lease),
        Fault::FailRenewalsUntilAClaim,
    );
    let started = Arc::new(tokio::sync::Notify::new());
    let agent = super::renewal::slow_agent(None, started.clone(), Arc::default());
    let run = agent.prompt("go").run_id("lapsed").durable(store.clone());
    let run = tokio::spawn(run.into_future());
    started.notified().await;
    let claimed = loop {
        match store.claim("lapsed", "other").await {
            Ok(claimed) => break claimed,
            Err(StoreError::Busy { .. }) => tokio::time::sleep(lease / 4).await,
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
    assert!(
        matches!(
            source,
            StoreError::LeaseLapsed { .. } | StoreError::Conflict { .. }
        ),
        "{source:?}"
    );
    // The new owner's claim is untouched: it checkpoints with its lease.
    store
        .checkpoint(&claimed.lease, &claimed.state, &[], true)
        .await
        .expect("the new owner still holds the run");
}
