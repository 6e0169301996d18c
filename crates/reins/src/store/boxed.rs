//! [`BoxedStore`]: some store, chosen at run time, behind one type.

use super::erased::{self, SharedStore};
use super::{
    Checkpoint, CheckpointWithJournal, ClaimedRun, Decision, DecisionWatch, JournalEntry, Lease,
    PendingApprovals, RecentRuns, RecordedDecision, RunPage, RunQuery, RunStore, RunSummary,
    StoreError,
};
use crate::run::{RunState, RunStatus};
use std::time::Duration;

/// Any [`RunStore`] behind one type, for a program that picks its store at run time (a
/// configuration file that says SQLite or PostgreSQL) and passes it around without generics.
/// Cheap to clone: clones share the store.
///
/// ```
/// use reins::store::{BoxedStore, MemoryStore, RunStore};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), reins::store::StoreError> {
/// let configured = "memory";
/// let store = match configured {
///     "memory" => BoxedStore::new(MemoryStore::new()),
///     other => panic!("unknown store {other}"),
/// };
/// assert!(store.list().await?.is_empty());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct BoxedStore(SharedStore);

impl BoxedStore {
    /// Boxes `store`.
    pub fn new<S: RunStore>(store: S) -> Self {
        BoxedStore(erased::share(store))
    }

    /// The erased store inside.
    pub(crate) fn shared(&self) -> &SharedStore {
        &self.0
    }
}

impl std::fmt::Debug for BoxedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("BoxedStore").field(&self.0).finish()
    }
}

impl RunStore for BoxedStore {
    // Awaiting the erased store's boxed future allocates nothing more: one box per call.
    async fn create(&self, state: &RunState, owner: &str) -> Result<Lease, StoreError> {
        self.0.create(state, owner).await
    }

    async fn create_forked(
        &self,
        state: &RunState,
        journal: &[JournalEntry],
    ) -> Result<(), StoreError> {
        self.0.create_forked(state, journal).await
    }

    async fn claim(&self, run_id: &str, owner: &str) -> Result<ClaimedRun, StoreError> {
        self.0.claim(run_id, owner).await
    }

    async fn claim_from(
        &self,
        run_id: &str,
        owner: &str,
        holder: &str,
    ) -> Result<ClaimedRun, StoreError> {
        self.0.claim_from(run_id, owner, holder).await
    }

    async fn checkpoint(
        &self,
        lease: &Lease,
        state: &RunState,
        journal: &[JournalEntry],
        release: bool,
    ) -> Result<Lease, StoreError> {
        self.0.checkpoint(lease, state, journal, release).await
    }

    async fn load(&self, run_id: &str) -> Result<RunState, StoreError> {
        self.0.load(run_id).await
    }

    async fn journal(&self, run_id: &str) -> Result<Vec<JournalEntry>, StoreError> {
        self.0.journal(run_id).await
    }

    async fn decide(
        &self,
        run_id: &str,
        decision: &Decision,
    ) -> Result<RecordedDecision, StoreError> {
        self.0.decide(run_id, decision).await
    }

    async fn log_decision(
        &self,
        lease: &Lease,
        decision: &Decision,
    ) -> Result<RecordedDecision, StoreError> {
        self.0.log_decision(lease, decision).await
    }

    async fn decisions(&self, run_id: &str) -> Result<Vec<RecordedDecision>, StoreError> {
        self.0.decisions(run_id).await
    }

    async fn checkpoints(&self, run_id: &str) -> Result<Vec<Checkpoint>, StoreError> {
        self.0.checkpoints(run_id).await
    }

    async fn load_checkpoint(&self, run_id: &str, version: i64) -> Result<RunState, StoreError> {
        self.0.load_checkpoint(run_id, version).await
    }

    async fn checkpoint_with_journal(
        &self,
        run_id: &str,
        version: i64,
    ) -> Result<CheckpointWithJournal, StoreError> {
        self.0.checkpoint_with_journal(run_id, version).await
    }

    async fn list(&self) -> Result<Vec<RunSummary>, StoreError> {
        self.0.list().await
    }

    async fn list_runs(&self, query: &RunQuery) -> Result<RunPage, StoreError> {
        self.0.list_runs(query).await
    }

    async fn recent_runs(
        &self,
        status: Option<RunStatus>,
        limit: usize,
    ) -> Result<RecentRuns, StoreError> {
        self.0.recent_runs(status, limit).await
    }

    async fn delete(&self, run_id: &str) -> Result<(), StoreError> {
        self.0.delete(run_id).await
    }

    async fn expire(&self, older_than: Duration) -> Result<u64, StoreError> {
        self.0.expire(older_than).await
    }

    async fn watch_decisions(&self) -> Result<DecisionWatch, StoreError> {
        self.0.watch_decisions().await
    }

    async fn pending_approvals(&self) -> Result<PendingApprovals, StoreError> {
        self.0.pending_approvals().await
    }

    fn lease_duration(&self) -> Duration {
        self.0.lease_duration()
    }

    async fn renew(&self, lease: &Lease) -> Result<Lease, StoreError> {
        self.0.renew(lease).await
    }
}
