//! The PostgreSQL store's deletions: one finished run, or every finished run not updated
//! since a cutoff, each with everything kept about it.

use super::clock::statement_now;
use super::locks::bounded_transaction;
use super::rows::{backend, column, delete_runs, on_run};
use crate::store::{FINISHED, FORMAT_VERSION, StoreError, check_deletable, oldest_readable};
use deadpool_postgres::Client;
use std::time::Duration;

/// Deletes the finished run `run_id`, waiting at most `lock_wait` for its row.
pub(super) async fn delete(
    client: &mut Client,
    run_id: &str,
    lock_wait: Duration,
) -> Result<(), StoreError> {
    let transaction = bounded_transaction(client, lock_wait).await?;
    let row = transaction
        .query_opt(
            "SELECT format, status FROM reins_runs WHERE run_id = $1 FOR UPDATE",
            &[&run_id],
        )
        .await
        .map_err(on_run(run_id, lock_wait))?
        .ok_or_else(|| StoreError::NotFound(run_id.to_owned()))?;
    check_deletable(run_id, column(&row, 0)?, &column::<String>(&row, 1)?)?;
    delete_runs(&transaction, &[run_id.to_owned()]).await?;
    transaction.commit().await.map_err(backend)
}

/// Deletes the finished runs last updated at least `older_than` milliseconds ago by the
/// server's clock (which wrote `updated_at`); returns how many. A run whose row another
/// session holds is left for the next expiry; every other wait for a lock is bounded by
/// `lock_wait`.
pub(super) async fn expire(
    client: &mut Client,
    older_than: i64,
    lock_wait: Duration,
) -> Result<u64, StoreError> {
    let transaction = bounded_transaction(client, lock_wait).await?;
    // FOR UPDATE: a concurrent `delete` or `expire` of the same runs cannot delete them
    // meanwhile; SKIP LOCKED: a run another session holds (being deleted, or held by a
    // transaction left open) is not waited for, but left for the next expiry.
    // A record this release cannot read is another release's to expire. The statement's
    // start, one reading for every row, keeps the cutoff a constant the index can serve.
    let rows = transaction
        .query(
            concat!(
                "SELECT run_id FROM reins_runs WHERE status = ANY($1) AND updated_at <= ",
                statement_now!(),
                " - $2 AND format BETWEEN $3 AND $4 FOR UPDATE SKIP LOCKED"
            ),
            &[
                &FINISHED.as_slice(),
                &older_than,
                &i64::from(oldest_readable()),
                &i64::from(FORMAT_VERSION),
            ],
        )
        .await
        .map_err(backend)?;
    let expired = rows
        .iter()
        .map(|row| column::<String>(row, 0))
        .collect::<Result<Vec<_>, _>>()?;
    delete_runs(&transaction, &expired).await?;
    transaction.commit().await.map_err(backend)?;
    Ok(u64::try_from(expired.len()).unwrap_or(u64::MAX))
}
