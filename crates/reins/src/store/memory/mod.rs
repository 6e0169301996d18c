use super::DecisionWatch;
use super::notify::DecisionSignals;
use super::{
    Checkpoint, CheckpointWithJournal, ClaimedRun, DEFAULT_LEASE, Decision, FINISHED, JournalEntry,
    Lease, PendingApprovals, RecentRuns, RecordedDecision, Recording, RunPage, RunQuery, RunStore,
    RunSummary, StoreError, check_claimable, check_deletable, check_readable, collect_pending,
    decided_during_run, decode_state, encode_state, expiry_cutoff, new_token, newest_first,
    now_millis, page_of, recent_of, record_decision, short_journal, status_name, summary,
};
use crate::run::{RunState, RunStatus};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

mod raw;
mod record;

use record::{Record, held_by, record, record_mut};

/// A [`RunStore`] in this process's memory: for tests, and for runs that only need to pause
/// within one process. Clones share the same runs.
///
/// It keeps runs exactly as the database stores do (encoded JSON, versions, leases), so code
/// tested against it behaves the same on SQLite or PostgreSQL.
///
/// ```
/// use reins::agent::{
///     AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext, PromptError,
///     ToolDecision,
/// };
/// use reins::store::{Decision, MemoryStore, RunStore};
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// /// Every deletion waits for a person.
/// struct AskFirst;
///
/// impl AgentHook for AskFirst {
///     async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
///         match event.tool_name() {
///             Some("delete") => DispatchAction::suspend("deletions need approval"),
///             _ => DispatchAction::proceed(),
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let model = ScriptedModel::new([
///     Turn::tool_call("delete", json!({"path": "/tmp/old"})),
///     Turn::text("Deleted it."),
/// ]);
/// let delete = reins::tool::tool_fn("delete", "Deletes a file.", |_: serde_json::Value| async move {
///     Ok::<_, std::convert::Infallible>("deleted")
/// });
/// let agent = AgentBuilder::new(model).tool(delete).add_hook(AskFirst).build();
/// let store = MemoryStore::new();
///
/// // The run checkpoints into the store and pauses there.
/// let paused = agent.prompt("Clean up.").run_id("cleanup").durable(store.clone()).await;
/// assert!(matches!(paused, Err(PromptError::Suspended { .. })));
///
/// // A person (an inbox, a CLI) lists what waits and decides.
/// let waiting = store.pending_approvals().await?.approvals;
/// assert_eq!(waiting[0].tool_name, "delete");
/// store
///     .decide("cleanup", &Decision::new(&waiting[0], ToolDecision::approve(), "ops@example.com"))
///     .await?;
///
/// // Any worker then resumes the run by its id, from the store.
/// let answer = agent.resume_stored(store.clone(), "cleanup").await?;
/// assert_eq!(answer, "Deleted it.");
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Default)]
pub struct MemoryStore {
    runs: Arc<Mutex<BTreeMap<String, Record>>>,
    lease: Option<Duration>,
    /// How many checkpoints of a run are kept (`None`: all).
    keep_checkpoints: Option<usize>,
    signals: DecisionSignals,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MemoryStore({} runs)", self.lock().len())
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryStore::default()
    }

    /// Sets how long a claim lasts without a checkpoint (default [`DEFAULT_LEASE`]).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = Some(lease);
        self
    }

    /// Keeps only the newest `newest` checkpoints of each run (at least one): older ones are
    /// deleted as new ones are written, so a long run's record grows with its state, not with
    /// its state times its turns. [`checkpoints`](RunStore::checkpoints) and forks reach back
    /// that far only. By default every checkpoint is kept.
    pub fn keep_checkpoints(mut self, newest: usize) -> Self {
        self.keep_checkpoints = Some(newest.max(1));
        self
    }

    fn lease_millis(&self) -> i64 {
        i64::try_from(self.lease.unwrap_or(DEFAULT_LEASE).as_millis()).unwrap_or(i64::MAX)
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Record>> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stores a new run at version 1 with `journal`, leased to `(owner, token)` if given.
    fn insert(
        &self,
        state: &RunState,
        lease: Option<(&str, &str)>,
        journal: &[JournalEntry],
    ) -> Result<(), StoreError> {
        let encoded = encode_state(state)?;
        let mut runs = self.lock();
        if runs.contains_key(&state.run_id) {
            return Err(StoreError::AlreadyExists(state.run_id.clone()));
        }
        let now = now_millis();
        let mut record = Record {
            version: 1,
            format: i64::from(super::FORMAT_VERSION),
            status: super::status_name(state.status).to_owned(),
            state: encoded,
            owner: lease.map(|(owner, _)| owner.to_owned()),
            token: lease.map(|(_, token)| token.to_owned()),
            lease_until: if lease.is_some() {
                now + self.lease_millis()
            } else {
                0
            },
            created_at: now,
            updated_at: now,
            agent_name: state.agent_name.clone(),
            journal: journal.to_vec(),
            decisions: Vec::new(),
            audit: Vec::new(),
            snapshots: Vec::new(),
        };
        record.snapshot(state.status, self.keep_checkpoints);
        runs.insert(state.run_id.clone(), record);
        Ok(())
    }

    /// [`RunStore::claim`], or with `taking_over` [`RunStore::claim_from`] that holder: one
    /// lock, so the holder checked is the holder replaced.
    fn claim_taking_over(
        &self,
        run_id: &str,
        owner: &str,
        taking_over: Option<&str>,
    ) -> Result<ClaimedRun, StoreError> {
        let mut runs = self.lock();
        let record = record_mut(&mut runs, run_id)?;
        let state = decode_state(run_id, record.format, &record.state)?;
        let now = now_millis();
        let holder = record.owner.as_deref();
        check_claimable(run_id, &state, holder, record.lease_until, now, taking_over)?;
        let token = new_token();
        record.version += 1;
        record.owner = Some(owner.to_owned());
        record.token = Some(token.clone());
        record.lease_until = now + self.lease_millis();
        record.updated_at = now;
        Ok(ClaimedRun {
            state,
            decisions: record.decisions.clone(),
            lease: Lease {
                run_id: run_id.to_owned(),
                token,
                owner: owner.to_owned(),
                version: record.version,
            },
        })
    }
}

