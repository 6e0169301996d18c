//! What a SQLite store makes of files it did not write: one that is not a database, another
//! application's database, and a run whose row holds a value of the wrong type.

use super::RunStateBuilder;
use reins::store::{RunQuery, RunStore, SqliteStore, StoreError};

#[test]
fn a_file_that_is_not_a_database_is_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(
        &path,
        "Shopping list: bread, milk, and a new lease on life.\n".repeat(20),
    )
    .unwrap();
    let error = SqliteStore::open(&path).unwrap_err();
    let message = error.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("not a database"), "{message}");
}

/// The names of the tables in the SQLite database at `path`.
fn tables(path: &std::path::Path) -> Vec<String> {
    let connection = rusqlite::Connection::open(path).unwrap();
    let mut statement = connection
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .unwrap();
    let names = statement.query_map([], |row| row.get(0)).unwrap();
    names.collect::<Result<_, _>>().unwrap()
}

#[tokio::test]
async fn another_applications_database_is_left_alone_unless_shared_on_purpose() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE customers (name TEXT); INSERT INTO customers VALUES ('Ada');")
        .unwrap();

    let error = SqliteStore::open(&path).unwrap_err();
    let message = error.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(
        message.contains("another application's tables"),
        "{message}"
    );
    assert_eq!(tables(&path), ["customers"], "nothing was added");

    let shared = SqliteStore::open_in_shared_database(&path).unwrap();
    assert!(shared.list().await.unwrap().is_empty());
    let now = tables(&path);
    assert!(now.contains(&"customers".to_owned()) && now.contains(&"reins_runs".to_owned()));
    // Once it holds the store's tables, it is the store's file too.
    SqliteStore::open(&path).unwrap();

    // An empty file is a new store's.
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, "").unwrap();
    SqliteStore::open(&empty).unwrap();
}

/// SQLite does not enforce column types: a run whose row holds text where a number belongs
/// (written by another program) is corrupt, named, like a record that is not JSON; the
/// listing of pages reports it and goes on.
#[tokio::test]
async fn a_column_of_the_wrong_type_makes_that_run_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    for run_id in ["bad", "good"] {
        let mut state = RunStateBuilder::suspended_example();
        state.run_id = run_id.to_owned();
        let lease = store.create(&state, "worker").await.unwrap();
        store.checkpoint(&lease, &state, &[], true).await.unwrap();
    }
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("UPDATE reins_runs SET version = 'seven' WHERE run_id = 'bad'")
        .unwrap();
    let is_corrupt_bad =
        |error: &StoreError| matches!(error, StoreError::Corrupt { run_id, .. } if run_id == "bad");

    let loaded = store.load("bad").await.unwrap_err();
    assert!(is_corrupt_bad(&loaded), "{loaded:?}");
    let claimed = store.claim("bad", "worker").await.unwrap_err();
    assert!(is_corrupt_bad(&claimed), "{claimed:?}");
    let listed = store.list().await.unwrap_err();
    assert!(is_corrupt_bad(&listed), "{listed:?}");
    let page = store.list_runs(&RunQuery::new()).await.unwrap();
    let runs: Vec<&str> = page.runs.iter().map(|run| run.run_id.as_str()).collect();
    assert_eq!(runs, ["good"], "{page:?}");
    assert_eq!(page.unreadable.len(), 1, "{page:?}");
    assert!(is_corrupt_bad(&page.unreadable[0].error), "{page:?}");
    store.load("good").await.unwrap();
}
