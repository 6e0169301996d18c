//! What the PostgreSQL store's methods share: the driver's errors as [`StoreError`]s, typed
//! columns, the reading of a run's row and of its decisions (on a connection or inside a
//! method's transaction), and the deletion of runs with everything kept about them.

use super::clock::server_now;
use crate::run::RunState;
use crate::store::error::describe_postgres;
use crate::store::format::RUN_TABLES;
use crate::store::{RecordedDecision, StoreError, decode_decision, decode_state};
use std::time::Duration;
use tokio_postgres::error::SqlState;
use tokio_postgres::{GenericClient, Row};

pub(super) fn backend(error: impl std::error::Error + 'static) -> StoreError {
    StoreError::Backend(describe_postgres(&error))
}

/// The error of a statement about `run_id` in a bounded transaction
/// ([`bounded_transaction`](super::locks::bounded_transaction)): [`StoreError::Locked`]
/// when it gave up waiting `wait` for a lock, else what the database said.
pub(super) fn on_run(run_id: &str, wait: Duration) -> impl Fn(tokio_postgres::Error) -> StoreError {
    let run_id = run_id.to_owned();
    move |error| match error.code() {
        Some(&SqlState::LOCK_NOT_AVAILABLE) => StoreError::Locked {
            run_id: run_id.clone(),
            waited: wait,
        },
        _ => backend(error),
    }
}

/// Starts a read-only `REPEATABLE READ` transaction: every statement of a read made of several
/// sees the database as it was at the first one (in the default `READ COMMITTED` each sees it
/// as it is when it starts, so a write committed between two of them shows in the second
/// only). A read-only transaction takes no lock a writer waits for, and cannot fail to
/// serialize.
pub(super) async fn snapshot(
    client: &mut tokio_postgres::Client,
) -> Result<tokio_postgres::Transaction<'_>, StoreError> {
    client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .map_err(backend)
}

pub(super) fn column<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a Row,
    index: usize,
) -> Result<T, StoreError> {
    row.try_get(index).map_err(backend)
}

/// The stored row of one run, and the server's clock as it was read.
pub(super) struct RunRow {
    pub(super) version: i64,
    pub(super) format: i64,
    pub(super) state: String,
    pub(super) owner: Option<String>,
    pub(super) lease_until: i64,
    /// The database server's clock as the row was read (milliseconds since the Unix epoch):
    /// the `now` a method judges the row's lease by and writes times from
    /// ([`clock`](super::clock)), never this process's clock.
    pub(super) server_now: i64,
}

/// The columns of [`RunRow`], from `reins_runs`.
macro_rules! run_row {
    () => {
        concat!(
            "SELECT version, format, state, lease_owner, lease_until, ",
            server_now!(),
            " FROM reins_runs WHERE run_id = $1"
        )
    };
}

/// The stored row of `run_id`, if any. With `lock`, the row is locked until the transaction
/// ends (`FOR UPDATE`); the transaction must be bounded to wait at most that long for another
/// session's lock on it ([`bounded_transaction`](super::locks::bounded_transaction)), and
/// giving up is [`StoreError::Locked`].
pub(super) async fn read_run(
    client: &impl GenericClient,
    run_id: &str,
    lock: Option<Duration>,
) -> Result<Option<RunRow>, StoreError> {
    let row = match lock {
        None => client
            .query_opt(run_row!(), &[&run_id])
            .await
            .map_err(backend)?,
        Some(wait) => client
            .query_opt(concat!(run_row!(), " FOR UPDATE"), &[&run_id])
            .await
            .map_err(on_run(run_id, wait))?,
    };
    row.map(|row| {
        Ok(RunRow {
            version: column(&row, 0)?,
            format: column(&row, 1)?,
            state: column(&row, 2)?,
            owner: column(&row, 3)?,
            lease_until: column(&row, 4)?,
            server_now: column(&row, 5)?,
        })
    })
    .transpose()
}

/// The stored row of `run_id` (locked until the transaction ends with `lock`, see
/// [`read_run`]) and the state it holds ([`StoreError::NotFound`] when no such run is
/// stored).
pub(super) async fn read_state(
    client: &impl GenericClient,
    run_id: &str,
    lock: Option<Duration>,
) -> Result<(RunRow, RunState), StoreError> {
    let row = read_run(client, run_id, lock)
        .await?
        .ok_or_else(|| StoreError::NotFound(run_id.to_owned()))?;
    let state = decode_state(run_id, row.format, &row.state)?;
    Ok((row, state))
}

pub(super) async fn read_decisions(
    client: &impl GenericClient,
    run_id: &str,
) -> Result<Vec<RecordedDecision>, StoreError> {
    read_decision_rows(
        client,
        "SELECT internal_call_id, decision, decided_at FROM reins_decisions WHERE run_id = $1 ORDER BY decided_at",
        run_id,
    )
    .await
}

/// Deletes the runs `run_ids` and everything kept about them, inside the caller's
/// transaction.
pub(super) async fn delete_runs(
    client: &impl GenericClient,
    run_ids: &[String],
) -> Result<(), StoreError> {
    for table in RUN_TABLES {
        client
            .execute(
                &format!("DELETE FROM {table} WHERE run_id = ANY($1)"),
                &[&run_ids],
            )
            .await
            .map_err(backend)?;
    }
    Ok(())
}

/// Reads `(internal_call_id, decision JSON, decided_at)` rows of `run_id` with `query`.
pub(super) async fn read_decision_rows(
    client: &impl GenericClient,
    query: &str,
    run_id: &str,
) -> Result<Vec<RecordedDecision>, StoreError> {
    let rows = client.query(query, &[&run_id]).await.map_err(backend)?;
    rows.iter()
        .map(|row| {
            let call_id: String = column(row, 0)?;
            let json: String = column(row, 1)?;
            decode_decision(run_id, &call_id, column(row, 2)?, &json)
        })
        .collect()
}