impl RunStore for MemoryStore {
    async fn create(&self, state: &RunState, owner: &str) -> Result<Lease, StoreError> {
        let token = new_token();
        self.insert(state, Some((owner, &token)), &[])?;
        Ok(Lease {
            run_id: state.run_id.clone(),
            token,
            owner: owner.to_owned(),
            version: 1,
        })
    }

    async fn create_forked(
        &self,
        state: &RunState,
        journal: &[JournalEntry],
    ) -> Result<(), StoreError> {
        self.insert(state, None, journal)
    }

    async fn claim(&self, run_id: &str, owner: &str) -> Result<ClaimedRun, StoreError> {
        self.claim_taking_over(run_id, owner, None)
    }

    async fn claim_from(
        &self,
        run_id: &str,
        owner: &str,
        holder: &str,
    ) -> Result<ClaimedRun, StoreError> {
        self.claim_taking_over(run_id, owner, Some(holder))
    }

    async fn checkpoint(
        &self,
        lease: &Lease,
        state: &RunState,
        journal: &[JournalEntry],
        release: bool,
    ) -> Result<Lease, StoreError> {
        let encoded = encode_state(state)?;
        let mut runs = self.lock();
        let record = record_mut(&mut runs, &lease.run_id)?;
        held_by(record, lease)?;
        record.version += 1;
        record.state = encoded;
        // Rewritten in this release's format, whichever it was read from.
        record.format = i64::from(super::FORMAT_VERSION);
        record.status = super::status_name(state.status).to_owned();
        record.agent_name.clone_from(&state.agent_name);
        record.journal.extend_from_slice(journal);
        record.updated_at = now_millis();
        record.snapshot(state.status, self.keep_checkpoints);
        if release {
            record.owner = None;
            record.token = None;
            record.lease_until = 0;
        } else {
            record.lease_until = now_millis() + self.lease_millis();
        }
        Ok(Lease {
            version: record.version,
            ..lease.clone()
        })
    }

