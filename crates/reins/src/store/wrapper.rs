//! [`StoreWrapper`]: a store over another that changes some of what it does and passes every
//! other call on, written once here instead of by hand in every such store.

#[cfg(doc)]
use super::BoxedStore;
use super::{
    Checkpoint, CheckpointWithJournal, ClaimedRun, Decision, DecisionWatch, JournalEntry, Lease,
    PendingApprovals, RecentRuns, RecordedDecision, RunPage, RunQuery, RunStore, RunSummary,
    StoreError,
};
use crate::run::{RunState, RunStatus};
use std::future::Future;
use std::time::Duration;

/// A store that wraps another — its [`inner`](Self::inner) store — and changes only some of
/// what it does: counts or logs writes, injects faults in tests, keeps the lease of the run
/// written through it. Every `StoreWrapper` is a [`RunStore`] (a blanket impl), and every
/// method it leaves out passes the call on to the inner store unchanged,
/// [`lease_duration`](RunStore::lease_duration) and [`renew`](RunStore::renew) included: a
/// wrapper keeps the inner store's lease length and its way of renewing unless it says
/// otherwise, which a hand-written forward is easy to forget (the trait's defaults would then
/// renew by writing a checkpoint, on a lease of [`DEFAULT_LEASE`](super::DEFAULT_LEASE)).
///
/// The methods are [`RunStore`]'s, with the same contracts; implement those you change with
/// `async fn`, as for [`RunStore`]. Call a wrapper's methods through [`RunStore`] (import only
/// it): where both traits are in scope, as in the module that implements the wrapper, the
/// method names are ambiguous, so write `RunStore::load(self, ..)` there, or call the inner
/// store.
///
/// [`BoxedStore`] is not one: it wraps the erased form of a store, not a [`RunStore`].
///
/// Here, a store that counts the checkpoints written to the [`MemoryStore`](super::MemoryStore)
/// it wraps:
///
/// ```
/// use reins::agent::{AgentBuilder, RunState};
/// use reins::store::{JournalEntry, Lease, MemoryStore, RunStore, StoreError, StoreWrapper};
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// /// A [`MemoryStore`] that counts the checkpoints written to it.
/// #[derive(Clone, Default)]
/// struct CountingStore {
///     inner: MemoryStore,
///     checkpoints: Arc<AtomicUsize>,
/// }
///
/// impl StoreWrapper for CountingStore {
///     type Inner = MemoryStore;
///
///     fn inner(&self) -> &MemoryStore {
///         &self.inner
///     }
///
///     // Everything else is the inner store's.
///     async fn checkpoint(
///         &self,
///         lease: &Lease,
///         state: &RunState,
///         journal: &[JournalEntry],
///         release: bool,
///     ) -> Result<Lease, StoreError> {
///         let lease = self.inner.checkpoint(lease, state, journal, release).await?;
///         self.checkpoints.fetch_add(1, Ordering::Relaxed);
///         Ok(lease)
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let model = ScriptedModel::new([
///     Turn::tool_call("add", json!({"a": 2, "b": 3})),
///     Turn::text("5"),
/// ]);
/// let add = reins::tool::tool_fn("add", "Adds two numbers.", |args: serde_json::Value| async move {
///     Ok::<_, String>(args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0))
/// });
/// let agent = AgentBuilder::new(model).tool(add).build();
/// let store = CountingStore::default();
/// let answer = agent.prompt("2 + 3?").run_id("sum").durable(store.clone()).await?;
/// assert_eq!(answer, "5");
/// // Every write after the first (`create`) went through the counting store.
/// let written = store.inner.checkpoints("sum").await?;
/// assert!(written.len() > 1);
/// assert_eq!(store.checkpoints.load(Ordering::Relaxed), written.len() - 1);
/// # Ok(())
/// # }
/// ```
pub trait StoreWrapper: Send + Sync + 'static {
    /// The store wrapped.
    type Inner: RunStore;

    /// The store every call this wrapper does not change goes to.
    fn inner(&self) -> &Self::Inner;

    /// [`RunStore::create`]: the inner store's unless changed.
    fn create(
        &self,
        state: &RunState,
        owner: &str,
    ) -> impl Future<Output = Result<Lease, StoreError>> + Send {
        RunStore::create(self.inner(), state, owner)
    }

    /// [`RunStore::create_forked`]: the inner store's unless changed.
    fn create_forked(
        &self,
        state: &RunState,
        journal: &[JournalEntry],
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        RunStore::create_forked(self.inner(), state, journal)
    }

    /// [`RunStore::claim`]: the inner store's unless changed.
    fn claim(
        &self,
        run_id: &str,
        owner: &str,
    ) -> impl Future<Output = Result<ClaimedRun, StoreError>> + Send {
        RunStore::claim(self.inner(), run_id, owner)
    }

    /// [`RunStore::claim_from`]: the inner store's unless changed.
    fn claim_from(
        &self,
        run_id: &str,
        owner: &str,
        holder: &str,
    ) -> impl Future<Output = Result<ClaimedRun, StoreError>> + Send {
        RunStore::claim_from(self.inner(), run_id, owner, holder)
    }

    /// [`RunStore::checkpoint`]: the inner store's unless changed.
    fn checkpoint(
        &self,
        lease: &Lease,
        state: &RunState,
        journal: &[JournalEntry],
        release: bool,
    ) -> impl Future<Output = Result<Lease, StoreError>> + Send {
        RunStore::checkpoint(self.inner(), lease, state, journal, release)
    }

    /// [`RunStore::load`]: the inner store's unless changed.
    fn load(&self, run_id: &str) -> impl Future<Output = Result<RunState, StoreError>> + Send {
        RunStore::load(self.inner(), run_id)
    }

    /// [`RunStore::journal`]: the inner store's unless changed.
    fn journal(
        &self,
        run_id: &str,
    ) -> impl Future<Output = Result<Vec<JournalEntry>, StoreError>> + Send {
        RunStore::journal(self.inner(), run_id)
    }

    /// [`RunStore::decide`]: the inner store's unless changed.
    fn decide(
        &self,
        run_id: &str,
        decision: &Decision,
    ) -> impl Future<Output = Result<RecordedDecision, StoreError>> + Send {
        RunStore::decide(self.inner(), run_id, decision)
    }

    /// [`RunStore::log_decision`]: the inner store's unless changed.
    fn log_decision(
        &self,
        lease: &Lease,
        decision: &Decision,
    ) -> impl Future<Output = Result<RecordedDecision, StoreError>> + Send {
        RunStore::log_decision(self.inner(), lease, decision)
    }

    /// [`RunStore::decisions`]: the inner store's unless changed.
    fn decisions(
        &self,
        run_id: &str,
    ) -> impl Future<Output = Result<Vec<RecordedDecision>, StoreError>> + Send {
        RunStore::decisions(self.inner(), run_id)
    }

    /// [`RunStore::checkpoints`]: the inner store's unless changed.
    fn checkpoints(
        &self,
        run_id: &str,
    ) -> impl Future<Output = Result<Vec<Checkpoint>, StoreError>> + Send {
        RunStore::checkpoints(self.inner(), run_id)
    }

    /// [`RunStore::load_checkpoint`]: the inner store's unless changed.
    fn load_checkpoint(
        &self,
        run_id: &str,
        version: i64,
    ) -> impl Future<Output = Result<RunState, StoreError>> + Send {
        RunStore::load_checkpoint(self.inner(), run_id, version)
    }

    /// [`RunStore::checkpoint_with_journal`]: the inner store's unless changed (the inner
    /// store's one read, not this wrapper's `checkpoints`, `load_checkpoint` and `journal`: a
    /// wrapper that changes what those read should change this too).
    fn checkpoint_with_journal(
        &self,
        run_id: &str,
        version: i64,
    ) -> impl Future<Output = Result<CheckpointWithJournal, StoreError>> + Send {
        RunStore::checkpoint_with_journal(self.inner(), run_id, version)
    }

    /// [`RunStore::list`]: the inner store's unless changed.
    fn list(&self) -> impl Future<Output = Result<Vec<RunSummary>, StoreError>> + Send {
        RunStore::list(self.inner())
    }

    /// [`RunStore::list_runs`]: the inner store's unless changed.
    fn list_runs(
        &self,
        query: &RunQuery,
    ) -> impl Future<Output = Result<RunPage, StoreError>> + Send {
        RunStore::list_runs(self.inner(), query)
    }

    /// [`RunStore::recent_runs`]: the inner store's unless changed.
    fn recent_runs(
        &self,
        status: Option<RunStatus>,
        limit: usize,
    ) -> impl Future<Output = Result<RecentRuns, StoreError>> + Send {
        RunStore::recent_runs(self.inner(), status, limit)
    }

    /// [`RunStore::delete`]: the inner store's unless changed.
    fn delete(&self, run_id: &str) -> impl Future<Output = Result<(), StoreError>> + Send {
        RunStore::delete(self.inner(), run_id)
    }

    /// [`RunStore::expire`]: the inner store's unless changed.
    fn expire(&self, older_than: Duration) -> impl Future<Output = Result<u64, StoreError>> + Send {
        RunStore::expire(self.inner(), older_than)
    }

    /// [`RunStore::watch_decisions`]: the inner store's unless changed.
    fn watch_decisions(&self) -> impl Future<Output = Result<DecisionWatch, StoreError>> + Send {
        RunStore::watch_decisions(self.inner())
    }

    /// [`RunStore::pending_approvals`]: the inner store's unless changed.
    fn pending_approvals(
        &self,
    ) -> impl Future<Output = Result<PendingApprovals, StoreError>> + Send {
        RunStore::pending_approvals(self.inner())
    }

    /// [`RunStore::lease_duration`]: the inner store's unless changed.
    fn lease_duration(&self) -> Duration {
        RunStore::lease_duration(self.inner())
    }

    /// [`RunStore::renew`]: the inner store's unless changed.
    fn renew(&self, lease: &Lease) -> impl Future<Output = Result<Lease, StoreError>> + Send {
        RunStore::renew(self.inner(), lease)
    }
}

impl<W: StoreWrapper> RunStore for W {
    fn create(
        &self,
        state: &RunState,
        owner: &str,
    ) -> impl Future<Output = Result<Lease, StoreError>> + Send {
        StoreWrapper::create(self, state, owner)
    }

    fn create_forked(
        &self,
        state: &RunState,
        journal: &[JournalEntry],
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        StoreWrapper::create_forked(self, state, journal)
    }

    fn claim(
        &self,
        run_id: &str,
        owner: &str,
    ) -> impl Future<Output = Result<ClaimedRun, StoreError>> + Send {
        StoreWrapper::claim(self, run_id, owner)
    }

    fn claim_from(
        &self,
        run_id: &str,
        owner: &str,
        holder: &str,
    ) -> impl Future<Output = Result<ClaimedRun, StoreError>> + Send {
        StoreWrapper::claim_from(self, run_id, owner, holder)
    }

    fn checkpoint(
        &self,
        lease: &Lease,
        state: &RunState,
        journal: &[JournalEntry],
        release: bool,
    ) -> impl Future<Output = Result<Lease, StoreError>> + Send {
        StoreWrapper::checkpoint(self, lease, state, journal, release)
    }

    fn load(&self, run_id: &str) -> impl Future<Output = Result<RunState, StoreError>> + Send {
        StoreWrapper::load(self, run_id)
    }

    fn journal(
        &self,
        run_id: &str,
    ) -> impl Future<Output = Result<Vec<JournalEntry>, StoreError>> + Send {
        StoreWrapper::journal(self, run_id)
    }

    fn decide(
        &self,
        run_id: &str,
        decision: &Decision,
    ) -> impl Future<Output = Result<RecordedDecision, StoreError>> + Send {
        StoreWrapper::decide(self, run_id, decision)
    }

    fn log_decision(
        &self,
        lease: &Lease,
        decision: &Decision,
    ) -> impl Future<Output = Result<RecordedDecision, StoreError>> + Send {
        StoreWrapper::log_decision(self, lease, decision)
    }

    fn decisions(
        &self,
        run_id: &str,
    ) -> impl Future<Output = Result<Vec<RecordedDecision>, StoreError>> + Send {
        StoreWrapper::decisions(self, run_id)
    }

    fn checkpoints(
        &self,
        run_id: &str,
    ) -> impl Future<Output = Result<Vec<Checkpoint>, StoreError>> + Send {
        StoreWrapper::checkpoints(self, run_id)
    }

    fn load_checkpoint(
        &self,
        run_id: &str,
        version: i64,
    ) -> impl Future<Output = Result<RunState, StoreError>> + Send {
        StoreWrapper::load_checkpoint(self, run_id, version)
    }

    fn checkpoint_with_journal(
        &self,
        run_id: &str,
        version: i64,
    ) -> impl Future<Output = Result<CheckpointWithJournal, StoreError>> + Send {
        StoreWrapper::checkpoint_with_journal(self, run_id, version)
    }

    fn list(&self) -> impl Future<Output = Result<Vec<RunSummary>, StoreError>> + Send {
        StoreWrapper::list(self)
    }

    fn list_runs(
        &self,
        query: &RunQuery,
    ) -> impl Future<Output = Result<RunPage, StoreError>> + Send {
        StoreWrapper::list_runs(self, query)
    }

    fn recent_runs(
        &self,
        status: Option<RunStatus>,
        limit: usize,
    ) -> impl Future<Output = Result<RecentRuns, StoreError>> + Send {
        StoreWrapper::recent_runs(self, status, limit)
    }

    fn delete(&self, run_id: &str) -> impl Future<Output = Result<(), StoreError>> + Send {
        StoreWrapper::delete(self, run_id)
    }

    fn expire(&self, older_than: Duration) -> impl Future<Output = Result<u64, StoreError>> + Send {
        StoreWrapper::expire(self, older_than)
    }

    fn watch_decisions(&self) -> impl Future<Output = Result<DecisionWatch, StoreError>> + Send {
        StoreWrapper::watch_decisions(self)
    }

    fn pending_approvals(
        &self,
    ) -> impl Future<Output = Result<PendingApprovals, StoreError>> + Send {
        StoreWrapper::pending_approvals(self)
    }

    fn lease_duration(&self) -> Duration {
        StoreWrapper::lease_duration(self)
    }

    fn renew(&self, lease: &Lease) -> impl Future<Output = Result<Lease, StoreError>> + Send {
        StoreWrapper::renew(self, lease)
    }
}
