//! The SQLite store's tables, created when a file is opened, the columns that files written
//! by earlier releases are missing, and the generation of the tables a file records.

use super::rows::backend;
use crate::store::generation::{self, SetUp};
use crate::store::{SCHEMA_GENERATION, StoreError};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};
use std::time::{Duration, Instant};

/// The tables every file holds.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS reins_runs (
    run_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    format INTEGER NOT NULL,
    status TEXT NOT NULL,
    state TEXT NOT NULL,
    lease_owner TEXT,
    lease_token TEXT,
    lease_until INTEGER NOT NULL DEFAULT 0,
    updated_at INTEGER NOT NULL,
    created_at INTEGER,
    agent_name TEXT
);
CREATE INDEX IF NOT EXISTS reins_runs_status ON reins_runs (status);
-- The runs written last (`recent_runs`), of every status or of one; created on opening a
-- file of an earlier release too.
CREATE INDEX IF NOT EXISTS reins_runs_written ON reins_runs (updated_at, run_id);
CREATE INDEX IF NOT EXISTS reins_runs_status_written ON reins_runs (status, updated_at, run_id);
CREATE TABLE IF NOT EXISTS reins_journal (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    effect_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS reins_decisions (
    run_id TEXT NOT NULL,
    internal_call_id TEXT NOT NULL,
    decision TEXT NOT NULL,
    decided_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, internal_call_id)
);
CREATE TABLE IF NOT EXISTS reins_decision_log (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    internal_call_id TEXT NOT NULL,
    record TEXT NOT NULL,
    decided_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
);
-- One row: the oldest generation of reins that can use these tables (`SCHEMA_GENERATION`)
-- and the layout they were last set up in (`TABLES_LAYOUT`).
CREATE TABLE IF NOT EXISTS reins_schema (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    oldest_generation INTEGER NOT NULL,
    layout INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS reins_checkpoints (
    run_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    status TEXT NOT NULL,
    format INTEGER NOT NULL,
    state TEXT NOT NULL,
    journal_len INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, version)
);
";

/// Switches the file to write-ahead logging, waiting up to `patience` for other connections'
/// writes. SQLite does not call the busy handler for this switch (it takes the write lock from
/// a read it already holds), so a file that other processes are opening too (each switching
/// it) would otherwise fail at once with "database is locked".
pub(super) fn use_write_ahead_log(
    connection: &Connection,
    patience: Duration,
) -> Result<(), StoreError> {
    let started = Instant::now();
    loop {
        match connection.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(error, _))
                if error.code == rusqlite::ErrorCode::DatabaseBusy
                    && started.elapsed() < patience =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            done => return done.map_err(backend),
        }
    }
}

/// Makes the file the store's: refuses another application's (unless `shared`) and one whose
/// tables a newer release set up ([`StoreError::UnsupportedSchema`], naming it `database`),
/// then creates the tables, adds the columns earlier releases lack and records the
/// generation, in one `IMMEDIATE` transaction. Processes opening one file together take turns
/// (each waits for the write lock under the busy timeout, never upgrading a read to a write,
/// which SQLite would fail at once), and each sees the tables either all there and upgraded,
/// or not yet made: never one of them added twice, nor a column added but not yet filled.
///
/// A file whose tables already record this layout (or a later one), and hold every table and
/// index of it, is only read (one read transaction, which in WAL mode waits for no writer):
/// opening it does not wait for another process's write, as the write lock would. One missing
/// a table or an index (dropped by hand) is set up again as above.
pub(super) fn set_up(
    connection: &mut Connection,
    shared: bool,
    database: &str,
) -> Result<(), StoreError> {
    {
        let look = connection.transaction().map_err(backend)?;
        if !needs_set_up(&look, shared, database)? {
            return Ok(());
        }
    }
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    // Another opener may have set the file up since the look.
    if !needs_set_up(&transaction, shared, database)? {
        return Ok(());
    }
    transaction.execute_batch(SCHEMA).map_err(backend)?;
    add_missing_columns(&transaction)?;
    transaction
        .execute(
            generation::RECORD,
            [SCHEMA_GENERATION, generation::TABLES_LAYOUT],
        )
        .map_err(backend)?;
    transaction.commit().map_err(backend)
}

/// Whether the file's tables are the store's, in a layout this release uses as it is (one
/// read transaction): what a read-only handle needs. Another application's file, or one a newer
/// release set up, is refused as [`set_up`] refuses it.
pub(super) fn is_current(connection: &mut Connection, database: &str) -> Result<bool, StoreError> {
    let look = connection.transaction().map_err(backend)?;
    Ok(!needs_set_up(&look, false, database)?)
}

