//! Time travel: a run's checkpoints, and forking a new run from any of them without running
//! again what the checkpoint already holds.

use super::{JournalEntry, RunStore, StoreError};
use crate::run::{RunState, RunStatus};
use serde_json::json;

/// One checkpoint of a run, as listed by [`RunStore::checkpoints`]: the run's whole state as
/// it was written at that version (read it with [`RunStore::load_checkpoint`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// The run's version the checkpoint wrote.
    pub version: i64,
    /// Where the run was.
    pub status: RunStatus,
    /// How many journal entries the run had then (a fork keeps that many).
    pub journal_len: usize,
    /// When it was written, in milliseconds since the Unix epoch.
    pub created_at_ms: i64,
}

/// One checkpoint of a run with the run's journal up to it, read together
/// ([`RunStore::checkpoint_with_journal`]): what a fork starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointWithJournal {
    /// The checkpoint, as [`RunStore::checkpoints`] lists it.
    pub checkpoint: Checkpoint,
    /// The run's state as the checkpoint wrote it.
    pub state: RunState,
    /// The run's journal up to the checkpoint: its first
    /// [`journal_len`](Checkpoint::journal_len) entries, oldest first.
    pub journal: Vec<JournalEntry>,
}

/// How many times the default [`RunStore::checkpoint_with_journal`] reads a run that changed
/// while it read before giving up.
const READ_ATTEMPTS: usize = 3;

/// [`RunStore::checkpoint_with_journal`] for a store without snapshots: the checkpoint
/// listed, its state, the journal, and the checkpoint listed again. A read is kept only if
/// the checkpoint was listed the same both times (so the run was not deleted, nor the
/// checkpoint dropped, in between) and the journal held at least as many entries as it
/// counts; a run that changed, or a journal read short, is read again ([`StoreError::Corrupt`]
/// when the last read's journal is short still). A run deleted meanwhile ends as
/// [`StoreError::NotFound`] (or [`StoreError::NoSuchCheckpoint`]), never as a checkpoint
/// without its journal.
pub(super) async fn checkpoint_with_journal_by_parts(
    store: &(impl RunStore + ?Sized),
    run_id: &str,
    version: i64,
) -> Result<CheckpointWithJournal, StoreError> {
    // The last read's journal was short: said only if no read finds it whole, since a store
    // writing a checkpoint and its journal entries apart (or deleting a run table by table)
    // is read short between its two writes.
    let mut short = None;
    for _ in 0..READ_ATTEMPTS {
        short = None;
        let checkpoint = listed_checkpoint(store, run_id, version).await?;
        let state = match store.load_checkpoint(run_id, version).await {
            // Dropped since it was listed: the listing says why (the run deleted, say).
            Err(StoreError::NoSuchCheckpoint { .. }) => continue,
            read => read?,
        };
        let mut journal = store.journal(run_id).await?;
        match listed_checkpoint(store, run_id, version).await {
            Ok(again) if again == checkpoint => {}
            Ok(_) | Err(StoreError::NotFound(_) | StoreError::NoSuchCheckpoint { .. }) => {
                continue;
            }
            Err(error) => return Err(error),
        }
        if journal.len() < checkpoint.journal_len {
            short = Some(short_journal(run_id, &checkpoint, journal.len()));
            continue;
        }
        journal.truncate(checkpoint.journal_len);
        return Ok(CheckpointWithJournal {
            checkpoint,
            state,
            journal,
        });
    }
    if let Some(error) = short {
        return Err(error);
    }
    Err(StoreError::Backend(format!(
        "run `{run_id}` changed each of the {READ_ATTEMPTS} times its checkpoint {version} and \
         journal were read; try again"
    )))
}

