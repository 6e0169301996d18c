//! [`FaultyStore`]: a store with one fault, over a working one, for the tests of what a run
//! does when its store goes wrong.

use reins::agent::RunState;
use reins::store::{
    ClaimedRun, JournalEntry, Lease, MemoryStore, RunStore, StoreError, StoreWrapper,
};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Notify;

/// Where the store goes wrong.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Fault {
    /// It panics in `create`, before returning its future.
    PanicInCreateCall,
    /// It panics while `checkpoint`'s future is polled.
    PanicInCheckpointPoll,
    /// Its checkpoint with this number (counted from 1) fails with a backend error, once.
    FailCheckpoint(usize),
    /// It fails every renewal of a lease until a run is claimed (so the lease lapses, and
    /// another worker takes the run); then it renews as its inner store does.
    FailRenewalsUntilAClaim,
    /// Its renewals never answer (a connection whose server went silent: the request sent,
    /// no answer and no error for as long as TCP waits).
    HangRenewals,
    /// Its checkpoint with this number is written, then its future never answers (a write
    /// taken by the database whose caller is dropped before it hears so).
    HangAfterCheckpoint(usize),
    /// Its `create` is written, then its answer waits until `answer_create` is told (a first
    /// write taken by the database whose caller may be dropped before it hears so).
    HoldCreate,
    /// None: it renews a lease as `RunStore`'s default renewal does, writing the stored state
    /// again (through its own `checkpoint`, which counts it), not as its inner store does.
    None,
}

/// A store (a [`MemoryStore`] unless told otherwise) with one fault.
#[derive(Clone)]
pub(super) struct FaultyStore<S = MemoryStore> {
    pub(super) inner: S,
    fault: Fault,
    pub(super) checkpoints: Arc<AtomicUsize>,
    claims: Arc<AtomicUsize>,
    /// Told when a checkpoint hangs, or a create is held.
    pub(super) hung: Arc<Notify>,
    /// Lets a held create answer.
    pub(super) answer_create: Arc<Notify>,
}

impl FaultyStore {
    pub(super) fn new(fault: Fault) -> Self {
        FaultyStore::over(MemoryStore::new(), fault)
    }
}

impl<S: RunStore> FaultyStore<S> {
    pub(super) fn over(inner: S, fault: Fault) -> Self {
        FaultyStore {
            inner,
            fault,
            checkpoints: Arc::default(),
            claims: Arc::default(),
            hung: Arc::default(),
            answer_create: Arc::default(),
        }
    }
}

// Every call it does not change is the inner store's.
impl<S: RunStore> StoreWrapper for FaultyStore<S> {
    type Inner = S;

    fn inner(&self) -> &S {
        &self.inner
    }

    // A plain `fn`: its body runs when it is called, before any poll.
    #[allow(clippy::manual_async_fn)]
    fn create(
        &self,
        state: &RunState,
        owner: &str,
    ) -> impl Future<Output = Result<Lease, StoreError>> + Send {
        assert_ne!(self.fault, Fault::PanicInCreateCall, "store bug in create");
        async move {
            let created = self.inner.create(state, owner).await;
            if self.fault == Fault::HoldCreate {
                self.hung.notify_one();
                self.answer_create.notified().await;
            }
            created
        }
    }
    async fn checkpoint(
        &self,
        lease: &Lease,
        state: &RunState,
        journal: &[JournalEntry],
        release: bool,
    ) -> Result<Lease, StoreError> {
        tokio::task::yield_now().await;
        assert_ne!(
            self.fault,
            Fault::PanicInCheckpointPoll,
            "store bug in checkpoint"
        );
        let number = self.checkpoints.fetch_add(1, Ordering::SeqCst) + 1;
        if self.fault == Fault::FailCheckpoint(number) {
            return Err(StoreError::Backend("connection reset".to_owned()));
        }
        let written = self.inner.checkpoint(lease, state, journal, release).await;
        if self.fault == Fault::HangAfterCheckpoint(number) {
            self.hung.notify_one();
            std::future::pending::<()>().await;
        }
        written
    }
    async fn claim(&self, run_id: &str, owner: &str) -> Result<ClaimedRun, StoreError> {
        let claimed = self.inner.claim(run_id, owner).await;
        if claimed.is_ok() {
            self.claims.fetch_add(1, Ordering::SeqCst);
        }
        claimed
    }
    async fn renew(&self, lease: &Lease) -> Result<Lease, StoreError> {
        match self.fault {
            Fault::FailRenewalsUntilAClaim if self.claims.load(Ordering::SeqCst) == 0 => Err(
                StoreError::Backend("the database is unreachable".to_owned()),
            ),
            Fault::FailRenewalsUntilAClaim => self.inner.renew(lease).await,
            Fault::HangRenewals => std::future::pending().await,
            // The trait's own renewal, which writes the stored state again.
            _ => {
                let stored = self.inner.load(&lease.run_id).await?;
                RunStore::checkpoint(self, lease, &stored, &[], false).await
            }
        }
    }
}
