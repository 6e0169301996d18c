//! The generation of the tables a SQL store's database records (`reins_schema`): a new
//! database records this release's, an older one gets it on its upgrade and keeps its runs,
//! one set up by a newer release whose tables this one cannot use is refused and left as it
//! is; opening a database already set up does not wait for the writes under way to its runs
//! (every CLI command opens the store), yet makes again a table or an index dropped by hand;
//! and a PostgreSQL role that may not read `reins_schema` is told so.

use super::agent_names::run_of;
#[cfg(feature = "postgres")]
use super::before_agent_names::OldPostgresDatabase;
use super::before_agent_names::OldSqliteFile;
use super::uuid_like;
#[cfg(feature = "postgres")]
use super::{postgres_client, postgres_database};
use reins::store::{RunStore, SCHEMA_GENERATION, SqliteStore, StoreError};

/// The generation a newer release records for tables this one cannot use.
fn newer() -> i64 {
    i64::from(SCHEMA_GENERATION) + 1
}

/// The generation the SQLite file at `path` records.
fn sqlite_generation(path: &std::path::Path) -> i64 {
    rusqlite::Connection::open(path)
        .unwrap()
        .query_row("SELECT oldest_generation FROM reins_schema", [], |row| {
            row.get(0)
        })
        .unwrap()
}

/// Everything the SQLite file at `path` holds: its tables and indexes as made, then every
/// run's row and the generation.
fn sqlite_contents(path: &std::path::Path) -> Vec<String> {
    let connection = rusqlite::Connection::open(path).unwrap();
    let mut contents = Vec::new();
    for query in [
        "SELECT type || ' ' || name || ': ' || COALESCE(sql, '') FROM sqlite_schema ORDER BY name",
        "SELECT run_id || ' ' || version || ' ' || status || ' ' || state FROM reins_runs ORDER BY run_id",
        "SELECT 'generation ' || oldest_generation FROM reins_schema",
    ] {
        let mut statement = connection.prepare(query).unwrap();
        let rows = statement
            .query_map([], |row| row.get::<_, String>(0))
            .unwrap();
        contents.extend(rows.map(Result::unwrap));
    }
    contents
}

#[tokio::test]
async fn a_new_sqlite_file_records_the_generation_of_its_tables() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.sqlite");
    SqliteStore::open(&path).unwrap();
    assert_eq!(sqlite_generation(&path), i64::from(SCHEMA_GENERATION));
}

#[tokio::test]
async fn an_older_sqlite_file_records_it_on_its_upgrade_and_keeps_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("runs-{}.sqlite", uuid_like()));
    let state = serde_json::to_string(&run_of("old", Some("triage"))).unwrap();
    OldSqliteFile::create(&path, vec![("old".to_owned(), state)]);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(sqlite_generation(&path), i64::from(SCHEMA_GENERATION));
    let runs = store.list().await.unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(store.load("old").await.unwrap().run_id, "old");
}

/// A file a newer release set up: this release's tables with a run, the generation raised
/// and an index gone (as a newer layout may drop one), by hand.
async fn newer_sqlite_file(path: &std::path::Path) {
    let store = SqliteStore::open(path).unwrap();
    store
        .create(&run_of("kept", Some("triage")), "worker")
        .await
        .unwrap();
    drop(store);
    rusqlite::Connection::open(path)
        .unwrap()
        .execute_batch(&format!(
            "UPDATE reins_schema SET oldest_generation = {}; DROP INDEX reins_runs_status;",
            newer()
        ))
        .unwrap();
}

#[tokio::test]
async fn a_sqlite_file_a_newer_release_set_up_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.sqlite");
    newer_sqlite_file(&path).await;
    let before = sqlite_contents(&path);

    for shared in [false, true] {
        let opened = if shared {
            SqliteStore::open_in_shared_database(&path)
        } else {
            SqliteStore::open(&path)
        };
        match opened {
            Err(StoreError::UnsupportedSchema {
                database,
                found,
                supported,
            }) => {
                assert_eq!((found, supported), (newer(), SCHEMA_GENERATION));
                assert_eq!(database, path.display().to_string());
            }
            other => panic!("shared {shared}: {other:?}"),
        }
    }
    let message = SqliteStore::open(&path).unwrap_err().to_string();
    assert!(message.contains("newer reins"), "{message}");
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert_eq!(sqlite_contents(&path), before, "nothing in it changed");
}

/// A file set up already is only read on opening: an open while another process holds the
/// write lock, a write to the runs uncommitted, opens (it does not wait for the writer, and
/// fail with "database is locked" when the busy timeout runs out).
/// Whether the SQLite file at `path` has the runs' status index.
fn has_status_index(path: &std::path::Path) -> bool {
    rusqlite::Connection::open(path)
        .unwrap()
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE name = 'reins_runs_status')",
            [],
            |row| row.get(0),
        )
        .unwrap()
}

