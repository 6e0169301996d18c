//! Waiting for decisions without polling: a watch wakes when a person decides, in this
//! process, in another process on the same SQLite file, or on PostgreSQL across a lost
//! connection.

use super::{Seen, agent, decide, script};
use reins::agent::{PromptError, ToolDecision};
#[cfg(feature = "postgres")]
use reins::store::DecisionSignal;
use reins::store::{DecisionWatch, MemoryStore, RunStore, SqliteStore};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[cfg(feature = "postgres")]
use super::postgres_store;

/// Generous: the signal normally arrives in milliseconds (SQLite from another process: within
/// `SqliteStore::CROSS_PROCESS_CHECK`).
const PATIENCE: Duration = Duration::from_secs(30);

/// A run suspended on its `pay` call (`t1c1`); its id.
async fn suspended_run(store: &(impl RunStore + Clone)) -> String {
    let log = Arc::new(Mutex::new(Vec::new()));
    let error = agent(script(), log, Seen::default())
        .prompt("pay the bill")
        .durable(store.clone())
        .await
        .unwrap_err();
    let PromptError::Suspended { run } = error else {
        panic!("expected a suspension, got {error:?}");
    };
    run.run_id().to_string()
}

/// Waits (with [`PATIENCE`]) until `watch` sees a decision about `run_id`.
async fn signalled(watch: &mut DecisionWatch, run_id: &str) {
    tokio::time::timeout(PATIENCE, watch.for_run(run_id))
        .await
        .unwrap_or_else(|_| panic!("no decision about {run_id} was signalled"))
        .unwrap();
}

/// A worker waiting on the watch wakes when another handle of the store records a decision,
/// and the run it wakes for resumes.
async fn wakes_on_decision(waiting: impl RunStore + Clone, deciding: impl RunStore + Clone) {
    let other = suspended_run(&waiting).await;
    let run_id = suspended_run(&waiting).await;
    let mut watch = waiting.watch_decisions().await.unwrap();
    let awaited = run_id.clone();
    let worker = tokio::spawn(async move {
        signalled(&mut watch, &awaited).await;
        awaited
    });
    // A decision about another run does not wake it.
    decide(&deciding, &other, "t1c1", ToolDecision::deny("no"))
        .await
        .unwrap();
    decide(&deciding, &run_id, "t1c1", ToolDecision::approve())
        .await
        .unwrap();
    let woken = tokio::time::timeout(PATIENCE, worker)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(woken, run_id);
}

#[tokio::test]
async fn a_decision_wakes_a_watch_in_memory() {
    let store = MemoryStore::new();
    wakes_on_decision(store.clone(), store).await;
}

#[tokio::test]
async fn a_decision_wakes_a_watch_in_sqlite() {
    // Removed with its -wal and -shm files when the test ends, however it ends.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("watch.sqlite");
    // Two handles on one file, as two parts of a program would open it.
    wakes_on_decision(
        SqliteStore::open(&path).unwrap(),
        SqliteStore::open(&path).unwrap(),
    )
    .await;
}

/// Another process writing to the file is noticed through `PRAGMA data_version`.
#[tokio::test]
async fn a_decision_by_another_process_wakes_a_sqlite_watch() {
    // Removed with its -wal and -shm files when the test ends, however it ends.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("watch-ext.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    let mut watch = store.watch_decisions().await.unwrap();
    // What another process's `decide` leaves in the file, written by a connection that this
    // process's handles know nothing of.
    let elsewhere = rusqlite::Connection::open(&path).unwrap();
    elsewhere
        .execute(
            "INSERT INTO reins_decision_log (run_id, seq, internal_call_id, record, decided_at)
             VALUES ('decided-elsewhere', 1, 't1c0', '{}', 0)",
            [],
        )
        .unwrap();
    signalled(&mut watch, "decided-elsewhere").await;
}

/// Another process deletes the run of the newest logged decision (a finished run, with its
/// log), then logs a decision about another run: SQLite gives the new row the deleted one's
/// rowid. The watch, which had read the log up to that rowid, is woken all the same.
#[tokio::test]
async fn a_decision_logged_after_a_deletion_by_another_process_wakes_a_sqlite_watch() {
    // Removed with its -wal and -shm files when the test ends, however it ends.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("watch-del.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    let elsewhere = rusqlite::Connection::open(&path).unwrap();
    let log = |run_id: &str| {
        elsewhere
            .execute(
                "INSERT INTO reins_decision_log (run_id, seq, internal_call_id, record, decided_at)
                 VALUES (?1, 1, 't1c0', '{}', 0)",
                [run_id],
            )
            .unwrap();
    };
    log("deleted-later");
    let mut watch = store.watch_decisions().await.unwrap();
    elsewhere
        .execute(
            "DELETE FROM reins_decision_log WHERE run_id = 'deleted-later'",
            [],
        )
        .unwrap();
    log("decided-after");
    signalled(&mut watch, "decided-after").await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_decision_wakes_a_watch_in_postgres() {
    let store = postgres_store().await;
    wakes_on_decision(store.clone(), store).await;
}

/// The listener's connection is cut and cannot come back at once: a decision made while no
/// connection listens still wakes the watch (every watch is told to recheck once the listener
/// is back), and the decisions made after are notified over the new connection.
#[cfg(feature = "postgres")]
#[tokio::test]
async fn the_postgres_watch_survives_a_lost_connection() {
    let url = super::postgres_database().await;
    let database = url.rsplit("dbname=").next().unwrap().to_owned();
    let store = reins::store::PostgresStore::connect(&url).await.unwrap();
    let during = suspended_run(&store).await;
    let after = suspended_run(&store).await;
    let mut watch = store.watch_decisions().await.unwrap();

    let admin = super::postgres_client(&std::env::var("REINS_POSTGRES_URL").unwrap()).await;
    // No new connection to the run's database until allowed again: the listener cannot
    // reconnect, while the store's pooled connections go on working.
    admin
        .batch_execute(&format!(
            "ALTER DATABASE {database} ALLOW_CONNECTIONS false"
        ))
        .await
        .unwrap();
    // Waits (up to 5 s) until the listener's backend has exited.
    let cut = admin
        .query(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
             WHERE application_name = 'reins-decision-listener' AND datname = $1",
            &[&database],
        )
        .await
        .unwrap();
    assert!(!cut.is_empty(), "the listener has its own connection");
    assert!(
        cut.iter().all(|row| row.get::<_, bool>(0)),
        "the listener's backend exited"
    );
    // Nobody listens while this decision commits: its notification is lost.
    decide(&store, &during, "t1c1", ToolDecision::approve())
        .await
        .unwrap();
    admin
        .batch_execute(&format!("ALTER DATABASE {database} ALLOW_CONNECTIONS true"))
        .await
        .unwrap();
    signalled(&mut watch, &during).await;
    // Woken, the listener listens again: a new decision arrives as a notification.
    decide(&store, &after, "t1c1", ToolDecision::approve())
        .await
        .unwrap();
    let notified = async {
        loop {
            if let DecisionSignal::Recorded { run_id } = watch.next().await.unwrap()
                && run_id == after
            {
                return;
            }
        }
    };
    tokio::time::timeout(PATIENCE, notified)
        .await
        .unwrap_or_else(|_| panic!("the decision about {after} was not notified"));
}
