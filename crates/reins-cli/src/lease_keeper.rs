//! [`LeaseKeeper`]: the store a run of `reins run`, `reins chat` or `reins runs resume`
//! writes through, keeping the lease the run holds, so that a run stopped by Ctrl-C gives its
//! lease back at once ([`LeaseKeeper::release`]) instead of keeping the run busy until the
//! lease expires.
//!
//! A run a dead `reins` process of this machine, pid namespace and boot left leased is taken
//! over at once ([`holder_is_gone`]), not waited for; [`worker_name`] makes the names that
//! tell.
//!
//! The run's writes (`create`, `claim`, `checkpoint`, and the lease's `renew`) each finish in their own task: a run
//! interrupted while a write is in flight drops its future, but the write still completes
//! and its lease is kept, so the release that follows writes after it with the lease it
//! returned, never with a stale one.

use reins::agent::RunState;
use reins::store::{
    BoxedStore, ClaimedRun, Decision, JournalEntry, Lease, RunStore, StoreError, StoreWrapper,
};
use std::sync::Arc;
use tokio::sync::Mutex;

mod holder;

pub use holder::{holder_is_gone, parse_worker_name, worker_name};

/// A store that remembers the lease of the run written through it. Clones share it.
#[derive(Clone)]
pub struct LeaseKeeper {
    inner: BoxedStore,
    /// The lease the run holds now; `None` before it is created or claimed and once its last
    /// checkpoint released it. Locked by every write for as long as the write takes.
    held: Arc<Mutex<Option<Lease>>>,
}

impl LeaseKeeper {
    /// Keeps the leases taken in `inner`.
    pub fn new(inner: BoxedStore) -> Self {
        LeaseKeeper {
            inner,
            held: Arc::new(Mutex::new(None)),
        }
    }

    /// Gives the run's lease back, after the write in flight (if any) has finished: the run's
    /// state is written again as the store holds it (nothing the run recorded is lost, nothing
    /// it did not record is added), released, so any process may resume it right away.
    /// Returns whether a lease was held.
    pub async fn release(&self) -> Result<bool, StoreError> {
        let mut held = self.held.lock().await;
        let Some(lease) = held.take() else {
            return Ok(false);
        };
        let stored = self.inner.load(&lease.run_id).await?;
        self.inner.checkpoint(&lease, &stored, &[], true).await?;
        Ok(true)
    }

    /// Logs in the trail of `run_id`, under the lease the run holds, a decision its own
    /// decider made while it goes on ([`RunStore::log_decision`]); nothing while this keeper
    /// holds no lease on that run.
    pub async fn log_decision(&self, run_id: &str, decision: &Decision) -> Result<(), StoreError> {
        // Held for the write, as every write holds it: the lease does not move meanwhile.
        let held = self.held.lock().await;
        match held.as_ref() {
            Some(lease) if lease.run_id == run_id => {
                self.inner.log_decision(lease, decision).await.map(drop)
            }
            _ => Ok(()),
        }
    }

    /// Claims `run_id` for `owner` ([`RunStore::claim`]), or takes it over from `holder`
    /// ([`RunStore::claim_from`]), keeping the lease.
    async fn claim_taking_over(
        &self,
        run_id: &str,
        owner: &str,
        holder: Option<String>,
    ) -> Result<ClaimedRun, StoreError> {
        let (inner, run_id, owner) = (self.inner.clone(), run_id.to_owned(), owner.to_owned());
        let claim = async move {
            match holder {
                Some(holder) => inner.claim_from(&run_id, &owner, &holder).await,
                None => inner.claim(&run_id, &owner).await,
            }
        };
        self.write(claim, |claimed| &claimed.lease, false).await
    }

    /// Runs `write` in a task of its own, holding the lock until it is done, and keeps the
    /// lease it returns (`None` when `release`d).
    async fn write<T, W>(
        &self,
        write: W,
        lease_of: fn(&T) -> &Lease,
        release: bool,
    ) -> Result<T, StoreError>
    where
        T: Send + 'static,
        W: std::future::Future<Output = Result<T, StoreError>> + Send + 'static,
    {
        let mut held = Arc::clone(&self.held).lock_owned().await;
        let task = tokio::spawn(async move {
            let written = write.await;
            if let Ok(value) = &written {
                *held = (!release).then(|| lease_of(value).clone());
            }
            written
        });
        task.await
            .map_err(|error| StoreError::Panicked(error.to_string()))?
    }
}

// Every call it does not change is the inner store's, the lease's length included.
impl StoreWrapper for LeaseKeeper {
    type Inner = BoxedStore;

    fn inner(&self) -> &BoxedStore {
        &self.inner
    }

    async fn create(&self, state: &RunState, owner: &str) -> Result<Lease, StoreError> {
        let (inner, state, owner) = (self.inner.clone(), state.clone(), owner.to_owned());
        self.write(
            async move { inner.create(&state, &owner).await },
            |lease| lease,
            false,
        )
        .await
    }

    /// A run whose lease a dead process of this program on this machine, in this pid
    /// namespace and boot, holds ([`holder_is_gone`]) is taken over at once, saying so on
    /// stderr; any other holder's lease refuses the claim as busy.
    async fn claim(&self, run_id: &str, owner: &str) -> Result<ClaimedRun, StoreError> {
        let holder = match self.claim_taking_over(run_id, owner, None).await {
            Err(StoreError::Busy { owner: holder, .. }) if holder_is_gone(&holder) => holder,
            claimed => return claimed,
        };
        // Refused as busy, naming the claim that replaced it, if another resume was first.
        let claimed = self
            .claim_taking_over(run_id, owner, Some(holder.clone()))
            .await?;
        errln!(
            "reins: took over run {run_id} from {holder}, which is no longer running",
            holder = reins::text::printable(&holder)
        );
        Ok(claimed)
    }

    async fn claim_from(
        &self,
        run_id: &str,
        owner: &str,
        holder: &str,
    ) -> Result<ClaimedRun, StoreError> {
        self.claim_taking_over(run_id, owner, Some(holder.to_owned()))
            .await
    }

    async fn checkpoint(
        &self,
        lease: &Lease,
        state: &RunState,
        journal: &[JournalEntry],
        release: bool,
    ) -> Result<Lease, StoreError> {
        // The copies are what a write of its own costs; a CLI run's state is small.
        let (inner, lease, state, journal) = (
            self.inner.clone(),
            lease.clone(),
            state.clone(),
            journal.to_vec(),
        );
        self.write(
            async move { inner.checkpoint(&lease, &state, &journal, release).await },
            |lease| lease,
            release,
        )
        .await
    }

    /// A renewal moves the lease on like any write (the inner store's may add a version).
    async fn renew(&self, lease: &Lease) -> Result<Lease, StoreError> {
        let (inner, lease) = (self.inner.clone(), lease.clone());
        self.write(
            async move { inner.renew(&lease).await },
            |lease| lease,
            false,
        )
        .await
    }
}
