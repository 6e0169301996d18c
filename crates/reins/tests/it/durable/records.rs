//! Records a store cannot simply read: unreadable runs, older schemas, corrupt or foreign records.

use super::{RunStateBuilder, Seen, agent, approval_round_trip, script};
use reins::agent::*;
use reins::store::{MemoryStore, RunQuery, RunStore, SqliteStore, StoreError, UnreadableRun};
use reins::testing::ScriptedModel;
use std::sync::{Arc, Mutex};

#[cfg(feature = "postgres")]
use super::{postgres_client, postgres_database};

/// Three runs wait for a payment approval; `corrupt` makes some of them unreadable and
/// returns their ids. The listing shows the others' approvals and reports those by id.
async fn unreadable_runs_are_reported<F, Fut>(store: impl RunStore + Clone, corrupt: F)
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Vec<&'static str>>,
{
    let log = Arc::new(Mutex::new(Vec::new()));
    let waiting = ["wait-a", "wait-b", "wait-c"];
    for run_id in waiting {
        let error = agent(script(), log.clone(), Seen::default())
            .prompt("pay the bill")
            .run_id(run_id)
            .durable(store.clone())
            .await
            .unwrap_err();
        assert!(matches!(error, PromptError::Suspended { .. }), "{error:?}");
    }
    let mut unreadable = corrupt().await;
    unreadable.sort_unstable();

    let listing = store.pending_approvals().await.unwrap();
    let mut listed: Vec<&str> = listing
        .approvals
        .iter()
        .map(|approval| approval.run_id.as_str())
        .collect();
    listed.sort_unstable();
    let readable: Vec<&str> = waiting
        .into_iter()
        .filter(|run_id| !unreadable.contains(run_id))
        .collect();
    assert_eq!(listed, readable, "every readable run's approval is listed");
    assert!(listing.approvals.iter().all(|a| a.tool_name == "pay"));
    let mut reported: Vec<&str> = listing
        .unreadable
        .iter()
        .map(|run| run.run_id.as_str())
        .collect();
    reported.sort_unstable();
    assert_eq!(reported, unreadable, "every unreadable run is reported");
    for UnreadableRun { run_id, error } in &listing.unreadable {
        assert!(
            matches!(error, StoreError::Corrupt { run_id: id, .. } if id == run_id),
            "{error:?}"
        );
    }
    // Reported, not repaired or removed: the same listing again.
    assert_eq!(store.pending_approvals().await.unwrap(), listing);
}

#[tokio::test]
async fn unreadable_runs_are_reported_in_memory() {
    let store = MemoryStore::new();
    let handle = store.clone();
    unreadable_runs_are_reported(store, || async move {
        handle.put_raw("wait-b", 1, "{not json");
        vec!["wait-b"]
    })
    .await;
}

#[tokio::test]
async fn unreadable_runs_are_reported_in_sqlite() {
    // Removed with its -wal and -shm files when the test ends, however it ends.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unreadable.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    let file = path.clone();
    unreadable_runs_are_reported(store, || async move {
        let connection = rusqlite_connection(&file);
        // wait-b's state is not JSON; wait-c has a decision that is not JSON.
        connection
            .execute_batch(
                "UPDATE reins_runs SET state = '{not json' WHERE run_id = 'wait-b';
                 INSERT INTO reins_decisions (run_id, internal_call_id, decision, decided_at)
                 VALUES ('wait-c', 't9c9', '{not json', 0);",
            )
            .unwrap();
        vec!["wait-b", "wait-c"]
    })
    .await;
}

/// A run whose stored status is none this release knows (another release's, or one written
/// behind the store's back) is unreadable like a corrupt record: reported by id with the
/// reason among the approvals and in a page of runs, never listed as running, skipped or
/// deleted. `set_status` stores the status `paused` for the run it is given.
async fn an_unknown_status_is_reported<F, Fut>(store: impl RunStore + Clone, set_status: F)
where
    F: FnOnce(&'static str) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    unreadable_runs_are_reported(store.clone(), || async move {
        set_status("wait-b").await;
        vec!["wait-b"]
    })
    .await;
    let is_unknown_status = |error: &StoreError| {
        matches!(error, StoreError::Corrupt { run_id, message }
            if run_id == "wait-b" && message.contains("`paused`"))
    };
    let page = store.list_runs(&RunQuery::new()).await.unwrap();
    let listed: Vec<&str> = page.runs.iter().map(|run| run.run_id.as_str()).collect();
    assert_eq!(listed, ["wait-a", "wait-c"], "{page:?}");
    assert_eq!(page.unreadable.len(), 1, "{page:?}");
    assert!(is_unknown_status(&page.unreadable[0].error), "{page:?}");
    // `list` has no place for unreadable runs: it names the run rather than guess its status.
    let error = store.list().await.unwrap_err();
    assert!(is_unknown_status(&error), "{error:?}");
    let error = store.delete("wait-b").await.unwrap_err();
    assert!(is_unknown_status(&error), "{error:?}");
    assert!(
        store.load("wait-b").await.is_ok(),
        "the record was left as it was"
    );
}

#[tokio::test]
async fn an_unknown_status_is_reported_in_memory() {
    let store = MemoryStore::new();
    let handle = store.clone();
    an_unknown_status_is_reported(store, |run_id| async move {
        handle.put_raw_status(run_id, "paused");
    })
    .await;
}