/// The checkpoint `version` of `run_id` as [`RunStore::checkpoints`] lists it.
async fn listed_checkpoint(
    store: &(impl RunStore + ?Sized),
    run_id: &str,
    version: i64,
) -> Result<Checkpoint, StoreError> {
    store
        .checkpoints(run_id)
        .await?
        .into_iter()
        .find(|checkpoint| checkpoint.version == version)
        .ok_or_else(|| StoreError::NoSuchCheckpoint {
            run_id: run_id.to_owned(),
            version,
        })
}

/// A checkpoint that counts more journal entries than the run's journal holds.
pub(crate) fn short_journal(run_id: &str, checkpoint: &Checkpoint, held: usize) -> StoreError {
    StoreError::Corrupt {
        run_id: run_id.to_owned(),
        message: format!(
            "checkpoint {} counts {} journal entries, the journal holds {held}",
            checkpoint.version, checkpoint.journal_len
        ),
    }
}

/// Why a call the parent had started without a result waits in a fork.
const FORKED_IN_DOUBT_REASON: &str = "in doubt: the run this one was forked from had started \
     the call and recorded no result, so it may have run there (under that run's effect id)";

/// Forks a new run `new_run_id` from the checkpoint `version` of `run_id`, after `edit`
/// changed its state (e.g. a message of the history, or the arguments of a waiting call), and
/// returns the fork's state. The parent is not changed.
///
/// The checkpoint and the parent's journal are read together
/// ([`RunStore::checkpoint_with_journal`]), so a parent written meanwhile (still running in
/// another process, or deleted) is forked as it was when read, or not at all
/// ([`StoreError::NotFound`] for a run deleted before), never with a journal that is not the
/// checkpoint's.
///
/// The fork starts with the checkpoint's state — every model turn and tool result it holds is
/// kept, not requested or executed again — and with the parent's journal up to that
/// checkpoint, followed by a `forked_from` entry naming the parent and version. Resume it with
/// [`Agent::resume_stored`](crate::agent::Agent::resume_stored): it waits for decisions
/// (status `Suspended`) when one of its calls does — decisions are bound to the fork's own
/// run id, so none of the parent's carries over — and otherwise continues from the
/// checkpoint. A call the parent had started without a result at that checkpoint (it was
/// running then, or cut off by a crash) waits in the fork for a decision, in doubt, whatever
/// its tool declares about running again: its side effect may have happened in the parent,
/// under the parent's effect id, and in the fork the call's effect id is new, so a tool that
/// deduplicates by it would not recognize the repeat. `edit` sees it so marked (and may
/// supply its result).
pub async fn fork(
    store: &impl RunStore,
    run_id: &str,
    version: i64,
    new_run_id: &str,
    edit: impl FnOnce(&mut RunState),
) -> Result<RunState, StoreError> {
    let CheckpointWithJournal {
        checkpoint,
        mut state,
        mut journal,
    } = store.checkpoint_with_journal(run_id, version).await?;
    // A store of one's own may answer with more (its whole journal) or, broken, with less.
    if journal.len() < checkpoint.journal_len {
        return Err(short_journal(run_id, &checkpoint, journal.len()));
    }
    journal.truncate(checkpoint.journal_len);
    journal.push(JournalEntry {
        effect_id: format!("{new_run_id}/fork"),
        kind: "forked_from".to_owned(),
        payload: json!({ "run_id": run_id, "version": version }),
    });
    state.run_id = new_run_id.to_owned();
    // A fork of a failed run's last checkpoint has not failed (yet).
    state.failure = None;
    for call in &mut state.pending_calls {
        if call.started.is_some() && call.result.is_none() {
            call.in_doubt = true;
            call.suspended = Some(FORKED_IN_DOUBT_REASON.to_owned());
        }
    }
    edit(&mut state);
    state.status = if state
        .pending_calls
        .iter()
        .any(|call| call.awaits_decision())
    {
        RunStatus::Suspended
    } else {
        RunStatus::Running
    };
    // One write: a fork that fails leaves no run behind, leased or not.
    store.create_forked(&state, &journal).await?;
    Ok(state)
}
