//! Databases as the release before agent names left them — its runs table only, the store
//! adding the rest on opening — with the runs it stored, for the tests that open such a
//! database ([`agent_names`](super::agent_names), [`opened_together`](super::opened_together),
//! [`schema_generation`](super::schema_generation)).

#[cfg(feature = "postgres")]
use super::postgres_client;
use reins::store::FORMAT_VERSION;

/// The runs table as that release made it (the same in both databases, but for the integer
/// type).
fn runs_table(integer: &str) -> String {
    format!(
        "CREATE TABLE reins_runs (
            run_id TEXT PRIMARY KEY, version {integer} NOT NULL, format {integer} NOT NULL,
            status TEXT NOT NULL, state TEXT NOT NULL, lease_owner TEXT, lease_token TEXT,
            lease_until {integer} NOT NULL DEFAULT 0, updated_at {integer} NOT NULL,
            created_at {integer}
        );"
    )
}

/// The statement with which that release stored a run: `$1` its id, `$2` its format, `$3`
/// its state.
const INSERT: &str =
    "INSERT INTO reins_runs (run_id, version, format, status, state, updated_at, created_at)
     VALUES ($1, 1, $2, 'running', $3, 5000, 5000)";

/// A SQLite file that release wrote, and a connection to it that goes on writing as it did.
pub(super) struct OldSqliteFile(rusqlite::Connection);

impl OldSqliteFile {
    /// Makes the file at `path` one that release wrote, holding `runs` (each its id and its
    /// state as stored), in one transaction.
    pub(super) fn create(path: &std::path::Path, runs: Vec<(String, String)>) -> Self {
        let mut connection = rusqlite::Connection::open(path).unwrap();
        let old = connection.transaction().unwrap();
        old.execute_batch(&runs_table("INTEGER")).unwrap();
        for (run_id, state) in runs {
            insert_sqlite(&old, &run_id, &state);
        }
        old.commit().unwrap();
        OldSqliteFile(connection)
    }

    /// Stores a run as that release did, on a file set up since.
    pub(super) fn insert(&self, run_id: &str, state: &str) {
        insert_sqlite(&self.0, run_id, state);
    }

    /// The connection, for writes behind the store's back.
    pub(super) fn connection(&self) -> &rusqlite::Connection {
        &self.0
    }
}

fn insert_sqlite(connection: &rusqlite::Connection, run_id: &str, state: &str) {
    connection
        .execute(
            &INSERT.replace('$', "?"),
            rusqlite::params![run_id, FORMAT_VERSION, state],
        )
        .unwrap();
}

/// A PostgreSQL database that release wrote, and a connection to it that goes on writing as
/// it did.
#[cfg(feature = "postgres")]
pub(super) struct OldPostgresDatabase(tokio_postgres::Client);

#[cfg(feature = "postgres")]
impl OldPostgresDatabase {
    /// Makes the (empty) database at `url` one that release wrote, holding `runs` (each its id
    /// and its state as stored).
    pub(super) async fn create(url: &str, runs: Vec<(String, String)>) -> Self {
        let client = postgres_client(url).await;
        client.batch_execute(&runs_table("BIGINT")).await.unwrap();
        let database = OldPostgresDatabase(client);
        for (run_id, state) in runs {
            database.insert(&run_id, &state).await;
        }
        database
    }

    /// Stores a run as that release did, on a database set up since.
    pub(super) async fn insert(&self, run_id: &str, state: &str) {
        self.0
            .execute(INSERT, &[&run_id, &i64::from(FORMAT_VERSION), &state])
            .await
            .unwrap();
    }
}
