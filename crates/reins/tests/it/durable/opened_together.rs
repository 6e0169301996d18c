//! Several processes opening one database at the same moment — CLI runs, the web inbox and
//! workers started together, or all restarted after an upgrade: every one opens it, none
//! fails on another's half-made tables ("duplicate column", "already exists", "database is
//! locked"), and a database of an earlier release is upgraded once, whole (every run's agent
//! filled in), whoever does it.

use super::agent_names::run_of;
#[cfg(feature = "postgres")]
use super::before_agent_names::OldPostgresDatabase;
use super::before_agent_names::OldSqliteFile;
#[cfg(feature = "postgres")]
use super::postgres_database;
use super::uuid_like;
use reins::store::{RunQuery, RunStore, SqliteStore};
use std::sync::{Arc, Barrier};

/// How many open the database at once.
const OPENERS: usize = 16;

/// How many databases each test opens so, one after the other: the openers' order differs each
/// time, and a race lost once in a few rounds shows.
const ROUNDS: usize = 32;

/// How many runs the earlier release stored: enough that filling their agents takes a while.
const OLD_RUNS: usize = 300;

/// The runs the earlier release stored: `old-N`, of the agent `agent-N`, each state as JSON.
fn old_runs() -> Vec<(String, String)> {
    (0..OLD_RUNS)
        .map(|index| {
            let run_id = format!("old-{index}");
            let state = run_of(&run_id, Some(&format!("agent-{index}")));
            (run_id, serde_json::to_string(&state).unwrap())
        })
        .collect()
}

/// Every old run is listed, with the agent its state names.
async fn old_runs_are_listed_with_their_agents(store: &impl RunStore) {
    let page = store
        .list_runs(&RunQuery::new().page_size(OLD_RUNS + 1))
        .await
        .unwrap();
    assert!(page.unreadable.is_empty(), "{:?}", page.unreadable);
    assert_eq!(page.runs.len(), OLD_RUNS);
    for run in &page.runs {
        let index = run.run_id.trim_start_matches("old-");
        assert_eq!(
            run.agent_name.as_deref(),
            Some(format!("agent-{index}").as_str()),
            "{run:?}"
        );
    }
}

/// Opens the SQLite file at `path` from [`OPENERS`] threads at once (each its own connection,
/// as each process has), and says what each got.
fn open_sqlite_together(path: &std::path::Path) -> Vec<Result<SqliteStore, String>> {
    let start = Arc::new(Barrier::new(OPENERS));
    let openers: Vec<_> = (0..OPENERS)
        .map(|_| {
            let (path, start) = (path.to_owned(), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                SqliteStore::open(&path).map_err(|error| error.to_string())
            })
        })
        .collect();
    openers
        .into_iter()
        .map(|opener| opener.join().unwrap())
        .collect()
}

/// Every opener got a store; the first is handed back.
fn all_opened<S>(opened: Vec<Result<S, String>>) -> S {
    let failures: Vec<_> = opened.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(failures.is_empty(), "some openers failed: {failures:?}");
    opened.into_iter().next().unwrap().unwrap()
}

#[tokio::test]
async fn a_new_sqlite_file_opened_by_many_at_once_opens_for_all() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..ROUNDS {
        let path = dir.path().join(format!("runs-{round}.sqlite"));
        let store = all_opened(open_sqlite_together(&path));
        store
            .create(&run_of("first", Some("triage")), "worker")
            .await
            .unwrap();
        assert_eq!(store.list().await.unwrap().len(), 1);
    }
}

/// Another process in the middle of opening a new file holds its write lock while it switches
/// the file to write-ahead logging: an open meanwhile waits for it (as for any writer), and
/// does not fail at once with "database is locked".
#[tokio::test]
async fn a_sqlite_file_another_opener_is_switching_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.sqlite");
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let done = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        other.execute_batch("COMMIT").unwrap();
    });
    let store = SqliteStore::open(&path).unwrap();
    done.join().unwrap();
    assert!(store.list().await.unwrap().is_empty());
}

#[tokio::test]
async fn an_older_sqlite_file_opened_by_many_at_once_is_upgraded_once() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..ROUNDS {
        let path = dir
            .path()
            .join(format!("runs-{}-{round}.sqlite", uuid_like()));
        drop(OldSqliteFile::create(&path, old_runs()));
        let store = all_opened(open_sqlite_together(&path));
        old_runs_are_listed_with_their_agents(&store).await;
    }
}

/// Connects [`OPENERS`] stores (each its own pool, as each process has) to `url` at once.
#[cfg(feature = "postgres")]
async fn connect_postgres_together(url: &str) -> Vec<Result<reins::store::PostgresStore, String>> {
    let connects = (0..OPENERS).map(|_| async {
        reins::store::PostgresStore::connect(url)
            .await
            .map_err(|error| error.to_string())
    });
    futures::future::join_all(connects).await
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_new_postgres_database_connected_to_by_many_at_once_opens_for_all() {
    for _ in 0..4 {
        let url = postgres_database().await;
        let store = all_opened(connect_postgres_together(&url).await);
        store
            .create(&run_of("first", Some("triage")), "worker")
            .await
            .unwrap();
        assert_eq!(store.list().await.unwrap().len(), 1);
    }
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_older_postgres_database_connected_to_by_many_at_once_is_upgraded_once() {
    for _ in 0..4 {
        let url = postgres_database().await;
        OldPostgresDatabase::create(&url, old_runs()).await;
        let store = all_opened(connect_postgres_together(&url).await);
        old_runs_are_listed_with_their_agents(&store).await;
    }
}