/// The layout decides whether a file of this generation is set up again: an earlier one (a
/// release before something was added) gets what it lacks; a later one (a release after this
/// one added something) is used as it is, nothing made or recorded over it.
#[tokio::test]
async fn an_earlier_layout_is_set_up_again_and_a_later_one_used_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.sqlite");
    SqliteStore::open(&path).unwrap();
    let layout = |path: &std::path::Path| -> i64 {
        rusqlite::Connection::open(path)
            .unwrap()
            .query_row("SELECT layout FROM reins_schema", [], |row| row.get(0))
            .unwrap()
    };
    let current = layout(&path);
    let relayout = |to: i64| {
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch(&format!(
                "UPDATE reins_schema SET layout = {to}; DROP INDEX reins_runs_status;"
            ))
            .unwrap();
    };

    relayout(current - 1);
    SqliteStore::open(&path).unwrap();
    assert!(has_status_index(&path), "an earlier layout is completed");
    assert_eq!(layout(&path), current);

    relayout(current + 1);
    let store = SqliteStore::open(&path).unwrap();
    assert!(!has_status_index(&path), "a later layout is not touched");
    assert_eq!(layout(&path), current + 1);
    assert!(store.list().await.unwrap().is_empty());
}

/// A table and an index dropped by hand from a file set up already (its record saying it is
/// whole) are made again on opening: the calls that need them work, rather than failing on a
/// missing table for good.
#[tokio::test]
async fn a_table_or_index_dropped_by_hand_is_made_again_on_opening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    store
        .create(&run_of("kept", Some("triage")), "worker")
        .await
        .unwrap();
    drop(store);
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("DROP TABLE reins_decision_log; DROP INDEX reins_runs_status;")
        .unwrap();

    let store = SqliteStore::open(&path).unwrap();
    assert!(store.decisions("kept").await.unwrap().is_empty());
    assert!(has_status_index(&path));
    assert_eq!(store.list().await.unwrap().len(), 1, "the run is kept");
}

#[tokio::test]
async fn a_sqlite_file_set_up_opens_while_another_process_writes_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.sqlite");
    let first = SqliteStore::open(&path).unwrap();
    first
        .create(&run_of("busy", Some("triage")), "worker")
        .await
        .unwrap();
    let writer = rusqlite::Connection::open(&path).unwrap();
    writer
        .execute_batch(
            "BEGIN IMMEDIATE; UPDATE reins_runs SET updated_at = updated_at + 1 WHERE run_id = 'busy';",
        )
        .unwrap();

    let opened = SqliteStore::open(&path).unwrap();
    assert_eq!(opened.list().await.unwrap().len(), 1);
    writer.execute_batch("COMMIT").unwrap();
}

#[cfg(feature = "postgres")]
mod postgres {
    use super::*;
    use reins::store::PostgresStore;
    use std::time::Duration;

    /// The generation the PostgreSQL database at `url` records.
    async fn generation(url: &str) -> i64 {
        postgres_client(url)
            .await
            .query_one("SELECT oldest_generation FROM reins_schema", &[])
            .await
            .unwrap()
            .get(0)
    }

    /// The tables and indexes of the database at `url`, every run's row, and the generation.
    async fn contents(url: &str) -> Vec<String> {
        let client = postgres_client(url).await;
        let mut contents = Vec::new();
        for query in [
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1",
            "SELECT indexname || ': ' || indexdef FROM pg_indexes
                WHERE schemaname = current_schema() ORDER BY 1",
            "SELECT table_name || '.' || column_name FROM information_schema.columns
                WHERE table_schema = current_schema() ORDER BY 1",
            "SELECT run_id || ' ' || version || ' ' || status || ' ' || state
                FROM reins_runs ORDER BY run_id",
            "SELECT 'generation ' || oldest_generation FROM reins_schema",
        ] {
            for row in client.query(query, &[]).await.unwrap() {
                contents.push(row.get(0));
            }
        }
        contents
    }

    #[tokio::test]
    async fn a_new_postgres_database_records_the_generation_of_its_tables() {
        let url = postgres_database().await;
        PostgresStore::connect(&url).await.unwrap();
        assert_eq!(generation(&url).await, i64::from(SCHEMA_GENERATION));
    }

    #[tokio::test]
    async fn an_older_postgres_database_records_it_on_its_upgrade_and_keeps_its_runs() {
        let url = postgres_database().await;
        let state = serde_json::to_string(&run_of("old", Some("triage"))).unwrap();
        OldPostgresDatabase::create(&url, vec![("old".to_owned(), state)]).await;

        let store = PostgresStore::connect(&url).await.unwrap();
        assert_eq!(generation(&url).await, i64::from(SCHEMA_GENERATION));
        assert_eq!(store.list().await.unwrap().len(), 1);
        assert_eq!(store.load("old").await.unwrap().run_id, "old");
    }

