//! A run's row locked by another session of the database (a transaction left open) makes a
//! claim or a decision on PostgreSQL give up after the store's lock timeout, saying so,
//! instead of waiting for ever; once the lock is gone both go through.

use super::decided_once::waiting_run;
use super::{postgres_client, postgres_database};
use reins::agent::*;
use reins::store::{Decision, PostgresStore, RunStore, StoreError};
use std::time::Duration;

/// How long the store waits for the lock in these tests.
const LOCK_WAIT: Duration = Duration::from_millis(200);

/// A guard against the old behaviour only (waiting for the lock without end), far above
/// `LOCK_WAIT`: a claim that waits for the lock this long never stops waiting.
const FOR_EVER: Duration = Duration::from_secs(60);

#[tokio::test]
async fn a_claim_or_decision_on_a_row_another_session_holds_locked_fails_saying_so() {
    let url = postgres_database().await;
    let store = PostgresStore::connect(&url)
        .await
        .unwrap()
        .with_lock_timeout(LOCK_WAIT);
    let (run_id, pending) = waiting_run(&store).await;
    let decision = Decision::new(&pending, ToolDecision::approve(), "alice");

    // Another session holds the run's row, its transaction left open.
    let mut holder = postgres_client(&url).await;
    let open = holder.transaction().await.unwrap();
    open.query(
        "SELECT run_id FROM reins_runs WHERE run_id = $1 FOR UPDATE",
        &[&run_id],
    )
    .await
    .unwrap();

    let locked = StoreError::Locked {
        run_id: run_id.clone(),
        waited: LOCK_WAIT,
    };
    let decided = tokio::time::timeout(FOR_EVER, store.decide(&run_id, &decision))
        .await
        .expect("the decision waited for the lock without end");
    assert_eq!(decided.unwrap_err(), locked);
    let claimed = tokio::time::timeout(FOR_EVER, store.claim(&run_id, "worker"))
        .await
        .expect("the claim waited for the lock without end");
    assert_eq!(claimed.unwrap_err(), locked);
    assert_eq!(
        locked.to_string(),
        format!(
            "run `{run_id}` stayed locked by another session of the database for 200 ms, \
             longer than the run store waits: nothing was written; try again, or end the \
             session holding the lock (a transaction left open)"
        )
    );
    assert!(store.decisions(&run_id).await.unwrap().is_empty());

    // The lock gone, the same decision and claim go through.
    open.rollback().await.unwrap();
    store.decide(&run_id, &decision).await.unwrap();
    let claimed = store.claim(&run_id, "worker").await.unwrap();
    assert_eq!(claimed.decisions.len(), 1);
}
