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
//!
//! A write that does not answer (a PostgreSQL server gone silent, a SQLite file another process
//! keeps locked) keeps the keeper's lock, so the release waits for the store only so long
//! ([`LeaseKeeper::give_up_at`]): until the lease would have run out anyway, or a few seconds,
//! whichever comes first. It then leaves the lease to expire, and says when
//! ([`ReleaseError::NoAnswer`]), so a stopped `reins` exits instead of waiting for ever.

use reins::agent::RunState;
use reins::store::{
    BoxedStore, ClaimedRun, Decision, JournalEntry, Lease, RunStore, StoreError, StoreWrapper,
};
use std::future::Future;
use std::sync::{Arc, PoisonError};
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

mod holder;

pub use holder::{holder_is_gone, parse_worker_name, worker_name};

/// A store that remembers the lease of the run written through it. Clones share it.
#[derive(Clone)]
pub struct LeaseKeeper {
    inner: BoxedStore,
    /// The lease the run holds now; `None` before it is created or claimed and once its last
    /// checkpoint released it. Locked by every write for as long as the write takes.
    held: Arc<Mutex<Option<Lease>>>,
    /// When the last write that extended the lease was sent, by this process's clock and in
    /// milliseconds since the Unix epoch: the lease runs out a lease's length after, at the
    /// earliest (the store stamps its end when it takes the write, later). Read without the
    /// lock, which a write that does not answer keeps.
    extended: Arc<std::sync::Mutex<Option<(Instant, i64)>>>,
}

/// How long giving a lease back waits at most for the store, however long the lease: a
/// person who pressed Ctrl-C waits that long at most.
const RELEASE_PATIENCE: Duration = Duration::from_secs(5);

/// Why [`LeaseKeeper::release`] did not give the lease back.
#[derive(Debug)]
pub enum ReleaseError {
    /// The store refused or failed the write.
    Store(StoreError),
    /// The store did not answer in time ([`LeaseKeeper::give_up_at`]): the lease was left to
    /// expire, at `expires_at_ms` (milliseconds since the Unix epoch) at the earliest; `None`
    /// when no lease was known to be held yet (the write creating or claiming the run has not
    /// answered).
    NoAnswer {
        /// When the lease runs out at the earliest.
        expires_at_ms: Option<i64>,
    },
}

impl LeaseKeeper {
    /// Keeps the leases taken in `inner`.
    pub fn new(inner: BoxedStore) -> Self {
        LeaseKeeper {
            inner,
            held: Arc::new(Mutex::new(None)),
            extended: Arc::default(),
        }
    }

    /// When waiting for the store to give the lease back stops: when the lease runs out by
    /// this process's clock (from then on another worker may hold the run, and this one stops
    /// it as the core's `LeaseLapsed` does), or [`RELEASE_PATIENCE`] from now if that is
    /// sooner.
    pub fn give_up_at(&self) -> Instant {
        let patience = Instant::now() + RELEASE_PATIENCE;
        match self.runs_out() {
            Some((end, _)) => end.min(patience),
            None => patience,
        }
    }

    /// `work`'s output, or `None` once [`LeaseKeeper::give_up_at`] (as of now) has come.
    pub async fn within_patience<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        tokio::time::timeout_at(self.give_up_at(), work).await.ok()
    }

    /// When the lease runs out at the earliest, by this process's clock and in milliseconds
    /// since the Unix epoch; `None` before a write extended it.
    fn runs_out(&self) -> Option<(Instant, i64)> {
        let extended = *self.extended.lock().unwrap_or_else(PoisonError::into_inner);
        let duration = self.inner.lease_duration();
        let duration_ms = i64::try_from(duration.as_millis()).unwrap_or(i64::MAX);
        extended.map(|(sent, sent_ms)| (sent + duration, sent_ms.saturating_add(duration_ms)))
    }

    /// Gives the run's lease back, after the write in flight (if any) has finished: the run's
    /// state is written again as the store holds it (nothing the run recorded is lost, nothing
    /// it did not record is added), released, so any process may resume it right away.
    /// Returns whether a lease was held.
    ///
    /// Waits for the store until [`LeaseKeeper::give_up_at`] at most, then leaves the lease to
    /// expire ([`ReleaseError::NoAnswer`]).
    pub async fn release(&self) -> Result<bool, ReleaseError> {
        match self.within_patience(self.release_now()).await {
            Some(released) => released.map_err(ReleaseError::Store),
            None => Err(ReleaseError::NoAnswer {
                expires_at_ms: self.runs_out().map(|(_, end_ms)| end_ms),
            }),
        }
    }

    /// [`LeaseKeeper::release`], however long the store takes.
    async fn release_now(&self) -> Result<bool, StoreError> {
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
        let extended = Arc::clone(&self.extended);
        let task = tokio::spawn(async move {
            let sent = (Instant::now(), unix_ms());
            let written = write.await;
            if let Ok(value) = &written {
                *held = (!release).then(|| lease_of(value).clone());
                if !release {
                    let mut last = extended.lock().unwrap_or_else(PoisonError::into_inner);
                    *last = Some(last.map_or(sent, |last| last.max(sent)));
                }
            }
            written
        });
        task.await
            .map_err(|error| StoreError::Panicked(error.to_string()))?
    }
}

/// Milliseconds since the Unix epoch, by this process's clock.
fn unix_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
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

#[cfg(test)]
mod tests;
