//! How the store sets up its connection: `synchronous` is a setting of each connection, so
//! it is read back through the store's own.

use super::SqliteStore;
use std::sync::PoisonError;

/// SQLite's `PRAGMA synchronous` on the store's connection (1 `NORMAL`, 2 `FULL`).
fn synchronous(store: &SqliteStore) -> i64 {
    let connection = store
        .connection
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    connection
        .pragma_query_value(None, "synchronous", |row| row.get(0))
        .unwrap()
}

#[test]
fn every_commit_is_synced_unless_the_user_relaxes_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("runs.sqlite")).unwrap();
    assert_eq!(
        synchronous(&store),
        2,
        "FULL: a commit that returned is on disk"
    );
    let relaxed = store.clone().relaxed_durability().unwrap();
    assert_eq!(synchronous(&relaxed), 1, "NORMAL, as asked");
}

/// The tables and indexes opening checks for are those the set-up makes.
#[test]
fn the_layout_checked_on_opening_is_the_one_set_up() {
    let store = SqliteStore::in_memory().unwrap();
    let connection = store
        .connection
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let mut statement = connection
        .prepare(
            "SELECT name FROM sqlite_schema WHERE type IN ('table', 'index')
                 AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
        )
        .unwrap();
    let made: Vec<String> = statement
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut checked = crate::store::generation::TABLES_AND_INDEXES.to_vec();
    checked.sort_unstable();
    assert_eq!(made, checked);
}
