//! The object-safe form of [`RunStore`], for code that holds "some store" without a type
//! parameter: a durable run's driver, and [`BoxedStore`]. A store's panic is caught here and
//! answered as [`StoreError::Panicked`], as a model's, a tool's or a hook's is by the run.

use super::{
    BoxedStore, Checkpoint, CheckpointWithJournal, ClaimedRun, Decision, DecisionWatch,
    JournalEntry, Lease, PendingApprovals, RecentRuns, RecordedDecision, RunPage, RunQuery,
    RunStore, RunSummary, StoreError,
};
use crate::panics::{call_caught, panic_message};
use crate::run::{RunState, RunStatus};
use futures::future::BoxFuture;
use std::any::Any;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// [`RunStore`] with every future boxed, so stores of different types fit behind `dyn`. Every
/// [`RunStore`] is one (blanket impl); each call costs one box. A panic in the store's code,
/// in the call or any poll of its answer, is answered as [`StoreError::Panicked`].
pub(crate) trait DynRunStore: Send + Sync + 'static {
    fn create<'a>(
        &'a self,
        state: &'a RunState,
        owner: &'a str,
    ) -> BoxFuture<'a, Result<Lease, StoreError>>;
    fn create_forked<'a>(
        &'a self,
        state: &'a RunState,
        journal: &'a [JournalEntry],
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    fn claim<'a>(
        &'a self,
        run_id: &'a str,
        owner: &'a str,
    ) -> BoxFuture<'a, Result<ClaimedRun, StoreError>>;
    fn claim_from<'a>(
        &'a self,
        run_id: &'a str,
        owner: &'a str,
        holder: &'a str,
    ) -> BoxFuture<'a, Result<ClaimedRun, StoreError>>;
    fn checkpoint<'a>(
        &'a self,
        lease: &'a Lease,
        state: &'a RunState,
        journal: &'a [JournalEntry],
        release: bool,
    ) -> BoxFuture<'a, Result<Lease, StoreError>>;
    fn load<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<RunState, StoreError>>;
    fn journal<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<JournalEntry>, StoreError>>;
    fn decide<'a>(
        &'a self,
        run_id: &'a str,
        decision: &'a Decision,
    ) -> BoxFuture<'a, Result<RecordedDecision, StoreError>>;
    fn log_decision<'a>(
        &'a self,
        lease: &'a Lease,
        decision: &'a Decision,
    ) -> BoxFuture<'a, Result<RecordedDecision, StoreError>>;
    fn decisions<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<RecordedDecision>, StoreError>>;
    fn checkpoints<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Checkpoint>, StoreError>>;
    fn load_checkpoint<'a>(
        &'a self,
        run_id: &'a str,
        version: i64,
    ) -> BoxFuture<'a, Result<RunState, StoreError>>;
    fn checkpoint_with_journal<'a>(
        &'a self,
        run_id: &'a str,
        version: i64,
    ) -> BoxFuture<'a, Result<CheckpointWithJournal, StoreError>>;
    fn list(&self) -> BoxFuture<'_, Result<Vec<RunSummary>, StoreError>>;
    fn list_runs<'a>(&'a self, query: &'a RunQuery) -> BoxFuture<'a, Result<RunPage, StoreError>>;
    fn recent_runs(
        &self,
        status: Option<RunStatus>,
        limit: usize,
    ) -> BoxFuture<'_, Result<RecentRuns, StoreError>>;
    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;
    fn expire(&self, older_than: Duration) -> BoxFuture<'_, Result<u64, StoreError>>;
    fn watch_decisions(&self) -> BoxFuture<'_, Result<DecisionWatch, StoreError>>;
    fn pending_approvals(&self) -> BoxFuture<'_, Result<PendingApprovals, StoreError>>;
    fn lease_duration(&self) -> Duration;
    fn renew<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<Lease, StoreError>>;
    /// The store's type, for `Debug` output.
    fn type_name(&self) -> &'static str;
}

