//! The SQLite store's deletions: one finished run, or every finished run older than a
//! cutoff.

use super::Work;
use super::rows::{backend, delete_run};
use crate::store::{FINISHED, FORMAT_VERSION, StoreError, check_deletable, oldest_readable};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// Deletes a finished run and everything kept about it.
pub(super) fn delete(run_id: &str) -> impl Work<()> {
    let run_id = run_id.to_owned();
    move |connection: &mut Connection| {
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        let record: Option<(i64, String)> = transaction
            .query_row(
                "SELECT format, status FROM reins_runs WHERE run_id = ?1",
                params![run_id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(backend)?;
        let (format, status) = record.ok_or_else(|| StoreError::NotFound(run_id.clone()))?;
        check_deletable(&run_id, format, &status)?;
        delete_run(&transaction, &run_id)?;
        transaction.commit().map_err(backend)
    }
}

/// Deletes the finished runs last written at or before `cutoff`; returns how many.
pub(super) fn expire(cutoff: i64) -> impl Work<u64> {
    move |connection: &mut Connection| {
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        let expired = {
            let mut statement = transaction
                    .prepare(
                        // A record this release cannot read is another release's to expire.
                        "SELECT run_id FROM reins_runs
                         WHERE status IN (?1, ?2) AND updated_at <= ?3 AND format BETWEEN ?4 AND ?5",
                    )
                    .map_err(backend)?;
            let readable = (oldest_readable(), FORMAT_VERSION);
            let rows = statement
                .query_map(
                    params![FINISHED[0], FINISHED[1], cutoff, readable.0, readable.1],
                    |row| row.get::<_, String>(0),
                )
                .map_err(backend)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(backend)?
        };
        for run_id in &expired {
            delete_run(&transaction, run_id)?;
        }
        transaction.commit().map_err(backend)?;
        Ok(u64::try_from(expired.len()).unwrap_or(u64::MAX))
    }
}
