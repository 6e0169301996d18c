//! A run's row locked by another session of the database (a transaction left open) makes
//! every write of the run on PostgreSQL — a claim, a decision, a checkpoint, a renewal, a
//! decision logged during the run, a deletion — give up after the store's lock timeout,
//! saying so, instead of waiting for ever; once the lock is gone they go through.

use super::decided_once::waiting_run;
use super::{RunStateBuilder, postgres_client, postgres_database};
use reins::agent::*;
use reins::store::{Decision, PostgresStore, RunStore, StoreError};
use std::time::Duration;

/// How long the store waits for the lock in these tests.
const LOCK_WAIT: Duration = Duration::from_millis(200);

/// A guard against the old behaviour only (waiting for the lock without end), far above
/// `LOCK_WAIT`: a claim that waits for the lock this long never stops waiting.
const FOR_EVER: Duration = Duration::from_secs(60);

/// A store on `url` that waits [`LOCK_WAIT`] for a lock.
async fn locking_store(url: &str) -> PostgresStore {
    PostgresStore::connect(url)
        .await
        .unwrap()
        .with_lock_timeout(LOCK_WAIT)
}

/// Another session of the database holding `run_id`'s row, its transaction left open until
/// [`HeldRow::release`].
struct HeldRow(tokio_postgres::Client);

impl HeldRow {
    async fn hold(url: &str, run_id: &str) -> HeldRow {
        let holder = postgres_client(url).await;
        holder.batch_execute("BEGIN").await.unwrap();
        holder
            .query(
                "SELECT run_id FROM reins_runs WHERE run_id = $1 FOR UPDATE",
                &[&run_id],
            )
            .await
            .unwrap();
        HeldRow(holder)
    }

    /// Ends the transaction, and with it the lock.
    async fn release(self) {
        self.0.batch_execute("ROLLBACK").await.unwrap();
    }
}

/// What a write of `run_id` fails with while its row is held.
fn locked(run_id: &str) -> StoreError {
    StoreError::Locked {
        run_id: run_id.to_owned(),
        waited: LOCK_WAIT,
    }
}

/// What `write` (named `what`) ended with, failing the test if it waited [`FOR_EVER`].
async fn ended<T>(what: &str, write: impl Future<Output = T>) -> T {
    tokio::time::timeout(FOR_EVER, write)
        .await
        .unwrap_or_else(|_| panic!("the {what} waited for the lock without end"))
}

#[tokio::test]
async fn a_claim_or_decision_on_a_row_another_session_holds_locked_fails_saying_so() {
    let url = postgres_database().await;
    let store = locking_store(&url).await;
    let (run_id, pending) = waiting_run(&store).await;
    let decision = Decision::new(&pending, ToolDecision::approve(), "alice");

    // Another session holds the run's row, its transaction left open.
    let held = HeldRow::hold(&url, &run_id).await;

    let locked = locked(&run_id);
    let decided = ended("decision", store.decide(&run_id, &decision)).await;
    assert_eq!(decided.unwrap_err(), locked);
    let claimed = ended("claim", store.claim(&run_id, "worker")).await;
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
    held.release().await;
    store.decide(&run_id, &decision).await.unwrap();
    let claimed = store.claim(&run_id, "worker").await.unwrap();
    assert_eq!(claimed.decisions.len(), 1);
}

/// The run's worker holds its lease while another session holds the row: its checkpoint, its
/// renewal and the decision it logs fail with [`StoreError::Locked`] after the lock timeout,
/// writing nothing, and so does a deletion; once the lock is gone the same lease writes.
#[tokio::test]
async fn a_workers_writes_on_a_row_another_session_holds_locked_fail_saying_so() {
    let url = postgres_database().await;
    let store = locking_store(&url).await;
    let (run_id, pending) = waiting_run(&store).await;
    let claimed = store.claim(&run_id, "worker").await.unwrap();
    let lease = claimed.lease;
    let decision = Decision::new(&pending, ToolDecision::approve(), "at the terminal");
    let checkpoints = store.checkpoints(&run_id).await.unwrap().len();

    let held = HeldRow::hold(&url, &run_id).await;

    let locked = locked(&run_id);
    let checkpointed = ended(
        "checkpoint",
        store.checkpoint(&lease, &claimed.state, &[], false),
    )
    .await;
    assert_eq!(checkpointed.unwrap_err(), locked);
    let logged = ended("logged decision", store.log_decision(&lease, &decision)).await;
    assert_eq!(logged.unwrap_err(), locked);
    let renewed = ended("renewal", store.renew(&lease)).await;
    assert_eq!(renewed.unwrap_err(), locked);
    let deleted = ended("deletion", store.delete(&run_id)).await;
    assert_eq!(deleted.unwrap_err(), locked);
    assert!(store.decisions(&run_id).await.unwrap().is_empty());
    assert_eq!(store.checkpoints(&run_id).await.unwrap().len(), checkpoints);

    // The lock gone, the same lease writes: nothing moved its version meanwhile.
    held.release().await;
    let lease = store.renew(&lease).await.unwrap();
    store.log_decision(&lease, &decision).await.unwrap();
    store
        .checkpoint(&lease, &claimed.state, &[], true)
        .await
        .unwrap();
    assert_eq!(store.decisions(&run_id).await.unwrap().len(), 1);
    assert_eq!(
        store.checkpoints(&run_id).await.unwrap().len(),
        checkpoints + 1
    );
}

/// Expiring old runs does not wait for a run whose row another session holds: it deletes the
/// others and leaves that one for the next expiry, which deletes it once the lock is gone.
#[tokio::test]
async fn expiry_passes_over_a_run_another_session_holds_locked() {
    let url = postgres_database().await;
    let store = locking_store(&url).await;
    for run_id in ["held", "free"] {
        let mut state: RunState = RunStateBuilder::suspended_example();
        state.run_id = run_id.to_owned();
        let lease = store.create(&state, "w").await.unwrap();
        state.status = RunStatus::Completed;
        store.checkpoint(&lease, &state, &[], true).await.unwrap();
    }

    let held = HeldRow::hold(&url, "held").await;
    let expired = ended("expiry", store.expire(Duration::ZERO)).await;
    assert_eq!(expired.unwrap(), 1);
    assert_eq!(
        store.load("free").await.unwrap_err(),
        StoreError::NotFound("free".to_owned())
    );

    held.release().await;
    assert_eq!(store.expire(Duration::ZERO).await.unwrap(), 1);
    assert_eq!(
        store.load("held").await.unwrap_err(),
        StoreError::NotFound("held".to_owned())
    );
}
