//! The SQLite store's reads of one run: its state, journal, decisions and checkpoints.

use super::Work;
use super::rows::{backend, in_one_snapshot, read_decision_rows, read_row, read_state, row_error};
use crate::run::RunState;
use crate::store::{
    Checkpoint, JournalEntry, RecordedDecision, StoreError, decode_state, status_from_name,
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
    move |connection: &mut Connection| {
        let mut statement = connection
            .prepare(
                "SELECT effect_id, kind, payload FROM reins_journal WHERE run_id = ?1 ORDER BY seq",
            )
            .map_err(backend)?;
        let rows = statement
            .query_map(params![run_id], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                ))
            })
            .map_err(backend)?;
        let mut entries = Vec::new();
        for row in rows {
            let (effect_id, kind, payload) = row.map_err(|error| row_error(&run_id, error))?;
            let payload = serde_json::from_str(&payload).map_err(|error| StoreError::Corrupt {
                run_id: run_id.clone(),
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