#[tokio::test]
async fn an_unknown_status_is_reported_in_sqlite() {
    // Removed with its -wal and -shm files when the test ends, however it ends.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("status.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    let file = path.clone();
    an_unknown_status_is_reported(store, |run_id| async move {
        rusqlite_connection(&file)
            .execute(
                "UPDATE reins_runs SET status = 'paused' WHERE run_id = ?1",
                [run_id],
            )
            .unwrap();
    })
    .await;
}

/// A file written before leases had tokens is upgraded when opened, and works.
#[tokio::test]
async fn a_sqlite_file_from_before_lease_tokens_is_upgraded() {
    // Removed with its -wal and -shm files when the test ends, however it ends.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old-schema.sqlite");
    rusqlite_connection(&path)
        .execute_batch(
            "CREATE TABLE reins_runs (
                run_id TEXT PRIMARY KEY, version INTEGER NOT NULL, format INTEGER NOT NULL,
                status TEXT NOT NULL, state TEXT NOT NULL, lease_owner TEXT,
                lease_until INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL
            );",
        )
        .unwrap();
    approval_round_trip(SqliteStore::open(&path).unwrap()).await;
    // Opening it again finds the column there.
    assert_eq!(
        SqliteStore::open(&path)
            .unwrap()
            .list()
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn corrupt_or_foreign_records_are_reported_and_left_untouched() {
    let store = MemoryStore::new();
    store.put_raw("bad-json", 1, "{not json");
    store.put_raw("future", 99, "{}");
    let agent = AgentBuilder::new(ScriptedModel::new([])).build();
    let error = agent
        .resume_stored(store.clone(), "bad-json")
        .await
        .unwrap_err();
    assert!(
        matches!(&error, PromptError::Store { source: StoreError::Corrupt { run_id, .. }, .. } if run_id == "bad-json"),
        "{error:?}"
    );
    let error = store.load("future").await.unwrap_err();
    assert_eq!(
        error,
        StoreError::UnsupportedFormat {
            run_id: "future".into(),
            found: 99,
            supported: reins::store::FORMAT_VERSION
        }
    );
    // Untouched: the same error again.
    assert!(matches!(
        store.load("bad-json").await,
        Err(StoreError::Corrupt { .. })
    ));
    let error = agent.resume_stored(store, "missing").await.unwrap_err();
    assert!(matches!(
        error,
        PromptError::Store {
            source: StoreError::NotFound(_),
            ..
        }
    ));
}

#[tokio::test]
async fn a_sqlite_record_in_an_unknown_format_is_left_untouched() {
    // Removed with its -wal and -shm files when the test ends, however it ends.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("format.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    let state = RunStateBuilder::suspended_example();
    store.create(&state, "w").await.unwrap();
    {
        let connection = rusqlite_connection(&path);
        connection
            .execute(
                "UPDATE reins_runs SET format = 7 WHERE run_id = 'r-lease'",
                [],
            )
            .unwrap();
    }
    let error = store.claim("r-lease", "w2").await.unwrap_err();
    assert!(
        matches!(error, StoreError::UnsupportedFormat { found: 7, .. }),
        "{error:?}"
    );
    let error = store.load("r-lease").await.unwrap_err();
    assert!(matches!(
        error,
        StoreError::UnsupportedFormat { found: 7, .. }
    ));
}

fn rusqlite_connection(path: &std::path::Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn unreadable_runs_are_reported_in_postgres() {
    let url = postgres_database().await;
    let store = reins::store::PostgresStore::connect(&url).await.unwrap();
    unreadable_runs_are_reported(store, || async move {
        // wait-b's state is not JSON; wait-c has a decision that is not JSON.
        postgres_client(&url)
            .await
            .batch_execute(
                "UPDATE reins_runs SET state = '{not json' WHERE run_id = 'wait-b';
                 INSERT INTO reins_decisions (run_id, internal_call_id, decision, decided_at)
                 VALUES ('wait-c', 't9c9', '{not json', 0);",
            )
            .await
            .unwrap();
        vec!["wait-b", "wait-c"]
    })
    .await;
}

/// A database created before leases had tokens is upgraded on connect, and works.
#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_postgres_database_from_before_lease_tokens_is_upgraded() {
    let url = postgres_database().await;
    postgres_client(&url)
        .await
        .batch_execute(
            "CREATE TABLE reins_runs (
                run_id TEXT PRIMARY KEY, version BIGINT NOT NULL, format BIGINT NOT NULL,
                status TEXT NOT NULL, state TEXT NOT NULL, lease_owner TEXT,
                lease_until BIGINT NOT NULL DEFAULT 0, updated_at BIGINT NOT NULL
            );",
        )
        .await
        .unwrap();
    let store = reins::store::PostgresStore::connect(&url).await.unwrap();
    approval_round_trip(store).await;
    let again = reins::store::PostgresStore::connect(&url).await.unwrap();
    assert_eq!(again.list().await.unwrap().len(), 1);
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn an_unknown_status_is_reported_in_postgres() {
    let url = postgres_database().await;
    let store = reins::store::PostgresStore::connect(&url).await.unwrap();
    an_unknown_status_is_reported(store, |run_id| async move {
        postgres_client(&url)
            .await
            .execute(
                "UPDATE reins_runs SET status = 'paused' WHERE run_id = $1",
                &[&run_id],
            )
            .await
            .unwrap();
    })
    .await;
}
