//! The SQLite store's reads of one run: its state, journal, decisions and checkpoints, and
//! one checkpoint with the journal up to it.

use super::Work;
use super::rows::{backend, in_one_snapshot, read_decision_rows, read_row, read_state, row_error};
use crate::run::RunState;
use crate::store::{
    Checkpoint, CheckpointWithJournal, JournalEntry, RecordedDecision, StoreError, decode_state,
    short_journal, status_from_name,
};
use rusqlite::{Connection, OptionalExtension, params};

/// A run's current state.
pub(super) fn load(run_id: &str) -> impl Work<RunState> {
    let run_id = run_id.to_owned();
    move |connection: &mut Connection| read_state(connection, &run_id).map(|(_, state)| state)
}

/// A run's journal, in order.
pub(super) fn journal(run_id: &str) -> impl Work<Vec<JournalEntry>> {
    let run_id = run_id.to_owned();
    move |connection: &mut Connection| journal_entries(connection, &run_id, -1)
}

/// The first `limit` entries of the journal of `run_id` (all of them when `limit` is
/// negative, as SQLite's `LIMIT` reads it), oldest first.
fn journal_entries(
    connection: &Connection,
    run_id: &str,
    limit: i64,
) -> Result<Vec<JournalEntry>, StoreError> {
    let mut statement = connection
        .prepare(
            "SELECT effect_id, kind, payload FROM reins_journal WHERE run_id = ?1
             ORDER BY seq LIMIT ?2",
        )
        .map_err(backend)?;
    let rows = statement
        .query_map(params![run_id, limit], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
            ))
        })
        .map_err(backend)?;
    let mut entries = Vec::new();
    for row in rows {
        let (effect_id, kind, payload) = row.map_err(|error| row_error(run_id, error))?;
        let payload = serde_json::from_str(&payload).map_err(|error| StoreError::Corrupt {
            run_id: run_id.to_owned(),
            message: format!("journal entry `{effect_id}`: {error}"),
        })?;
        entries.push(JournalEntry {
            effect_id,
            kind,
            payload,
        });
    }
    Ok(entries)
}

/// Every decision recorded for a run, in the order they were made: the run's row and its
/// decisions read in one snapshot (a run deleted meanwhile is either found with its decisions
/// or not found, never found with none).
pub(super) fn decisions(run_id: &str) -> impl Work<Vec<RecordedDecision>> {
    let run_id = run_id.to_owned();
    move |connection: &mut Connection| {
        in_one_snapshot(connection, |snapshot| {
            if read_row(snapshot, &run_id)?.is_none() {
                return Err(StoreError::NotFound(run_id.clone()));
            }
            read_decision_rows(
                snapshot,
                "SELECT internal_call_id, record, decided_at FROM reins_decision_log WHERE run_id = ?1 ORDER BY seq",
                &run_id,
            )
        })
    }
}

/// A run's checkpoints, oldest first: the run's row and its checkpoints read in one snapshot,
/// as [`decisions`] reads.
pub(super) fn checkpoints(run_id: &str) -> impl Work<Vec<Checkpoint>> {
    let run_id = run_id.to_owned();
    move |connection: &mut Connection| {
        in_one_snapshot(connection, |snapshot| checkpoints_of(snapshot, &run_id))
    }
}

/// The checkpoints of `run_id`, inside [`checkpoints`]'s snapshot.
fn checkpoints_of(connection: &Connection, run_id: &str) -> Result<Vec<Checkpoint>, StoreError> {
    if read_row(connection, run_id)?.is_none() {
        return Err(StoreError::NotFound(run_id.to_owned()));
    }
    let mut statement = connection
        .prepare(
            "SELECT version, status, journal_len, created_at FROM reins_checkpoints
                     WHERE run_id = ?1 ORDER BY version",
        )
        .map_err(backend)?;
    let rows = statement
        .query_map(params![run_id], |row| {
            Ok((
                row.get(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, i64>(2)?,
                row.get(3)?,
            ))
        })
        .map_err(backend)?;
    rows.map(|row| {
        let (version, status, journal_len, created_at_ms) =
            row.map_err(|error| row_error(run_id, error))?;
        Ok(Checkpoint {
            version,
            status: status_from_name(run_id, &status)?,
            journal_len: usize::try_from(journal_len).unwrap_or(0),
            created_at_ms,
        })
    })
    .collect()
}

/// A run's state as of one checkpoint.
pub(super) fn load_checkpoint(run_id: &str, version: i64) -> impl Work<RunState> {
    let run_id = run_id.to_owned();
    move |connection: &mut Connection| {
        let row: Option<(i64, String)> = connection
            .query_row(
                "SELECT format, state FROM reins_checkpoints WHERE run_id = ?1 AND version = ?2",
                params![run_id, version],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(|error| row_error(&run_id, error))?;
        match row {
            Some((format, json)) => decode_state(&run_id, format, &json),
            None => Err(StoreError::NoSuchCheckpoint { run_id, version }),
        }
    }
}

/// The checkpoint `version` of a run, its state and the journal up to it, read in one
/// snapshot with the run's row first (as [`checkpoints`] reads): a run written or deleted
/// meanwhile is read as it was before, whole.
pub(super) fn checkpoint_with_journal(
    run_id: &str,
    version: i64,
) -> impl Work<CheckpointWithJournal> {
    let run_id = run_id.to_owned();
    move |connection: &mut Connection| {
        in_one_snapshot(connection, |snapshot| {
            if read_row(snapshot, &run_id)?.is_none() {
                return Err(StoreError::NotFound(run_id.clone()));
            }
            let row: Option<(String, i64, i64, i64, String)> = snapshot
                .query_row(
                    "SELECT status, journal_len, created_at, format, state FROM reins_checkpoints
                     WHERE run_id = ?1 AND version = ?2",
                    params![run_id, version],
                    |row| {
                        Ok((
                            row.get(0)?,
                            row.get(1)?,
                            row.get(2)?,
                            row.get(3)?,
                            row.get(4)?,
                        ))
                    },
                )
                .optional()
                .map_err(|error| row_error(&run_id, error))?;
            let Some((status, journal_len, created_at_ms, format, state)) = row else {
                return Err(StoreError::NoSuchCheckpoint {
                    run_id: run_id.clone(),
                    version,
                });
            };
            let checkpoint = Checkpoint {
                version,
                status: status_from_name(&run_id, &status)?,
                journal_len: usize::try_from(journal_len).unwrap_or(0),
                created_at_ms,
            };
            let journal = journal_entries(snapshot, &run_id, journal_len.max(0))?;
            if journal.len() < checkpoint.journal_len {
                return Err(short_journal(&run_id, &checkpoint, journal.len()));
            }
            Ok(CheckpointWithJournal {
                state: decode_state(&run_id, format, &state)?,
                journal,
                checkpoint,
            })
        })
    }
}
