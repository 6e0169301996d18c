//! A memory store's record of one run, its checkpoints, and how a write finds it and checks
//! its lease.

use crate::run::RunStatus;
use crate::store::{
    Checkpoint, JournalEntry, Lease, Listed, RecordedDecision, StoreError, StoredLease,
    StoredTimes, listed,
};
use std::collections::BTreeMap;

/// One run as the store keeps it: encoded, as the database stores keep it.
#[derive(Clone)]
pub(super) struct Record {
    pub(super) version: i64,
    pub(super) format: i64,
    pub(super) status: String,
    pub(super) state: String,
    pub(super) owner: Option<String>,
    pub(super) token: Option<String>,
    pub(super) lease_until: i64,
    /// When the run was created (milliseconds since the Unix epoch).
    pub(super) created_at: i64,
    /// When the record was last written (milliseconds since the Unix epoch).
    pub(super) updated_at: i64,
    /// The name of the run's agent as the state last written says it, kept beside the
    /// state as the database stores keep it in a column.
    pub(super) agent_name: Option<String>,
    pub(super) journal: Vec<JournalEntry>,
    /// The latest decision per call.
    pub(super) decisions: Vec<RecordedDecision>,
    /// Every decision recorded, oldest first.
    pub(super) audit: Vec<RecordedDecision>,
    /// Every write of the state, oldest first.
    pub(super) snapshots: Vec<Snapshot>,
}

/// One checkpoint: the listed facts and the encoded state.
#[derive(Clone)]
pub(super) struct Snapshot {
    pub(super) checkpoint: Checkpoint,
    pub(super) format: i64,
    pub(super) state: String,
}

impl Record {
    /// The run's lease as kept.
    pub(super) fn lease(&self) -> StoredLease<'_> {
        StoredLease {
            owner: self.owner.as_deref(),
            until_ms: self.lease_until,
        }
    }

    /// When the run was created and last written.
    pub(super) fn times(&self) -> StoredTimes {
        StoredTimes {
            created_at_ms: self.created_at,
            updated_at_ms: self.updated_at,
        }
    }

    /// The run's line in a listing, as of `now` (milliseconds since the Unix epoch): read from
    /// the record's columns alone, as the database stores list them; no state is decoded.
    pub(super) fn listed(&self, run_id: &str, now: i64) -> Listed {
        listed(
            run_id.to_owned(),
            &self.status,
            self.version,
            self.format,
            self.times(),
            self.lease(),
            now,
        )
        .map(|run| run.with_agent_name(self.agent_name.clone()))
    }

    /// Keeps the record's state, just written with `status` at its `updated_at`, as a
    /// checkpoint, and of its checkpoints the newest `keep`.
    pub(super) fn snapshot(&mut self, status: RunStatus, keep: Option<usize>) {
        self.snapshots.push(Snapshot {
            checkpoint: Checkpoint {
                version: self.version,
                status,
                journal_len: self.journal.len(),
                // The time the record says it was written, as the SQL stores keep it.
                created_at_ms: self.updated_at,
            },
            format: self.format,
            state: self.state.clone(),
        });
        if let Some(keep) = keep {
            let older = self.snapshots.len().saturating_sub(keep);
            self.snapshots.drain(..older);
        }
    }
}

/// The stored record of `run_id`, or [`StoreError::NotFound`].
pub(super) fn record<'r>(
    runs: &'r BTreeMap<String, Record>,
    run_id: &str,
) -> Result<&'r Record, StoreError> {
    runs.get(run_id)
        .ok_or_else(|| StoreError::NotFound(run_id.to_owned()))
}

/// Whether `lease` still holds `record`: its version and its claim's token (else
/// [`StoreError::Conflict`]), as every write under a lease checks.
pub(super) fn held_by(record: &Record, lease: &Lease) -> Result<(), StoreError> {
    if record.version != lease.version || record.token.as_deref() != Some(&lease.token) {
        return Err(StoreError::Conflict {
            run_id: lease.run_id.clone(),
            expected: lease.version,
        });
    }
    Ok(())
}

/// The stored record of `run_id` to change, or [`StoreError::NotFound`].
pub(super) fn record_mut<'r>(
    runs: &'r mut BTreeMap<String, Record>,
    run_id: &str,
) -> Result<&'r mut Record, StoreError> {
    runs.get_mut(run_id)
        .ok_or_else(|| StoreError::NotFound(run_id.to_owned()))
}
