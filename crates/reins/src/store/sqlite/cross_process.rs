//! Decisions written by other processes: a [`DecisionWatch`](crate::store::DecisionWatch) on
//! a file checks, on a connection of its own, whether another process logged a decision.

use super::SqliteStore;
use super::rows::backend;
use crate::store::StoreError;
use crate::store::notify::{DecisionSignals, Feed};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Starts checking the file at `path` for decisions written by other processes, every
/// [`SqliteStore::CROSS_PROCESS_CHECK`], on a connection of its own. It reads where the
/// decision log ends before it returns, so no decision after that is missed.
pub(super) async fn check_other_processes(
    path: PathBuf,
    signals: DecisionSignals,
) -> Result<Feed, StoreError> {
    let (connection, mut seen) = tokio::task::spawn_blocking(move || {
        let connection = Connection::open(&path).map_err(backend)?;
        connection
            .busy_timeout(Duration::from_secs(10))
            .map_err(backend)?;
        let seen = LogPosition::read(&connection)?;
        Ok::<_, StoreError>((Arc::new(Mutex::new(connection)), seen))
    })
    .await
    .map_err(backend)??;
    let task = tokio::spawn(async move {
        let mut interval = tokio::time::interval(SqliteStore::CROSS_PROCESS_CHECK);
        loop {
            interval.tick().await;
            let connection = Arc::clone(&connection);
            let mut position = seen.clone();
            let checked = tokio::task::spawn_blocking(move || {
                let connection = connection.lock().unwrap_or_else(PoisonError::into_inner);
                position
                    .advance(&connection)
                    .map(|logged| (position, logged))
            })
            .await;
            match checked {
                Ok(Ok((position, logged))) => {
                    seen = position;
                    match logged {
                        Logged::Decided(runs) => {
                            for run_id in runs {
                                signals.recorded(&run_id);
                            }
                        }
                        Logged::Recheck => signals.recheck(),
                    }
                }
                Ok(Err(error)) => {
                    // Whatever was missed, the watches look at the store; the next check
                    // tries again from where the last one ended.
                    tracing::warn!(%error, "checking the run store for other processes' decisions failed");
                    signals.recheck();
                }
                Err(_) => return,
            }
        }
    });
    Ok(Feed::new(task.abort_handle()))
}

/// How far the decision log has been read: the file's `data_version`, the last row and what
/// that row held.
///
/// SQLite gives a new row the rowid after the largest one left, so once the newest logged
/// decisions are deleted (their run deleted or expired) the next ones reuse their rowids:
/// "after the last row read" then misses them. So each check first looks whether the last
/// row read is still there, the same.
#[derive(Clone)]
struct LogPosition {
    data_version: i64,
    rowid: i64,
    /// The last row read (`None`: the log was empty).
    last: Option<LoggedRow>,
}

/// What identifies a row of the decision log besides its rowid.
#[derive(Clone, PartialEq)]
struct LoggedRow {
    run_id: String,
    seq: i64,
    decided_at: i64,
}

/// What a check found.
enum Logged {
    /// The runs of the decisions logged since the last check.
    Decided(Vec<String>),
    /// Rows read before were deleted: what was logged since cannot be told apart from them.
    Recheck,
}

impl LogPosition {
    fn read(connection: &Connection) -> Result<Self, StoreError> {
        let data_version = connection
            .query_row("PRAGMA data_version", [], |row| row.get(0))
            .map_err(backend)?;
        let newest = connection
            .query_row(
                "SELECT rowid, run_id, seq, decided_at FROM reins_decision_log
                     ORDER BY rowid DESC LIMIT 1",
                [],
                |row| Ok((row.get(0)?, logged_row(row, 1)?)),
            )
            .optional()
            .map_err(backend)?;
        let (rowid, last) = newest.map_or((0, None), |(rowid, row)| (rowid, Some(row)));
        Ok(LogPosition {
            data_version,
            rowid,
            last,
        })
    }

    /// What was logged since the last read, if the file changed at all.
    fn advance(&mut self, connection: &Connection) -> Result<Logged, StoreError> {
        let data_version: i64 = connection
            .query_row("PRAGMA data_version", [], |row| row.get(0))
            .map_err(backend)?;
        if data_version == self.data_version {
            return Ok(Logged::Decided(Vec::new()));
        }
        let transaction = connection.unchecked_transaction().map_err(backend)?;
        if let Some(last) = &self.last {
            let still = transaction
                .query_row(
                    "SELECT run_id, seq, decided_at FROM reins_decision_log WHERE rowid = ?1",
                    params![self.rowid],
                    |row| logged_row(row, 0),
                )
                .optional()
                .map_err(backend)?;
            if still.as_ref() != Some(last) {
                *self = LogPosition::read(&transaction)?;
                return Ok(Logged::Recheck);
            }
        }
        self.data_version = data_version;
        let mut statement = transaction
            .prepare(
                "SELECT rowid, run_id, seq, decided_at FROM reins_decision_log WHERE rowid > ?1
                     ORDER BY rowid",
            )
            .map_err(backend)?;
        let rows = statement
            .query_map(params![self.rowid], |row| {
                Ok((row.get::<_, i64>(0)?, logged_row(row, 1)?))
            })
            .map_err(backend)?;
        let mut decided = Vec::new();
        for row in rows {
            let (rowid, row) = row.map_err(backend)?;
            decided.push(row.run_id.clone());
            self.rowid = rowid;
            self.last = Some(row);
        }
        Ok(Logged::Decided(decided))
    }
}

/// `(run_id, seq, decided_at)` from column `first` on.
fn logged_row(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<LoggedRow> {
    Ok(LoggedRow {
        run_id: row.get(first)?,
        seq: row.get(first + 1)?,
        decided_at: row.get(first + 2)?,
    })
}
