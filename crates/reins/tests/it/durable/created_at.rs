//! When each run was created, as every store lists it (`RunSummary::created_at_ms`): the time
//! of `create`, kept however many checkpoints follow and however many of them the store
//! prunes; and in a database written by a release that did not keep it, the time of the run's
//! oldest checkpoint kept, else when it was last written.

use super::RunStateBuilder;
use super::listed::{after, listed, now_ms};
use super::per_store::per_store;
#[cfg(feature = "postgres")]
use super::{postgres_client, postgres_database};
use reins::store::{FORMAT_VERSION, RunStore, SqliteStore};

/// When `run_id` was created, as both listings say it.
async fn created_ms(store: &impl RunStore, run_id: &str) -> i64 {
    listed(store, run_id, |run| run.created_at_ms).await
}

/// `store` keeps only its newest checkpoint of each run.
async fn a_run_keeps_its_creation_time_past_pruned_checkpoints(store: impl RunStore) {
    let mut state = RunStateBuilder::suspended_example();
    state.run_id = "created".to_owned();
    let before = now_ms();
    let mut lease = store.create(&state, "worker-a").await.unwrap();
    let created_by = now_ms();
    let created = created_ms(&store, "created").await;
    assert!((before..=created_by).contains(&created), "{created}");

    for _ in 0..3 {
        after(now_ms()).await;
        lease = store.checkpoint(&lease, &state, &[], false).await.unwrap();
    }
    let kept = store.checkpoints("created").await.unwrap();
    assert_eq!(kept.len(), 1, "the store pruned the older checkpoints");
    assert!(kept[0].created_at_ms > created_by, "{kept:?}");
    assert_eq!(created_ms(&store, "created").await, created);
    // A claim writes the record, and leaves when it was created alone too.
    store.checkpoint(&lease, &state, &[], true).await.unwrap();
    store.claim("created", "worker-b").await.unwrap();
    assert_eq!(created_ms(&store, "created").await, created);
}

per_store!(
    a_run_keeps_its_creation_time_past_pruned_checkpoints,
    each.keep_checkpoints(1)
);

/// The tables as a release before `created_at` made them (the same in both databases, but
/// for the integer type).
fn tables_before_created_at(integer: &str) -> String {
    format!(
        "CREATE TABLE reins_runs (
            run_id TEXT PRIMARY KEY, version {integer} NOT NULL, format {integer} NOT NULL,
            status TEXT NOT NULL, state TEXT NOT NULL, lease_owner TEXT, lease_token TEXT,
            lease_until {integer} NOT NULL DEFAULT 0, updated_at {integer} NOT NULL
        );
        CREATE TABLE reins_checkpoints (
            run_id TEXT NOT NULL, version {integer} NOT NULL, status TEXT NOT NULL,
            format {integer} NOT NULL, state TEXT NOT NULL, journal_len {integer} NOT NULL,
            created_at {integer} NOT NULL, PRIMARY KEY (run_id, version)
        );"
    )
}

/// Two runs as that release wrote them: `kept` last written at 9000 with checkpoints kept from
/// 3000 on (its first ones pruned), `bare` last written at 7000 with none.
fn runs_before_created_at() -> String {
    let format = FORMAT_VERSION;
    format!(
        "INSERT INTO reins_runs (run_id, version, format, status, state, updated_at) VALUES
            ('kept', 5, {format}, 'completed', '{{}}', 9000),
            ('bare', 1, {format}, 'completed', '{{}}', 7000);
        INSERT INTO reins_checkpoints VALUES
            ('kept', 4, 'running', {format}, '{{}}', 0, 3000),
            ('kept', 5, 'completed', {format}, '{{}}', 0, 9000);"
    )
}

/// What a store opened on the tables above lists: each old run with the time it is taken for.
async fn old_runs_get_a_creation_time(store: &impl RunStore) {
    assert_eq!(created_ms(store, "kept").await, 3000);
    assert_eq!(created_ms(store, "bare").await, 7000);
}

#[tokio::test]
async fn a_sqlite_file_from_before_creation_times_is_upgraded() {
    // Removed with its -wal and -shm files when the test ends, however it ends.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-created.sqlite");
    let connection = rusqlite::Connection::open(&path).unwrap();
    connection
        .execute_batch(&(tables_before_created_at("INTEGER") + &runs_before_created_at()))
        .unwrap();
    let store = SqliteStore::open(&path).unwrap();
    old_runs_get_a_creation_time(&store).await;
    // An old release still inserts without the column.
    connection
        .execute(
            "INSERT INTO reins_runs (run_id, version, format, status, state, updated_at)
             VALUES ('later', 1, ?1, 'completed', '{}', 11000)",
            [FORMAT_VERSION],
        )
        .unwrap();
    assert_eq!(created_ms(&store, "later").await, 11000);
    // Opened again, nothing moves.
    old_runs_get_a_creation_time(&SqliteStore::open(&path).unwrap()).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_postgres_database_from_before_creation_times_is_upgraded() {
    let url = postgres_database().await;
    let client = postgres_client(&url).await;
    client
        .batch_execute(&(tables_before_created_at("BIGINT") + &runs_before_created_at()))
        .await
        .unwrap();
    let store = reins::store::PostgresStore::connect(&url).await.unwrap();
    old_runs_get_a_creation_time(&store).await;
    client
        .execute(
            "INSERT INTO reins_runs (run_id, version, format, status, state, updated_at)
             VALUES ('later', 1, $1, 'completed', '{}', 11000)",
            &[&i64::from(FORMAT_VERSION)],
        )
        .await
        .unwrap();
    assert_eq!(created_ms(&store, "later").await, 11000);
    let again = reins::store::PostgresStore::connect(&url).await.unwrap();
    old_runs_get_a_creation_time(&again).await;
}