    async fn load(&self, run_id: &str) -> Result<RunState, StoreError> {
        let runs = self.lock();
        let record = record(&runs, run_id)?;
        decode_state(run_id, record.format, &record.state)
    }

    async fn journal(&self, run_id: &str) -> Result<Vec<JournalEntry>, StoreError> {
        // An unknown run has no journal, as in the database stores.
        let runs = self.lock();
        Ok(runs
            .get(run_id)
            .map(|record| record.journal.clone())
            .unwrap_or_default())
    }

    async fn decide(
        &self,
        run_id: &str,
        decision: &Decision,
    ) -> Result<RecordedDecision, StoreError> {
        let mut runs = self.lock();
        let record = record_mut(&mut runs, run_id)?;
        let state = decode_state(run_id, record.format, &record.state)?;
        let lease = (record.owner.as_deref(), record.lease_until);
        let standing = &record.decisions;
        let recorded = match record_decision(
            run_id,
            &state,
            lease,
            standing,
            decision.clone(),
            now_millis(),
        )? {
            Recording::New(recorded) => recorded,
            Recording::Repeated(recorded) => return Ok(recorded),
        };
        // A lease that ran out is taken from its worker, which would never apply this.
        record.owner = None;
        record.token = None;
        record.lease_until = 0;
        record
            .decisions
            .retain(|d| d.decision.internal_call_id != decision.internal_call_id);
        record.decisions.push(recorded.clone());
        record.audit.push(recorded.clone());
        drop(runs);
        self.signals.recorded(run_id);
        Ok(recorded)
    }

    async fn log_decision(
        &self,
        lease: &Lease,
        decision: &Decision,
    ) -> Result<RecordedDecision, StoreError> {
        let mut runs = self.lock();
        let record = record_mut(&mut runs, &lease.run_id)?;
        held_by(record, lease)?;
        let recorded = decided_during_run(lease, decision, now_millis());
        record.audit.push(recorded.clone());
        Ok(recorded)
    }

    async fn decisions(&self, run_id: &str) -> Result<Vec<RecordedDecision>, StoreError> {
        let runs = self.lock();
        let record = record(&runs, run_id)?;
        Ok(record.audit.clone())
    }

    async fn checkpoints(&self, run_id: &str) -> Result<Vec<Checkpoint>, StoreError> {
        let runs = self.lock();
        let record = record(&runs, run_id)?;
        Ok(record
            .snapshots
            .iter()
            .map(|snapshot| snapshot.checkpoint.clone())
            .collect())
    }

    async fn load_checkpoint(&self, run_id: &str, version: i64) -> Result<RunState, StoreError> {
        let runs = self.lock();
        let snapshot = runs.get(run_id).and_then(|record| {
            record
                .snapshots
                .iter()
                .find(|snapshot| snapshot.checkpoint.version == version)
        });
        match snapshot {
            Some(snapshot) => decode_state(run_id, snapshot.format, &snapshot.state),
            None => Err(StoreError::NoSuchCheckpoint {
                run_id: run_id.to_owned(),
                version,
            }),
        }
    }

    async fn checkpoint_with_journal(
        &self,
        run_id: &str,
        version: i64,
    ) -> Result<CheckpointWithJournal, StoreError> {
        // One lock: no write comes between the checkpoint and the journal.
        let runs = self.lock();
        let record = record(&runs, run_id)?;
        let snapshot = record
            .snapshots
            .iter()
            .find(|snapshot| snapshot.checkpoint.version == version)
            .ok_or_else(|| StoreError::NoSuchCheckpoint {
                run_id: run_id.to_owned(),
                version,
            })?;
        let checkpoint = snapshot.checkpoint.clone();
        let journal = record
            .journal
            .get(..checkpoint.journal_len)
            .ok_or_else(|| short_journal(run_id, &checkpoint, record.journal.len()))?;
        Ok(CheckpointWithJournal {
            state: decode_state(run_id, snapshot.format, &snapshot.state)?,
            journal: journal.to_vec(),
            checkpoint,
        })
    }