/// Whether the file's tables need setting up, refusing another application's file first
/// (unless `shared`: its tables say nothing of the store's) and then one whose recorded
/// generation is newer than this release's. Tables recording this layout need it only when
/// one of them (or an index) is missing.
fn needs_set_up(connection: &Connection, shared: bool, database: &str) -> Result<bool, StoreError> {
    if !shared {
        refuse_foreign(connection)?;
    }
    let recorded = if connection
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'reins_schema')",
            [],
            |row| row.get::<_, bool>(0),
        )
        .map_err(backend)?
    {
        connection
            .query_row(generation::READ, [], |row| {
                Ok(generation::Recorded {
                    oldest_generation: row.get(0)?,
                    layout: row.get(1)?,
                })
            })
            .optional()
            .map_err(backend)?
    } else {
        None
    };
    Ok(match generation::set_up_for(recorded, database)? {
        SetUp::Needed => true,
        SetUp::IfIncomplete => !all_present(connection)?,
        SetUp::Never => false,
    })
}

/// Whether every table and index of the layout is in the file (one read of its catalog).
fn all_present(connection: &Connection) -> Result<bool, StoreError> {
    let names = generation::TABLES_AND_INDEXES;
    let placeholders = vec!["?"; names.len()].join(", ");
    let present: usize = connection
        .query_row(
            &format!(
                "SELECT COUNT(*) FROM sqlite_schema
                     WHERE type IN ('table', 'index') AND name IN ({placeholders})"
            ),
            rusqlite::params_from_iter(names),
            |row| row.get(0),
        )
        .map_err(backend)?;
    Ok(present == names.len())
}

/// Refuses a database that holds tables and none of the store's: another application's,
/// which the store would otherwise fill with its own. Its record of the generation counts as
/// the store's too, so that a file of the store whose runs table was dropped by hand is set
/// up again rather than refused.
fn refuse_foreign(connection: &Connection) -> Result<(), StoreError> {
    let (tables, ours): (bool, bool) = connection
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table'
                     AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'),
                 EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table'
                     AND name IN ('reins_runs', 'reins_schema'))",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .map_err(backend)?;
    if tables && !ours {
        return Err(StoreError::Backend(
            "the database holds another application's tables and no runs: reins does not add \
             its tables to it (give the store a file of its own, or open it with \
             `SqliteStore::open_in_shared_database` to share this one)"
                .to_owned(),
        ));
    }
    Ok(())
}

/// Keeps the state just written at `version` as a checkpoint, with the journal's length.
pub(super) const SNAPSHOT: &str = "INSERT INTO reins_checkpoints (run_id, version, status, format, state, journal_len, created_at)
     SELECT ?1, ?2, ?3, ?4, ?5, (SELECT COUNT(*) FROM reins_journal WHERE run_id = ?1), ?6";

/// Fills `created_at` for the runs of a file written before runs kept it: the time of the
/// run's oldest checkpoint kept, else when the run was last written.
const FILL_CREATED_AT: &str = "UPDATE reins_runs SET created_at = COALESCE(
    (SELECT MIN(created_at) FROM reins_checkpoints WHERE reins_checkpoints.run_id = reins_runs.run_id),
    updated_at) WHERE created_at IS NULL";

/// Fills `agent_name` for the runs of a file written before runs kept it, from their states:
/// a state that is not JSON (corrupt), or names no agent, leaves it empty. `CASE` evaluates
/// in order, so a corrupt state is never given to `json_type`, which would fail the update.
const FILL_AGENT_NAME: &str = "UPDATE reins_runs SET agent_name = CASE WHEN json_valid(state) THEN
    CASE WHEN json_type(state, '$.agent_name') = 'text' THEN json_extract(state, '$.agent_name') END
    END WHERE agent_name IS NULL";

/// How `created_at` is read: a run written since by a release that does not set it (the
/// column may be null: such a release must still be able to insert) counts as created when
/// it was last written.
pub(super) const CREATED_AT: &str = "COALESCE(created_at, updated_at)";

/// Adds the columns a table created by an earlier release lacks: `lease_token` (before leases
/// had tokens), `created_at` (before runs kept when they were created) and `agent_name`
/// (before listings said whose each run is), the last two filled for the runs already there.
/// Inside [`set_up`]'s transaction.
fn add_missing_columns(transaction: &Connection) -> Result<(), StoreError> {
    let present = |column: &str| {
        transaction
            .query_row(
                "SELECT COUNT(*) FROM pragma_table_info('reins_runs') WHERE name = ?1",
                [column],
                |row| row.get::<_, i64>(0),
            )
            .map(|count| count > 0)
            .map_err(backend)
    };
    if !present("lease_token")? {
        transaction
            .execute_batch("ALTER TABLE reins_runs ADD COLUMN lease_token TEXT")
            .map_err(backend)?;
    }
    if !present("created_at")? {
        transaction
            .execute_batch("ALTER TABLE reins_runs ADD COLUMN created_at INTEGER")
            .map_err(backend)?;
        transaction
            .execute_batch(FILL_CREATED_AT)
            .map_err(backend)?;
    }
    if !present("agent_name")? {
        transaction
            .execute_batch("ALTER TABLE reins_runs ADD COLUMN agent_name TEXT")
            .map_err(backend)?;
        transaction
            .execute_batch(FILL_AGENT_NAME)
            .map_err(backend)?;
    }
    Ok(())
}
