//! The SQLite store's listings across runs: every run, what waits for a decision, pages of
//! runs by id, and the runs written last.

use super::Work;
use super::rows::{backend, in_one_snapshot, read_decisions, row_error};
use super::schema::CREATED_AT;
use crate::run::RunStatus;
use crate::store::format::NOT_WAITING_SQL;
use crate::store::{
    Listed, PendingApprovals, RecentRuns, RunPage, RunQuery, RunSummary, StoreError, StoredLease,
    StoredTimes, UnreadableRun, collect_pending, decode_state, listed, now_millis, page_of,
    recent_of, status_from_name, status_name, summary,
};
use rusqlite::{Connection, Row, params};

/// Every stored run, least recently updated first. A run whose row has a column of the wrong
/// type fails the listing with [`Corrupt`](crate::store::StoreError::Corrupt) naming it, as
/// an unknown status does.
pub(super) fn list() -> impl Work<Vec<RunSummary>> {
    move |connection: &mut Connection| {
        let mut statement = connection
            .prepare(&format!(
                "SELECT run_id, status, version, updated_at, {CREATED_AT}, lease_owner, lease_until,
                     agent_name FROM reins_runs ORDER BY updated_at, run_id",
            ))
            .map_err(backend)?;
        let rows = statement
            .query_map([], |row| {
                let fields = row.get::<_, String>(1).and_then(|status| {
                    Ok((
                        status,
                        row.get(2)?,
                        times(row, 3)?,
                        lease_columns(row, 5)?,
                        agent_name(row, 7),
                    ))
                });
                Ok((row.get::<_, String>(0)?, fields))
            })
            .map_err(backend)?;
        let now = now_millis();
        rows.map(|row| {
            let (run_id, fields) = row.map_err(backend)?;
            let (status, version, times, (owner, until_ms), agent_name) =
                fields.map_err(|error| row_error(&run_id, error))?;
            let lease = StoredLease {
                owner: owner.as_deref(),
                until_ms,
            };
            summary(run_id, &status, version, times, lease, now)
                .map(|run| run.with_agent_name(agent_name))
        })
        .collect()
    }
}

/// A listed run's `updated_at` in column `first`, and its `created_at` next.
fn times(row: &Row<'_>, first: usize) -> rusqlite::Result<StoredTimes> {
    Ok(StoredTimes {
        updated_at_ms: row.get(first)?,
        created_at_ms: row.get(first + 1)?,
    })
}

/// A listed run's `lease_owner` in column `first`, and its `lease_until` next.
fn lease_columns(row: &Row<'_>, first: usize) -> rusqlite::Result<(Option<String>, i64)> {
    Ok((row.get(first)?, row.get(first + 1)?))
}

/// A listed run's `agent_name` in column `index`. Not text (written behind the store's back):
/// `None`, as for a run whose agent the listing does not know, rather than the run unreadable:
/// the name is a copy of what its state says, which a load reads.
fn agent_name(row: &Row<'_>, index: usize) -> Option<String> {
    row.get::<_, Option<String>>(index).ok().flatten()
}

/// What every suspended run waits for, and the suspended runs (or runs of an unknown status)
/// that cannot be read: the runs and their decisions read in one snapshot, so that a run
/// resumed, decided about or deleted meanwhile is listed as it was, with the decisions it had
/// then (not with decisions about the calls it waits for no longer, nor without those it had).
pub(super) fn pending_approvals() -> impl Work<PendingApprovals> {
    move |connection: &mut Connection| in_one_snapshot(connection, pending_in)
}

