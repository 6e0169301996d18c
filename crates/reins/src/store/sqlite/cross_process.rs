//! Decisions written by other processes: a [`DecisionWatch`](crate::store::DecisionWatch) on
//! a file checks, on a connection of its own, whether another process logged a decision.

use super::SqliteStore;
use super::rows::backend;
use crate::store::StoreError;
use crate::store::notify::{DecisionSignals, Feed};
use rusqlite::{Connection, params};
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
            let checked = tokio::task::spawn_blocking(move || {
                let connection = connection.lock().unwrap_or_else(PoisonError::into_inner);
                seen.advance(&connection).map(|decided| (seen, decided))
            })
            .await;
            match checked {
                Ok(Ok((position, decided))) => {
                    seen = position;
                    for run_id in decided {
                        signals.recorded(&run_id);
                    }
                }
                Ok(Err(error)) => {
                    // Whatever was missed, the watches look at the store; the next check
                    // tries again.
                    tracing::warn!(%error, "checking the run store for other processes' decisions failed");
                    signals.recheck();
                }
                Err(_) => return,
            }
        }
    });
    Ok(Feed::new(task.abort_handle()))
}

/// How far the decision log has been read: the file's `data_version` and the last row.
#[derive(Clone, Copy)]
struct LogPosition {
    data_version: i64,
    rowid: i64,
}

impl LogPosition {
    fn read(connection: &Connection) -> Result<Self, StoreError> {
        Ok(LogPosition {
            data_version: connection
                .query_row("PRAGMA data_version", [], |row| row.get(0))
                .map_err(backend)?,
            rowid: connection
                .query_row(
                    "SELECT COALESCE(MAX(rowid), 0) FROM reins_decision_log",
                    [],
                    |row| row.get(0),
                )
                .map_err(backend)?,
        })
    }

    /// The runs of the decisions logged since the last read, if the file changed at all.
    fn advance(&mut self, connection: &Connection) -> Result<Vec<String>, StoreError> {
        let data_version: i64 = connection
            .query_row("PRAGMA data_version", [], |row| row.get(0))
            .map_err(backend)?;
        if data_version == self.data_version {
            return Ok(Vec::new());
        }
        self.data_version = data_version;
        let mut statement = connection
            .prepare("SELECT rowid, run_id FROM reins_decision_log WHERE rowid > ?1 ORDER BY rowid")
            .map_err(backend)?;
        let rows = statement
            .query_map(params![self.rowid], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(backend)?;
        let mut decided = Vec::new();
        for row in rows {
            let (rowid, run_id) = row.map_err(backend)?;
            self.rowid = rowid;
            decided.push(run_id);
        }
        Ok(decided)
    }
}
