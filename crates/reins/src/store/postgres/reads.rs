//! The PostgreSQL store's reads of one run: its state, journal, decision log, checkpoints, the
//! state kept at one of them, and that with the journal up to it.

use super::rows::{backend, column, read_decision_rows, read_run, read_state, snapshot};
use crate::run::RunState;
use crate::store::{
    Checkpoint, CheckpointWithJournal, JournalEntry, RecordedDecision, StoreError, decode_state,
    short_journal, status_from_name,
};
use tokio_postgres::{Client, GenericClient};

pub(super) async fn load(client: &Client, run_id: &str) -> Result<RunState, StoreError> {
    let (_, state) = read_state(client, run_id, None).await?;
    Ok(state)
}

pub(super) async fn journal(
    client: &Client,
    run_id: &str,
) -> Result<Vec<JournalEntry>, StoreError> {
    journal_entries(client, run_id, None).await
}

/// The first `limit` entries of the journal of `run_id` (all of them without a limit), oldest
/// first.
async fn journal_entries(
    client: &impl GenericClient,
    run_id: &str,
    limit: Option<i64>,
) -> Result<Vec<JournalEntry>, StoreError> {
    let rows = client
        .query(
            "SELECT effect_id, kind, payload FROM reins_journal WHERE run_id = $1
             ORDER BY seq LIMIT $2",
            &[&run_id, &limit],
        )
        .await
        .map_err(backend)?;
    rows.iter()
        .map(|row| {
            let effect_id: String = column(row, 0)?;
            let payload: String = column(row, 2)?;
            let payload = serde_json::from_str(&payload).map_err(|error| StoreError::Corrupt {
                run_id: run_id.to_owned(),
                message: format!("journal entry `{effect_id}`: {error}"),
            })?;
            Ok(JournalEntry {
                effect_id,
                kind: column(row, 1)?,
                payload,
            })
        })
        .collect()
}

/// Every decision recorded on `run_id`, in the order they were made (the audit log): the run's
/// row and its decisions read in one [`snapshot`] (a run deleted meanwhile is either found
/// with its decisions or not found, never found with none).
pub(super) async fn decisions(
    client: &mut Client,
    run_id: &str,
) -> Result<Vec<RecordedDecision>, StoreError> {
    let snapshot = snapshot(client).await?;
    if read_run(&snapshot, run_id, None).await?.is_none() {
        return Err(StoreError::NotFound(run_id.to_owned()));
    }
    let decisions = read_decision_rows(
        &snapshot,
        "SELECT internal_call_id, record, decided_at FROM reins_decision_log WHERE run_id = $1 ORDER BY seq",
        run_id,
    )
    .await?;
    snapshot.commit().await.map_err(backend)?;
    Ok(decisions)
}

/// The checkpoints of `run_id`, oldest first: the run's row and its checkpoints read in one
/// [`snapshot`], as [`decisions`] reads.
pub(super) async fn checkpoints(
    client: &mut Client,
    run_id: &str,
) -> Result<Vec<Checkpoint>, StoreError> {
    let snapshot = snapshot(client).await?;
    if read_run(&snapshot, run_id, None).await?.is_none() {
        return Err(StoreError::NotFound(run_id.to_owned()));
    }
    let rows = snapshot
        .query(
            "SELECT version, status, journal_len, created_at FROM reins_checkpoints
                 WHERE run_id = $1 ORDER BY version",
            &[&run_id],
        )
        .await
        .map_err(backend)?;
    snapshot.commit().await.map_err(backend)?;
    rows.iter()
        .map(|row| {
            Ok(Checkpoint {
                version: column(row, 0)?,
                status: status_from_name(run_id, &column::<String>(row, 1)?)?,
                journal_len: usize::try_from(column::<i64>(row, 2)?).unwrap_or(0),
                created_at_ms: column(row, 3)?,
            })
        })
        .collect()
}

pub(super) async fn load_checkpoint(
    client: &Client,
    run_id: &str,
    version: i64,
) -> Result<RunState, StoreError> {
    let row = client
        .query_opt(
            "SELECT format, state FROM reins_checkpoints WHERE run_id = $1 AND version = $2",
            &[&run_id, &version],
        )
        .await
        .map_err(backend)?;
    match row {
        Some(row) => decode_state(run_id, column(&row, 0)?, &column::<String>(&row, 1)?),
        None => Err(StoreError::NoSuchCheckpoint {
            run_id: run_id.to_owned(),
            version,
        }),
    }
}

/// The checkpoint `version` of `run_id`, its state and the journal up to it, read in one
/// [`snapshot`] with the run's row first (as [`checkpoints`] reads): a run written or deleted
/// meanwhile is read as it was before, whole.
pub(super) async fn checkpoint_with_journal(
    client: &mut Client,
    run_id: &str,
    version: i64,
) -> Result<CheckpointWithJournal, StoreError> {
    let snapshot = snapshot(client).await?;
    if read_run(&snapshot, run_id, None).await?.is_none() {
        return Err(StoreError::NotFound(run_id.to_owned()));
    }
    let row = snapshot
        .query_opt(
            "SELECT status, journal_len, created_at, format, state FROM reins_checkpoints
             WHERE run_id = $1 AND version = $2",
            &[&run_id, &version],
        )
        .await
        .map_err(backend)?
        .ok_or_else(|| StoreError::NoSuchCheckpoint {
            run_id: run_id.to_owned(),
            version,
        })?;
    let journal_len: i64 = column(&row, 1)?;
    let journal = journal_entries(&snapshot, run_id, Some(journal_len.max(0))).await?;
    snapshot.commit().await.map_err(backend)?;
    let checkpoint = Checkpoint {
        version,
        status: status_from_name(run_id, &column::<String>(&row, 0)?)?,
        journal_len: usize::try_from(journal_len).unwrap_or(0),
        created_at_ms: column(&row, 2)?,
    };
    if journal.len() < checkpoint.journal_len {
        return Err(short_journal(run_id, &checkpoint, journal.len()));
    }
    Ok(CheckpointWithJournal {
        state: decode_state(run_id, column(&row, 3)?, &column::<String>(&row, 4)?)?,
        journal,
        checkpoint,
    })
}
