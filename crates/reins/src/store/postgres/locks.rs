//! How long a write of a run waits for a lock another session of the database holds: every
//! statement that may wait for one (on the run's row above all: `FOR UPDATE`, `UPDATE`,
//! `DELETE`, an insert whose key another transaction is inserting) runs in a transaction
//! whose `lock_timeout` is the store's ([`PostgresStore::with_lock_timeout`]), and giving up
//! is [`StoreError::Locked`]. A session that holds the row with a transaction left open would
//! otherwise make claims, decisions, checkpoints and renewals wait for ever.
//!
//! The timeout is set with `SET LOCAL`, for the transaction only: the pool's connections
//! keep the server's setting, and a pooler that hands each transaction to another server
//! connection sees the setting and the statements it bounds together.
//!
//! [`PostgresStore::with_lock_timeout`]: super::PostgresStore::with_lock_timeout

use super::rows::{backend, on_run};
use crate::store::StoreError;
use std::time::Duration;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Row, Statement, Transaction};

/// The statement that bounds every lock wait of the transaction under way to `wait` (at
/// least 1 ms: 0 would mean no bound; at most what the server's setting holds).
fn set_lock_timeout(wait: Duration) -> String {
    let millis = wait.as_millis().clamp(1, i32::MAX as u128);
    format!("SET LOCAL lock_timeout = '{millis}ms'")
}

/// A transaction on `client` in which every statement waits at most `wait` for a lock; map
/// its statements' errors with [`on_run`].
pub(super) async fn bounded_transaction(
    client: &mut Client,
    wait: Duration,
) -> Result<Transaction<'_>, StoreError> {
    let transaction = client.transaction().await.map_err(backend)?;
    transaction
        .batch_execute(&set_lock_timeout(wait))
        .await
        .map_err(backend)?;
    Ok(transaction)
}

/// The prepared `statement` alone in a transaction bounded as [`bounded_transaction`]'s, in
/// one round trip: the transaction's start, the statement and its commit are sent together
/// (pipelined) and answered together. Prepared, so that nothing is awaited before all three
/// are sent: once this is first polled, the server runs the statement and ends the
/// transaction (a commit, or a rollback after a failure) even if the caller stops waiting,
/// and the connection goes back to the pool outside any transaction.
pub(super) async fn bounded_statement(
    client: &Client,
    run_id: &str,
    wait: Duration,
    statement: &Statement,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<Row>, StoreError> {
    let begin = format!("BEGIN; {}", set_lock_timeout(wait));
    // `join3` polls the three in order, and each sends its request when first polled.
    let (begun, rows, committed) = futures::future::join3(
        client.batch_execute(&begin),
        client.query(statement, params),
        client.batch_execute("COMMIT"),
    )
    .await;
    begun.map_err(backend)?;
    let rows = rows.map_err(on_run(run_id, wait))?;
    committed.map_err(backend)?;
    Ok(rows)
}