impl<S: RunStore> DynRunStore for S {
    fn create<'a>(
        &'a self,
        state: &'a RunState,
        owner: &'a str,
    ) -> BoxFuture<'a, Result<Lease, StoreError>> {
        caught(move || RunStore::create(self, state, owner))
    }

    fn create_forked<'a>(
        &'a self,
        state: &'a RunState,
        journal: &'a [JournalEntry],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        caught(move || RunStore::create_forked(self, state, journal))
    }

    fn claim<'a>(
        &'a self,
        run_id: &'a str,
        owner: &'a str,
    ) -> BoxFuture<'a, Result<ClaimedRun, StoreError>> {
        caught(move || RunStore::claim(self, run_id, owner))
    }

    fn claim_from<'a>(
        &'a self,
        run_id: &'a str,
        owner: &'a str,
        holder: &'a str,
    ) -> BoxFuture<'a, Result<ClaimedRun, StoreError>> {
        caught(move || RunStore::claim_from(self, run_id, owner, holder))
    }

    fn checkpoint<'a>(
        &'a self,
        lease: &'a Lease,
        state: &'a RunState,
        journal: &'a [JournalEntry],
        release: bool,
    ) -> BoxFuture<'a, Result<Lease, StoreError>> {
        caught(move || RunStore::checkpoint(self, lease, state, journal, release))
    }

    fn load<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<RunState, StoreError>> {
        caught(move || RunStore::load(self, run_id))
    }

    fn journal<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<JournalEntry>, StoreError>> {
        caught(move || RunStore::journal(self, run_id))
    }

    fn decide<'a>(
        &'a self,
        run_id: &'a str,
        decision: &'a Decision,
    ) -> BoxFuture<'a, Result<RecordedDecision, StoreError>> {
        caught(move || RunStore::decide(self, run_id, decision))
    }

    fn log_decision<'a>(
        &'a self,
        lease: &'a Lease,
        decision: &'a Decision,
    ) -> BoxFuture<'a, Result<RecordedDecision, StoreError>> {
        caught(move || RunStore::log_decision(self, lease, decision))
    }

    fn decisions<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<RecordedDecision>, StoreError>> {
        caught(move || RunStore::decisions(self, run_id))
    }

    fn checkpoints<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Checkpoint>, StoreError>> {
        caught(move || RunStore::checkpoints(self, run_id))
    }

    fn load_checkpoint<'a>(
        &'a self,
        run_id: &'a str,
        version: i64,
    ) -> BoxFuture<'a, Result<RunState, StoreError>> {
        caught(move || RunStore::load_checkpoint(self, run_id, version))
    }

    fn checkpoint_with_journal<'a>(
        &'a self,
        run_id: &'a str,
        version: i64,
    ) -> BoxFuture<'a, Result<CheckpointWithJournal, StoreError>> {
        caught(move || RunStore::checkpoint_with_journal(self, run_id, version))
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<RunSummary>, StoreError>> {
        caught(move || RunStore::list(self))
    }

    fn list_runs<'a>(&'a self, query: &'a RunQuery) -> BoxFuture<'a, Result<RunPage, StoreError>> {
        caught(move || RunStore::list_runs(self, query))
    }

    fn recent_runs(
        &self,
        status: Option<RunStatus>,
        limit: usize,
    ) -> BoxFuture<'_, Result<RecentRuns, StoreError>> {
        caught(move || RunStore::recent_runs(self, status, limit))
    }

    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        caught(move || RunStore::delete(self, run_id))
    }

    fn expire(&self, older_than: Duration) -> BoxFuture<'_, Result<u64, StoreError>> {
        caught(move || RunStore::expire(self, older_than))
    }

    fn watch_decisions(&self) -> BoxFuture<'_, Result<DecisionWatch, StoreError>> {
        caught(move || RunStore::watch_decisions(self))
    }

    fn pending_approvals(&self) -> BoxFuture<'_, Result<PendingApprovals, StoreError>> {
        caught(move || RunStore::pending_approvals(self))
    }

    fn lease_duration(&self) -> Duration {
        // A store that panics here is given the default lease: it is only how often the run
        // renews, and the renewal itself is caught like every other call.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            RunStore::lease_duration(self)
        }))
        .unwrap_or(super::DEFAULT_LEASE)
    }

    fn renew<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<Lease, StoreError>> {
        caught(move || RunStore::renew(self, lease))
    }

    fn type_name(&self) -> &'static str {
        std::any::type_name::<S>()
    }
}

/// The store's answer to `call`, boxed, with the store's code (the call and every poll)
/// inside a catch. A panic is answered as [`StoreError::Panicked`] instead of unwinding into
/// the run that asked, which then fails with that error as it would with any other of the
/// store's.
fn caught<'a, T, F>(call: impl FnOnce() -> F + Send + 'a) -> BoxFuture<'a, Result<T, StoreError>>
where
    F: Future<Output = Result<T, StoreError>> + Send + 'a,
{
    Box::pin(async move {
        call_caught(call)
            .await
            .unwrap_or_else(|panic| Err(StoreError::Panicked(panic_message(&*panic))))
    })
}

impl std::fmt::Debug for dyn DynRunStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RunStore").field(&self.type_name()).finish()
    }
}

/// A shared, type-erased store.
pub(crate) type SharedStore = Arc<dyn DynRunStore>;

/// Erases `store`. A [`BoxedStore`] already holds an erased store, which is shared as it is:
/// wrapping it again would box every call twice.
pub(crate) fn share<S: RunStore>(store: S) -> SharedStore {
    match (&store as &dyn Any).downcast_ref::<BoxedStore>() {
        Some(boxed) => boxed.shared().clone(),
        None => Arc::new(store),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    #[test]
    fn a_boxed_store_is_shared_without_another_layer() {
        let boxed = BoxedStore::new(MemoryStore::new());
        assert!(Arc::ptr_eq(&share(boxed.clone()), boxed.shared()));
        let reboxed = BoxedStore::new(boxed.clone());
        assert!(Arc::ptr_eq(reboxed.shared(), boxed.shared()));
    }

    #[test]
    fn debug_output_names_the_store_type() {
        let shown = format!("{:?}", share(MemoryStore::new()));
        assert!(
            shown.starts_with("RunStore(") && shown.contains("MemoryStore"),
            "{shown}"
        );
    }
}