/// [`pending_approvals`], inside its snapshot.
fn pending_in(connection: &Connection) -> Result<PendingApprovals, StoreError> {
    let mut statement = connection
        .prepare(&format!(
            "SELECT run_id, format, state, status FROM reins_runs
                     WHERE status NOT IN {NOT_WAITING_SQL} ORDER BY updated_at, run_id"
        ))
        .map_err(backend)?;
    let rows = statement
        .query_map([], |row| {
            // SQLite does not enforce column types: a record of the wrong type is
            // that run's problem, not the listing's.
            let record = row.get::<_, i64>(1).and_then(|format| {
                Ok((format, row.get::<_, String>(2)?, row.get::<_, String>(3)?))
            });
            Ok((row.get::<_, String>(0)?, record))
        })
        .map_err(backend)?;
    let mut listing = PendingApprovals::default();
    for row in rows {
        let (run_id, record) = row.map_err(backend)?;
        // One unreadable run neither hides the other approvals nor disappears.
        let read = record
            .map_err(|error| row_error(&run_id, error))
            .and_then(|(format, json, status)| {
                status_from_name(&run_id, &status)?;
                decode_state(&run_id, format, &json)
            })
            .and_then(|state| Ok((state, read_decisions(connection, &run_id)?)));
        collect_pending(&mut listing, &run_id, read)?;
    }
    Ok(listing)
}

/// One page of runs, by id.
pub(super) fn list_runs(query: &RunQuery) -> impl Work<RunPage> {
    let query = query.clone();
    move |connection: &mut Connection| {
        // Ids compare as bytes (SQLite's BINARY collation), as in the other stores.
        let limit = i64::try_from(query.limit() + 1).unwrap_or(i64::MAX);
        let rows = listed_rows(
            connection,
            "WHERE (?1 IS NULL OR status = ?1) AND (?2 IS NULL OR run_id > ?2)
                 ORDER BY run_id LIMIT ?3",
            params![query.status.map(status_name), query.after_id(), limit],
        )?;
        Ok(page_of(rows, &query))
    }
}

/// The `limit` runs written last, of `status` if any: one walk down the index on
/// `(updated_at, run_id)` (or `(status, updated_at, run_id)`), reading no run's state.
pub(super) fn recent_runs(status: Option<RunStatus>, limit: usize) -> impl Work<RecentRuns> {
    move |connection: &mut Connection| {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        // Two texts rather than `?1 IS NULL OR status = ?1`, which no index serves.
        let rows = match status {
            Some(status) => listed_rows(
                connection,
                "WHERE status = ?1 ORDER BY updated_at DESC, run_id DESC LIMIT ?2",
                params![status_name(status), limit],
            )?,
            None => listed_rows(
                connection,
                "ORDER BY updated_at DESC, run_id DESC LIMIT ?1",
                params![limit],
            )?,
        };
        Ok(recent_of(rows))
    }
}

/// The runs `selection` (what follows `FROM reins_runs`) selects, each listed or unreadable.
fn listed_rows(
    connection: &Connection,
    selection: &str,
    parameters: impl rusqlite::Params,
) -> Result<Vec<Listed>, StoreError> {
    let mut statement = connection
        .prepare(&format!(
            "SELECT run_id, status, version, format, updated_at, {CREATED_AT}, lease_owner,
                 lease_until, agent_name FROM reins_runs {selection}",
        ))
        .map_err(backend)?;
    let rows = statement
        .query_map(parameters, |row| {
            // SQLite does not enforce column types: a column of the wrong type is that
            // run's problem, not the listing's.
            let fields = row.get::<_, String>(1).and_then(|status| {
                Ok((
                    status,
                    row.get::<_, i64>(2)?,
                    row.get::<_, i64>(3)?,
                    times(row, 4)?,
                    lease_columns(row, 6)?,
                    agent_name(row, 8),
                ))
            });
            Ok((row.get::<_, String>(0)?, fields))
        })
        .map_err(backend)?;
    let now = now_millis();
    let mut runs = Vec::new();
    for row in rows {
        let (run_id, fields) = row.map_err(backend)?;
        runs.push(match fields {
            Ok((status, version, format, times, (owner, until_ms), agent_name)) => {
                let lease = StoredLease {
                    owner: owner.as_deref(),
                    until_ms,
                };
                listed(run_id, &status, version, format, times, lease, now)
                    .map(|run| run.with_agent_name(agent_name))
            }
            Err(error) => Err(UnreadableRun {
                error: row_error(&run_id, error),
                run_id,
            }),
        });
    }
    Ok(runs)
}