    async fn list(&self) -> Result<Vec<RunSummary>, StoreError> {
        let now = now_millis();
        self.lock()
            .iter()
            .map(|(run_id, record)| {
                summary(
                    run_id.clone(),
                    &record.status,
                    record.version,
                    record.times(),
                    record.lease(),
                    now,
                )
                .map(|run| run.with_agent_name(record.agent_name.clone()))
            })
            .collect()
    }

    fn lease_duration(&self) -> Duration {
        self.lease.unwrap_or(DEFAULT_LEASE)
    }

    async fn renew(&self, lease: &Lease) -> Result<Lease, StoreError> {
        let mut runs = self.lock();
        let record = record_mut(&mut runs, &lease.run_id)?;
        held_by(record, lease)?;
        record.lease_until = now_millis() + self.lease_millis();
        Ok(lease.clone())
    }

    async fn pending_approvals(&self) -> Result<PendingApprovals, StoreError> {
        let runs = self.lock();
        let mut listing = PendingApprovals::default();
        // The suspended runs, and those whose status is unknown: reported as unreadable.
        for (run_id, record) in runs.iter() {
            let read = match super::status_from_name(run_id, &record.status) {
                Ok(RunStatus::Suspended) => decode_state(run_id, record.format, &record.state)
                    .map(|state| (state, record.decisions.clone())),
                Ok(_) => continue,
                Err(error) => Err(error),
            };
            collect_pending(&mut listing, run_id, read)?;
        }
        Ok(listing)
    }

    async fn list_runs(&self, query: &RunQuery) -> Result<RunPage, StoreError> {
        let wanted = query.status.map(status_name);
        let now = now_millis();
        let runs = self
            .lock()
            .iter()
            .filter(|(run_id, _)| query.after_id().is_none_or(|after| run_id.as_str() > after))
            .filter(|(_, record)| wanted.is_none_or(|status| record.status == status))
            .take(query.limit() + 1)
            .map(|(run_id, record)| record.listed(run_id, now))
            .collect();
        Ok(page_of(runs, query))
    }

    async fn recent_runs(
        &self,
        status: Option<RunStatus>,
        limit: usize,
    ) -> Result<RecentRuns, StoreError> {
        let wanted = status.map(status_name);
        let now = now_millis();
        let runs = self.lock();
        // One pass over the records, sorting only those selected; no state is decoded.
        let mut selected: Vec<_> = runs
            .iter()
            .filter(|(_, record)| wanted.is_none_or(|status| record.status == status))
            .collect();
        selected.sort_unstable_by_key(|(run_id, record)| newest_first(record.updated_at, run_id));
        let rows = selected
            .into_iter()
            .take(limit)
            .map(|(run_id, record)| record.listed(run_id, now))
            .collect();
        Ok(recent_of(rows))
    }

    async fn delete(&self, run_id: &str) -> Result<(), StoreError> {
        let mut runs = self.lock();
        let record = record(&runs, run_id)?;
        check_deletable(run_id, record.format, &record.status)?;
        runs.remove(run_id);
        Ok(())
    }

    async fn expire(&self, older_than: Duration) -> Result<u64, StoreError> {
        let cutoff = expiry_cutoff(older_than);
        let mut runs = self.lock();
        let before = runs.len();
        // A record this release cannot read is another release's to expire.
        runs.retain(|run_id, record| {
            !(FINISHED.contains(&record.status.as_str())
                && record.updated_at <= cutoff
                && check_readable(run_id, record.format).is_ok())
        });
        Ok(u64::try_from(before - runs.len()).unwrap_or(u64::MAX))
    }

    async fn watch_decisions(&self) -> Result<DecisionWatch, StoreError> {
        Ok(DecisionWatch::new(&self.signals, None))
    }
}
