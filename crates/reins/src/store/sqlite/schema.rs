//! The SQLite store's tables, created when a file is opened, and the one change to a table
//! that files written by earlier releases need.

use super::rows::backend;
use crate::store::StoreError;
use rusqlite::{Connection, TransactionBehavior};

/// The tables every file holds.
pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS reins_runs (
    run_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    format INTEGER NOT NULL,
    status TEXT NOT NULL,
    state TEXT NOT NULL,
    lease_owner TEXT,
    lease_token TEXT,
    lease_until INTEGER NOT NULL DEFAULT 0,
    updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS reins_runs_status ON reins_runs (status);
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

/// Keeps the state just written at `version` as a checkpoint, with the journal's length.
pub(super) const SNAPSHOT: &str = "INSERT INTO reins_checkpoints (run_id, version, status, format, state, journal_len, created_at)
     SELECT ?1, ?2, ?3, ?4, ?5, (SELECT COUNT(*) FROM reins_journal WHERE run_id = ?1), ?6";

/// Adds the `lease_token` column to a table created before leases had tokens. In one
/// `IMMEDIATE` transaction, so processes opening the file together do not both add it.
pub(super) fn add_lease_token(connection: &mut Connection) -> Result<(), StoreError> {
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let present: i64 = transaction
        .query_row(
            "SELECT COUNT(*) FROM pragma_table_info('reins_runs') WHERE name = 'lease_token'",
            [],
            |row| row.get(0),
        )
        .map_err(backend)?;
    if present == 0 {
        transaction
            .execute_batch("ALTER TABLE reins_runs ADD COLUMN lease_token TEXT")
            .map_err(backend)?;
    }
    transaction.commit().map_err(backend)
}
