//! Reads made of several statements see the database as it was when they began: the test
//! locks the table a read's later statement reads, waits until the read waits for it, deletes
//! the run by hand and lets the read go on. Needs `REINS_POSTGRES_URL`
//! (`scripts/with-postgres.sh`).

use super::PostgresStore;
use super::tests::{admin, fresh_database};
use crate::store::RunStore;
use crate::store::interleaved::{
    RUN, delete_statements, fork_of_the_run, pending_calls, run_with_one_call_decided,
};
use std::time::Duration;

/// A store on a fresh database holding [`RUN`], and the database's connection string.
async fn store_with_run() -> (PostgresStore, String) {
    let url = fresh_database().await;
    let store = PostgresStore::connect(&url).await.unwrap();
    run_with_one_call_decided(&store).await;
    (store, url)
}

/// A connection of the test's holding `table` locked (against reads too), in a transaction
/// [`delete_once_waited_for`] ends.
async fn locked(url: &str, table: &str) -> tokio_postgres::Client {
    let locker = admin(url).await;
    locker
        .batch_execute(&format!(
            "BEGIN; LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE"
        ))
        .await
        .unwrap();
    locker
}

/// Waits until a statement waits for `locker`'s lock on `table` (the read, past its first
/// statement), then deletes [`RUN`] and commits, letting the read go on.
async fn delete_once_waited_for(locker: &tokio_postgres::Client, table: &str) {
    let waiting = format!(
        "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted AND relation = '{table}'::regclass)"
    );
    let mut polls = 0;
    while !locker
        .query_one(&waiting, &[])
        .await
        .unwrap()
        .get::<_, bool>(0)
    {
        polls += 1;
        assert!(polls < 2_000, "the read never reached {table}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    locker
        .batch_execute(&format!("{} COMMIT", delete_statements()))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_runs_decisions_are_read_with_the_run() {
    let (store, url) = store_with_run().await;
    let locker = locked(&url, "reins_decision_log").await;
    let reader = store.clone();
    let read = tokio::spawn(async move { reader.decisions(RUN).await });
    delete_once_waited_for(&locker, "reins_decision_log").await;
    let decisions = read.await.unwrap().unwrap();
    let calls: Vec<&str> = decisions
        .iter()
        .map(|recorded| recorded.decision.internal_call_id.as_str())
        .collect();
    assert_eq!(calls, ["t1c0"], "found, so with the decision it had");
    assert!(store.load(RUN).await.is_err(), "deleted since");
}

#[tokio::test]
async fn a_runs_checkpoints_are_read_with_the_run() {
    let (store, url) = store_with_run().await;
    let locker = locked(&url, "reins_checkpoints").await;
    let reader = store.clone();
    let read = tokio::spawn(async move { reader.checkpoints(RUN).await });
    delete_once_waited_for(&locker, "reins_checkpoints").await;
    assert_eq!(
        read.await.unwrap().unwrap().len(),
        2,
        "found, so with its checkpoints"
    );
}

#[tokio::test]
async fn pending_approvals_read_each_run_with_its_decisions() {
    let (store, url) = store_with_run().await;
    let locker = locked(&url, "reins_decisions").await;
    let reader = store.clone();
    let read = tokio::spawn(async move { pending_calls(&reader).await });
    delete_once_waited_for(&locker, "reins_decisions").await;
    assert_eq!(
        read.await.unwrap(),
        ["t1c1"],
        "t1c0 was decided when the run was read"
    );
    assert!(pending_calls(&store).await.is_empty(), "deleted since");
}

#[tokio::test]
async fn a_fork_reads_the_checkpoint_and_the_journal_as_they_were_together() {
    // The run deleted while the fork waits to read the checkpoint, and the journal.
    for table in ["reins_checkpoints", "reins_journal"] {
        let (store, url) = store_with_run().await;
        let locker = locked(&url, table).await;
        let reader = store.clone();
        let read = tokio::spawn(async move { fork_of_the_run(&reader).await });
        delete_once_waited_for(&locker, table).await;
        assert_eq!(
            read.await.unwrap(),
            ["model_turn", "forked_from"],
            "deleted on reading {table}"
        );
        assert!(store.load(RUN).await.is_err(), "deleted since");
    }
}