    /// A table and an index dropped by hand from a database set up already are made again on
    /// connecting, and the calls needing them work.
    #[tokio::test]
    async fn a_table_or_index_dropped_by_hand_is_made_again_on_connecting() {
        let url = postgres_database().await;
        let store = PostgresStore::connect(&url).await.unwrap();
        store
            .create(&run_of("kept", Some("triage")), "worker")
            .await
            .unwrap();
        let admin = postgres_client(&url).await;
        admin
            .batch_execute("DROP TABLE reins_decision_log; DROP INDEX reins_runs_status;")
            .await
            .unwrap();

        let store = PostgresStore::connect(&url).await.unwrap();
        assert!(store.decisions("kept").await.unwrap().is_empty());
        let index: bool = admin
            .query_one("SELECT to_regclass('reins_runs_status') IS NOT NULL", &[])
            .await
            .unwrap()
            .get(0);
        assert!(index, "the index is made again");
        assert_eq!(store.list().await.unwrap().len(), 1, "the run is kept");
    }

    /// A role granted the run tables but not `reins_schema` is told, on connecting, which
    /// privilege it lacks on which table (and not its password); granted it, it connects and
    /// works, without the right to create tables (none is made: they are all there).
    #[tokio::test]
    async fn a_role_that_may_not_read_reins_schema_is_told_what_it_lacks() {
        let url = postgres_database().await;
        PostgresStore::connect(&url).await.unwrap();
        let admin = postgres_client(&url).await;
        let role = format!("reins_worker_{}", uuid_like().replace('-', "_"));
        let password = "worker-password-7f3a";
        admin
            .batch_execute(&format!(
                "CREATE ROLE {role} LOGIN PASSWORD '{password}';
                 GRANT SELECT, INSERT, UPDATE, DELETE ON reins_runs, reins_journal,
                     reins_decisions, reins_decision_log, reins_checkpoints TO {role};"
            ))
            .await
            .unwrap();
        // The server lets only its administrator in over TCP: the role comes in by its socket.
        let row = admin
            .query_one(
                "SELECT split_part(current_setting('unix_socket_directories'), ',', 1),
                     current_setting('port'), current_database()",
                &[],
            )
            .await
            .unwrap();
        let (socket, port, database): (String, String, String) =
            (row.get(0), row.get(1), row.get(2));
        // The default `sslmode` (`prefer`): no TLS on a socket, and none asked for.
        let as_role =
            format!("host={socket} port={port} user={role} password={password} dbname={database}");

        let message = PostgresStore::connect(&as_role)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("lacks the SELECT privilege on the table reins_schema"),
            "{message}"
        );
        assert!(message.contains(&database), "{message}");
        assert!(!message.contains(password), "{message}");

        admin
            .batch_execute(&format!("GRANT SELECT ON reins_schema TO {role}"))
            .await
            .unwrap();
        let store = PostgresStore::connect(&as_role).await.unwrap();
        store
            .create(&run_of("by-role", None), "worker")
            .await
            .unwrap();
        assert_eq!(store.list().await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn a_postgres_database_a_newer_release_set_up_is_refused_and_left_as_it_is() {
        let url = postgres_database().await;
        let store = PostgresStore::connect(&url).await.unwrap();
        store
            .create(&run_of("kept", Some("triage")), "worker")
            .await
            .unwrap();
        postgres_client(&url)
            .await
            .batch_execute(&format!(
                "UPDATE reins_schema SET oldest_generation = {}; DROP INDEX reins_runs_status;",
                newer()
            ))
            .await
            .unwrap();
        let before = contents(&url).await;

        // The password is not asked for (the tests' server trusts the user), only given.
        let with_password = format!("{url} password=never-shown-secret");
        match PostgresStore::connect(&with_password).await {
            Err(error @ StoreError::UnsupportedSchema { .. }) => {
                let StoreError::UnsupportedSchema {
                    database,
                    found,
                    supported,
                } = &error
                else {
                    unreachable!()
                };
                assert_eq!((*found, *supported), (newer(), SCHEMA_GENERATION));
                assert!(database.contains("reins_test_"), "{database}");
                let message = error.to_string();
                assert!(message.contains("newer reins"), "{message}");
                assert!(!message.contains("never-shown-secret"), "{message}");
                assert!(!format!("{error:?}").contains("never-shown-secret"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(contents(&url).await, before, "nothing in it changed");
    }

    /// Connecting to tables set up already takes no lock on the runs: a connect while another
    /// transaction has written to a run, uncommitted, completes (`CREATE INDEX IF NOT EXISTS`
    /// on every connect waited for that transaction, and held new writes back behind it).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_postgres_connect_does_not_wait_for_writes_to_the_runs() {
        let url = postgres_database().await;
        let store = PostgresStore::connect(&url).await.unwrap();
        store
            .create(&run_of("busy", Some("triage")), "worker")
            .await
            .unwrap();
        let writer = postgres_client(&url).await;
        writer
            .batch_execute(
                "BEGIN; UPDATE reins_runs SET updated_at = updated_at + 1 WHERE run_id = 'busy';",
            )
            .await
            .unwrap();

        let connected = tokio::time::timeout(Duration::from_secs(30), PostgresStore::connect(&url))
            .await
            .expect("the connect finished while the write was under way")
            .unwrap();
        assert_eq!(connected.list().await.unwrap().len(), 1);
        writer.batch_execute("ROLLBACK").await.unwrap();
    }
}
