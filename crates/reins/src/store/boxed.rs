//! [`BoxedStore`]: some store, chosen at run time, behind one type.

use super::{
    Checkpoint, ClaimedRun, Decision, DecisionWatch, JournalEntry, Lease, PendingApprovals,
    RecordedDecision, RunPage, RunQuery, RunStore, RunSummary, StoreError,
};
use crate::run::RunState;
use futures::future::BoxFuture;
use std::sync::Arc;
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
pub struct BoxedStore(Arc<dyn RunStore>);

impl BoxedStore {
    /// Boxes `store`.
    pub fn new<S: RunStore>(store: S) -> Self {
        BoxedStore(Arc::new(store))
    }
}

impl std::fmt::Debug for BoxedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BoxedStore")
    }
}

impl RunStore for BoxedStore {
    fn create<'a>(
        &'a self,
        state: &'a RunState,
        owner: &'a str,
    ) -> BoxFuture<'a, Result<Lease, StoreError>> {
        self.0.create(state, owner)
    }

    fn claim<'a>(
        &'a self,
        run_id: &'a str,
        owner: &'a str,
    ) -> BoxFuture<'a, Result<ClaimedRun, StoreError>> {
        self.0.claim(run_id, owner)
    }

    fn checkpoint<'a>(
        &'a self,
        lease: &'a Lease,
        state: &'a RunState,
        journal: &'a [JournalEntry],
        release: bool,
    ) -> BoxFuture<'a, Result<Lease, StoreError>> {
        self.0.checkpoint(lease, state, journal, release)
    }

    fn load<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<RunState, StoreError>> {
        self.0.load(run_id)
    }

    fn journal<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<JournalEntry>, StoreError>> {
        self.0.journal(run_id)
    }

    fn decide<'a>(
        &'a self,
        run_id: &'a str,
        decision: &'a Decision,
    ) -> BoxFuture<'a, Result<RecordedDecision, StoreError>> {
        self.0.decide(run_id, decision)
    }

    fn decisions<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<RecordedDecision>, StoreError>> {
        self.0.decisions(run_id)
    }

    fn checkpoints<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Checkpoint>, StoreError>> {
        self.0.checkpoints(run_id)
    }

    fn load_checkpoint<'a>(
        &'a self,
        run_id: &'a str,
        version: i64,
    ) -> BoxFuture<'a, Result<RunState, StoreError>> {
        self.0.load_checkpoint(run_id, version)
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<RunSummary>, StoreError>> {
        self.0.list()
    }

    fn list_runs<'a>(&'a self, query: &'a RunQuery) -> BoxFuture<'a, Result<RunPage, StoreError>> {
        self.0.list_runs(query)
    }

    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.0.delete(run_id)
    }

    fn expire(&self, older_than: Duration) -> BoxFuture<'_, Result<u64, StoreError>> {
        self.0.expire(older_than)
    }

    fn watch_decisions(&self) -> BoxFuture<'_, Result<DecisionWatch, StoreError>> {
        self.0.watch_decisions()
    }

    fn pending_approvals(&self) -> BoxFuture<'_, Result<PendingApprovals, StoreError>> {
        self.0.pending_approvals()
    }
}
