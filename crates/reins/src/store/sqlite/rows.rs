//! The SQLite store's row readers, shared by its reads and writes: a run's row, its
//! decisions, and deleting a run with everything kept about it.

use crate::run::RunState;
use crate::store::format::RUN_TABLES;
use crate::store::{RecordedDecision, StoreError, decode_decision, decode_state};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// A SQLite error as the store reports it.
pub(super) fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

/// An error reading a row of `run_id`: a column holding a value of the wrong type (SQLite
/// does not enforce column types, so another program may have written one) is that record's
/// fault, [`StoreError::Corrupt`]; any other error is the database's.
pub(super) fn row_error(run_id: &str, error: rusqlite::Error) -> StoreError {
    match error {
        rusqlite::Error::InvalidColumnType(..)
        | rusqlite::Error::FromSqlConversionFailure(..)
        | rusqlite::Error::IntegralValueOutOfRange(..)
        | rusqlite::Error::Utf8Error(..) => StoreError::Corrupt {
            run_id: run_id.to_owned(),
            message: error.to_string(),
        },
        error => backend(error),
    }
}

/// Runs `read`, a read of several statements, in one `DEFERRED` transaction: every statement
/// sees the file as it was at the first one, whatever other connections (other processes, or
/// other handles in this one) commit in between. Without it each statement would read the
/// file as it is when that statement starts, and a run deleted between two of them would be
/// found and then have nothing recorded. A `DEFERRED` transaction only reads: in WAL mode it
/// waits for no writer and holds none back.
pub(super) fn in_one_snapshot<T>(
    connection: &mut Connection,
    read: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let snapshot = connection
        .transaction_with_behavior(TransactionBehavior::Deferred)
        .map_err(backend)?;
    let value = read(&snapshot)?;
    snapshot.commit().map_err(backend)?;
    Ok(value)
}

/// The stored row of one run.
pub(super) struct Row {
    pub version: i64,
    pub format: i64,
    pub state: String,
    pub owner: Option<String>,
    pub lease_until: i64,
}

/// The stored row of `run_id`, if there is one.
pub(super) fn read_row(connection: &Connection, run_id: &str) -> Result<Option<Row>, StoreError> {
    connection
        .query_row(
            "SELECT version, format, state, lease_owner, lease_until FROM reins_runs WHERE run_id = ?1",
            params![run_id],
            |row| {
                Ok(Row {
                    version: row.get(0)?,
                    format: row.get(1)?,
                    state: row.get(2)?,
                    owner: row.get(3)?,
                    lease_until: row.get(4)?,
                })
            },
        )
        .optional()
        .map_err(|error| row_error(run_id, error))
}

/// The stored row of `run_id` and the state it holds ([`StoreError::NotFound`] when no such
/// run is stored).
pub(super) fn read_state(
    connection: &Connection,
    run_id: &str,
) -> Result<(Row, RunState), StoreError> {
    let row =
        read_row(connection, run_id)?.ok_or_else(|| StoreError::NotFound(run_id.to_owned()))?;
    let state = decode_state(run_id, row.format, &row.state)?;
    Ok((row, state))
}

/// The latest decision recorded for each of `run_id`'s calls, oldest first.
pub(super) fn read_decisions(
    connection: &Connection,
    run_id: &str,
) -> Result<Vec<RecordedDecision>, StoreError> {
    read_decision_rows(
        connection,
        "SELECT internal_call_id, decision, decided_at FROM reins_decisions WHERE run_id = ?1 ORDER BY decided_at",
        run_id,
    )
}

/// Deletes a run and everything kept about it, inside the caller's transaction.
pub(super) fn delete_run(connection: &Connection, run_id: &str) -> Result<(), StoreError> {
    for table in RUN_TABLES {
        connection
            .execute(
                &format!("DELETE FROM {table} WHERE run_id = ?1"),
                params![run_id],
            )
            .map_err(backend)?;
    }
    Ok(())
}

/// Reads `(internal_call_id, decision JSON, decided_at)` rows of `run_id` with `query`.
pub(super) fn read_decision_rows(
    connection: &Connection,
    query: &str,
    run_id: &str,
) -> Result<Vec<RecordedDecision>, StoreError> {
    let mut statement = connection.prepare(query).map_err(backend)?;
    let rows = statement
        .query_map(params![run_id], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, i64>(2)?,
            ))
        })
        .map_err(backend)?;
    let mut decisions = Vec::new();
    for row in rows {
        let (call_id, json, decided_at) = row.map_err(|error| row_error(run_id, error))?;
        decisions.push(decode_decision(run_id, &call_id, decided_at, &json)?);
    }
    Ok(decisions)
}
