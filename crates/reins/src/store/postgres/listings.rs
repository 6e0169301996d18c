//! The PostgreSQL store's listings across runs: every run, the approvals waiting, a page of
//! runs by status, and the runs written last. A listing judges every lease by the server's
//! clock at the statement's start, read with the rows ([`clock`](super::clock)).

use super::clock::statement_now;
use super::rows::{backend, column, read_decisions, snapshot};
use super::schema::CREATED_AT;
use crate::run::RunStatus;
use crate::store::format::NOT_WAITING_SQL;
use crate::store::{
    Listed, PendingApprovals, RecentRuns, RunPage, RunQuery, RunSummary, StoreError, StoredLease,
    StoredTimes, collect_pending, decode_state, listed, page_of, recent_of, status_from_name,
    status_name, summary,
};
use tokio_postgres::{Client, Row};

pub(super) async fn list(client: &Client) -> Result<Vec<RunSummary>, StoreError> {
    let rows = client
        .query(
            &format!(
                "SELECT run_id, status, version, updated_at, {CREATED_AT}, lease_owner,
                     lease_until, {}, agent_name FROM reins_runs ORDER BY updated_at, run_id",
                statement_now!()
            ),
            &[],
        )
        .await
        .map_err(backend)?;
    rows.iter()
        .map(|row| {
            let agent_name = column(row, 8)?;
            summary(
                column(row, 0)?,
                &column::<String>(row, 1)?,
                column(row, 2)?,
                times_at(row, 3)?,
                lease_at(row, 5)?,
                column(row, 7)?,
            )
            .map(|run| run.with_agent_name(agent_name))
        })
        .collect()
}

/// When a listed run was last written (`updated_at` in column `first`) and created (next).
fn times_at(row: &Row, first: usize) -> Result<StoredTimes, StoreError> {
    Ok(StoredTimes {
        updated_at_ms: column(row, first)?,
        created_at_ms: column(row, first + 1)?,
    })
}

/// The lease of a listed run: its `lease_owner` in column `first`, `lease_until` next.
fn lease_at(row: &Row, first: usize) -> Result<StoredLease<'_>, StoreError> {
    Ok(StoredLease {
        owner: column(row, first)?,
        until_ms: column(row, first + 1)?,
    })
}

/// What every suspended run waits for, and the suspended runs (or runs of an unknown status)
/// that cannot be read: the runs and their decisions read in one [`snapshot`], so that a run
/// resumed, decided about or deleted meanwhile is listed as it was, with the decisions it had
/// then (not with decisions about the calls it waits for no longer, nor without those it had).
pub(super) async fn pending_approvals(client: &mut Client) -> Result<PendingApprovals, StoreError> {
    let snapshot = snapshot(client).await?;
    // The suspended runs, and those whose status is unknown: reported as unreadable.
    let rows = snapshot
        .query(
            &format!(
                "SELECT run_id, format, state, status FROM reins_runs
                     WHERE status NOT IN {NOT_WAITING_SQL} ORDER BY updated_at, run_id"
            ),
            &[],
        )
        .await
        .map_err(backend)?;
    let mut listing = PendingApprovals::default();
    for row in &rows {
        let run_id: String = column(row, 0)?;
        let format: i64 = column(row, 1)?;
        let json: String = column(row, 2)?;
        let status: String = column(row, 3)?;
        // One unreadable run neither hides the other approvals nor disappears.
        let state =
            status_from_name(&run_id, &status).and_then(|_| decode_state(&run_id, format, &json));
        let read = match state {
            Ok(state) => read_decisions(&snapshot, &run_id)
                .await
                .map(|decided| (state, decided)),
            Err(error) => Err(error),
        };
        collect_pending(&mut listing, &run_id, read)?;
    }
    snapshot.commit().await.map_err(backend)?;
    Ok(listing)
}

pub(super) async fn list_runs(client: &Client, query: &RunQuery) -> Result<RunPage, StoreError> {
    let limit = i64::try_from(query.limit() + 1).unwrap_or(i64::MAX);
    // COLLATE "C" compares ids as bytes, as the other stores do, whatever the
    // database's collation.
    let rows = listed_rows(
        client,
        r#"WHERE ($1::text IS NULL OR status = $1)
             AND ($2::text IS NULL OR run_id COLLATE "C" > $2)
           ORDER BY run_id COLLATE "C" LIMIT $3"#,
        &[&query.status.map(status_name), &query.after_id(), &limit],
    )
    .await?;
    Ok(page_of(rows, query))
}

/// The `limit` runs written last, of `status` if any: one walk down the index on
/// `(updated_at, run_id COLLATE "C")` (or with `status` first), reading no run's state.
pub(super) async fn recent_runs(
    client: &Client,
    status: Option<RunStatus>,
    limit: usize,
) -> Result<RecentRuns, StoreError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    // Two texts rather than `$1 IS NULL OR status = $1`, which a prepared statement's generic
    // plan cannot serve from the index.
    let rows =
        match status {
            Some(status) => listed_rows(
                client,
                r#"WHERE status = $1 ORDER BY updated_at DESC, run_id COLLATE "C" DESC LIMIT $2"#,
                &[&status_name(status), &limit],
            )
            .await?,
            None => {
                listed_rows(
                    client,
                    r#"ORDER BY updated_at DESC, run_id COLLATE "C" DESC LIMIT $1"#,
                    &[&limit],
                )
                .await?
            }
        };
    Ok(recent_of(rows))
}

/// The runs `selection` (what follows `FROM reins_runs`) selects, each listed or unreadable.
async fn listed_rows(
    client: &Client,
    selection: &str,
    parameters: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<Vec<Listed>, StoreError> {
    let rows = client
        .query(
            &format!(
                "SELECT run_id, status, version, format, updated_at, {CREATED_AT}, lease_owner,
                     lease_until, {}, agent_name FROM reins_runs {selection}",
                statement_now!()
            ),
            parameters,
        )
        .await
        .map_err(backend)?;
    rows.iter()
        .map(|row| {
            let agent_name = column(row, 9)?;
            Ok(listed(
                column(row, 0)?,
                &column::<String>(row, 1)?,
                column(row, 2)?,
                column(row, 3)?,
                times_at(row, 4)?,
                lease_at(row, 6)?,
                column(row, 8)?,
            )
            .map(|run| run.with_agent_name(agent_name)))
        })
        .collect()
}
