//! A run's link to its store: taking a stored run (the claim, the finished-run refusal, and
//! the decisions a resumed run may apply: only those bound to their call as it stands), and
//! the journal and checkpoints a durable run writes as it goes.

use super::{Driver, Halt, final_answer};
use crate::agent::error::PromptError;
use crate::run::{RunState, RunStatus, ToolDecision};
use crate::store::{JournalEntry, Lease, RecordedDecision, SharedStore, StoreError};
use serde_json::Value;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};
use tokio::time::Instant;

/// A stored run claimed by this worker, with the decisions it may apply.
pub(super) struct Claimed {
    pub state: RunState,
    /// Decisions bound to their waiting calls, by internal call id.
    pub decisions: Vec<(String, ToolDecision)>,
    pub lease: Lease,
    /// When the claim was sent: its lease runs out `lease_duration` after that at the
    /// earliest.
    pub sent: Instant,
}

/// Claims a stored run for this worker. A run that had already finished is reported as
/// [`PromptError::AlreadyFinished`], with what it stored (a finished run no longer changes).
/// A recorded decision whose binding is not its call's as it stands is refused with
/// [`StoreError::StaleDecision`]: the claim is released unchanged and nothing runs.
pub(super) async fn claim(
    store: &SharedStore,
    run_id: &str,
    worker: &str,
) -> Result<Claimed, PromptError> {
    let store_error = |source, history| PromptError::Store {
        source,
        history,
        run_id: run_id.to_owned(),
    };
    let sent = Instant::now();
    let claimed = match store.claim(run_id, worker).await {
        Ok(claimed) => claimed,
        Err(StoreError::Finished { status, .. }) => {
            let state = store
                .load(run_id)
                .await
                .map_err(|source| store_error(source, Vec::new()))?;
            return Err(PromptError::AlreadyFinished {
                run_id: run_id.to_owned(),
                status,
                answer: (status == RunStatus::Completed).then(|| final_answer(&state.history)),
                history: state.history,
            });
        }
        Err(source) => return Err(store_error(source, Vec::new())),
    };
    match bound_decisions(&claimed.state, claimed.decisions) {
        Ok(decisions) => Ok(Claimed {
            state: claimed.state,
            decisions,
            lease: claimed.lease,
            sent,
        }),
        Err(stale) => {
            // Give the run back as it was: it waits for a decision about what it is now.
            let released = store
                .checkpoint(&claimed.lease, &claimed.state, &[], true)
                .await;
            let source = released.err().unwrap_or(stale);
            Err(store_error(source, claimed.state.history))
        }
    }
}

/// The recorded decisions about calls that wait for one, checked against their binding.
/// Decisions about calls that no longer wait are left out.
fn bound_decisions(
    state: &RunState,
    recorded: Vec<RecordedDecision>,
) -> Result<Vec<(String, ToolDecision)>, StoreError> {
    let mut decisions = Vec::new();
    for recorded in recorded {
        let id = &recorded.decision.internal_call_id;
        let Some(call) = state
            .pending_calls
            .iter()
            .find(|call| call.internal_call_id == *id && call.awaits_decision())
        else {
            continue;
        };
        if !recorded.binds(&state.run_id, call) {
            // A call that started cannot change any more: a decision that does not bind to it
            // was made before a start, which used it, not about the call as it stands.
            if call.starts > 0 {
                continue;
            }
            return Err(StoreError::StaleDecision {
                run_id: state.run_id.clone(),
                internal_call_id: id.clone(),
            });
        }
        decisions.push((id.clone(), recorded.decision.decision));
    }
    Ok(decisions)
}

/// A durable run's link to its store. Dropped with a lease still held (the run's future
/// dropped: a timeout, a `select!`, an aborted task, a panic), it gives the run back as last
/// stored, in a task of its own, so that any worker may resume it at once instead of when the
/// lease expires; a call the run had started and not finished then waits in doubt, as after a
/// crash.
pub(super) struct Durable {
    pub store: SharedStore,
    /// `None` until the run is created in the store, and once it is given back. Shared with
    /// the run's [`keep_leased`], and locked by each write for as long as it takes: a renewal
    /// never races a checkpoint that moves the lease on.
    pub lease: HeldLease,
    /// When the lease runs out at the earliest, by this process's clock: read by the
    /// renewals without the lease's lock, which a write that does not answer keeps.
    clock: Arc<LeaseClock>,
    /// Effects completed since the last checkpoint.
    pub journal: Vec<JournalEntry>,
    /// The task renewing the lease, stopped with the run.
    renewing: Option<tokio::task::AbortHandle>,
}

/// The lease a run holds, shared by its writes and its renewals.
pub(super) type HeldLease = Arc<AsyncMutex<Option<Lease>>>;

impl Durable {
    /// A run claimed under `lease`, by a claim sent at `sent`.
    pub(super) fn new(store: SharedStore, lease: Lease, sent: Instant) -> Self {
        let clock = LeaseClock::default();
        clock.extended(&lease.run_id, sent);
        Durable {
            store,
            clock: Arc::new(clock),
            lease: Arc::new(AsyncMutex::new(Some(lease))),
            journal: Vec::new(),
            renewing: None,
        }
    }

    /// A new run, created in the store by its first checkpoint.
    pub(super) fn unclaimed(store: SharedStore) -> Self {
        Durable {
            store,
            clock: Arc::default(),
            lease: Arc::default(),
            journal: Vec::new(),
            renewing: None,
        }
    }

    /// Gives the claimed run back as it was claimed (`state`), lease released, for a resume
    /// refused before it changed anything. Best effort, as [`give_back`].
    pub(super) async fn release_unchanged(&self, state: &RunState) {
        let Some(lease) = self.lease.lock().await.take() else {
            return;
        };
        if let Err(error) = self.store.checkpoint(&lease, state, &[], true).await {
            warn_kept(&state.run_id, &error);
        }
    }

    /// Renews the run's lease while the run goes on (see [`keep_leased`]), in a task of its
    /// own: a run whose caller pauses between polls (a stream read slowly) keeps its lease all
    /// the same. The task stops with this link; what is returned ends when it finds the lease
    /// lost.
    pub(super) fn renewal(&mut self) -> impl Future<Output = Halt> + Send + 'static {
        let task = tokio::spawn(keep_leased(
            Arc::clone(&self.store),
            Arc::clone(&self.lease),
            Arc::clone(&self.clock),
        ));
        self.renewing = Some(task.abort_handle());
        async move {
            match task.await {
                Ok(lost) => lost,
                // Stopped with the run: nothing to end.
                Err(_) => std::future::pending().await,
            }
        }
    }
}

impl Drop for Durable {
    fn drop(&mut self) {
        if let Some(renewing) = self.renewing.take() {
            renewing.abort();
        }
        // A run that ended gave its lease back with its last checkpoint.
        if self.lease.try_lock().is_ok_and(|held| held.is_none()) {
            return;
        }
        // Outside a runtime nothing can be written: the lease expires.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (store, lease) = (Arc::clone(&self.store), Arc::clone(&self.lease));
        runtime.spawn(async move {
            // A conflict: the caller gave it back first (a store of its own that keeps the
            // lease, as the CLI's does), or another worker holds it now. Either way there is
            // nothing to say.
            if let Err((run_id, error)) = give_back(&store, &lease).await
                && !matches!(error, StoreError::Conflict { .. })
            {
                warn_kept(&run_id, &error);
            }
        });
    }
}

/// Gives the run back as the store last recorded it, lease released, after any write that
/// holds the lease. Best effort: a store failing, or a lease another worker holds now (the
/// write is a compare-and-swap), leaves the lease to expire; the error says why, with the run.
async fn give_back(store: &SharedStore, lease: &HeldLease) -> Result<(), (String, StoreError)> {
    let Some(lease) = lease.lock().await.take() else {
        return Ok(());
    };
    let released = match release_stored(store, &lease).await {
        Err(conflict @ StoreError::Conflict { .. }) => {
            release_after_unseen_write(store, lease.clone(), conflict).await
        }
        other => other,
    };
    released.map_err(|error| (lease.run_id, error))
}

/// Writes the run as stored under `lease`, releasing it.
async fn release_stored(store: &SharedStore, lease: &Lease) -> Result<(), StoreError> {
    let stored = store.load(&lease.run_id).await?;
    store.checkpoint(lease, &stored, &[], true).await.map(drop)
}

/// The release again, for a conflict that may be this claim's own write: one whose future
/// was dropped (the run's was) or that failed to answer (a connection lost after the commit)
/// after the store took it, so the run is at a newer version than `lease` knows. Tried under
/// the newest checkpoint's version: the claim's token, which the write checks too, still
/// keeps out a lease another worker holds now.
async fn release_after_unseen_write(
    store: &SharedStore,
    mut lease: Lease,
    conflict: StoreError,
) -> Result<(), StoreError> {
    let newest = store
        .checkpoints(&lease.run_id)
        .await?
        .iter()
        .map(|checkpoint| checkpoint.version)
        .max();
    match newest {
        Some(version) if version > lease.version => {
            lease.version = version;
            release_stored(store, &lease).await
        }
        _ => Err(conflict),
    }
}

fn warn_kept(run_id: &str, error: &StoreError) {
    tracing::warn!(
        target: "reins",
        run_id = %run_id,
        %error,
        "the run's lease could not be given back; it is free again when it expires"
    );
}

/// The shortest time between two renewals of a lease, however short the lease.
const MIN_RENEWAL_PERIOD: Duration = Duration::from_millis(10);

/// When a run's lease runs out at the earliest by this process's clock: `lease_duration`
/// after the last write that extended it (the claim, the create, a checkpoint, a renewal) was
/// sent. The store stamps the new end when it takes the write, later, so the store's end is
/// never earlier than this one: a worker that stops here stops before another can claim.
#[derive(Default)]
pub(super) struct LeaseClock(Mutex<Option<(String, Instant)>>);

impl LeaseClock {
    /// Records that a write sent at `sent` extended the lease on `run_id`.
    fn extended(&self, run_id: &str, sent: Instant) {
        let mut last = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match &mut *last {
            Some((_, last)) => *last = (*last).max(sent),
            None => *last = Some((run_id.to_owned(), sent)),
        }
    }

    /// When the lease runs out at the earliest; `None` before the run holds one.
    fn runs_out(&self, lease_duration: Duration) -> Option<Instant> {
        let last = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        last.as_ref().map(|(_, sent)| *sent + lease_duration)
    }

    /// The error of a lease that ran out unrenewed.
    fn lapsed(&self) -> Halt {
        let last = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let run_id = last.as_ref().map(|(run_id, _)| run_id.clone());
        Halt::Store(StoreError::LeaseLapsed {
            run_id: run_id.unwrap_or_default(),
        })
    }
}

/// Renews `lease` every third of the store's lease duration, so a step that takes longer than
/// the lease (a slow tool, a person answering an approval) keeps the run from being claimed by
/// another worker while this one still advances it. Ends only when the lease is found lost
/// (another worker claimed the run after this one could not renew in time), or once it ran
/// out by `clock` with no renewal confirmed (every renewal failed, or none answered: a store
/// out of reach, which may still be in reach of other workers): the run then stops where it
/// is, as if its process had died, since another worker may run it now. A store that fails a
/// renewal otherwise is tried again at the next one.
async fn keep_leased(store: SharedStore, lease: HeldLease, clock: Arc<LeaseClock>) -> Halt {
    let duration = store.lease_duration();
    let period = (duration / 3).max(MIN_RENEWAL_PERIOD);
    loop {
        let next = Instant::now() + period;
        let wake = clock.runs_out(duration).map_or(next, |end| end.min(next));
        tokio::time::sleep_until(wake).await;
        // Read again after each wait: a checkpoint may have extended the lease meanwhile.
        let mut held = match before(clock.runs_out(duration), lease.lock()).await {
            Some(held) => held,
            // A write that holds the lease's lock has not answered in time.
            None => return clock.lapsed(),
        };
        let Some(current) = held.as_ref() else {
            continue;
        };
        let sent = Instant::now();
        match before(clock.runs_out(duration), store.renew(current)).await {
            None => return clock.lapsed(),
            Some(Ok(renewed)) => {
                clock.extended(&renewed.run_id, sent);
                *held = Some(renewed);
            }
            Some(Err(lost @ StoreError::Conflict { .. })) => return Halt::Store(lost),
            Some(Err(error)) => tracing::warn!(
                target: "reins",
                run_id = %current.run_id,
                %error,
                "the run's lease could not be renewed; trying again until it runs out"
            ),
        }
    }
}

/// `work`'s output if it comes before `end` (no end: whenever it comes), else `None`; also
/// `None` for an output that comes once `end` has passed (a timeout polls its work first).
async fn before<T>(end: Option<Instant>, work: impl Future<Output = T>) -> Option<T> {
    let Some(end) = end else {
        return Some(work.await);
    };
    let output = tokio::time::timeout_at(end, work).await.ok()?;
    (Instant::now() < end).then_some(output)
}

impl Driver<'_> {
    /// Journals an effect, to be written with the next checkpoint.
    pub(super) fn journal(&mut self, effect_id: String, kind: &str, payload: Value) {
        if let Some(durable) = &mut self.durable {
            durable.journal.push(JournalEntry {
                effect_id,
                kind: kind.to_owned(),
                payload,
            });
        }
    }

    /// Writes the run's state and the effects journaled since the last checkpoint, in one
    /// transaction (a no-op for a run without a store).
    pub(super) async fn checkpoint(&mut self, release: bool) -> Result<(), Halt> {
        let Some(durable) = &mut self.durable else {
            return Ok(());
        };
        self.state.entries = self.ctx.snapshot_entries();
        let mut held = Arc::clone(&durable.lease).lock_owned().await;
        let Some(lease) = &*held else {
            let clock = Arc::clone(&durable.clock);
            let created = create(
                &durable.store,
                held,
                clock,
                &self.state,
                &self.worker,
                release,
            );
            created.await.map_err(Halt::Store)?;
            durable.journal.clear();
            return Ok(());
        };
        let sent = Instant::now();
        let lease = durable
            .store
            .checkpoint(lease, &self.state, &durable.journal, release)
            .await
            .map_err(Halt::Store)?;
        if !release {
            durable.clock.extended(&lease.run_id, sent);
        }
        // Released, it is no longer the run's to give back.
        *held = (!release).then_some(lease);
        durable.journal.clear();
        Ok(())
    }

    /// Gives the run back as the store last recorded it, lease released, after the store
    /// failed to take a write: what was not stored did not happen as far as any worker knows,
    /// so the run resumes from its last checkpoint, as after a crash, without waiting for the
    /// lease to expire. Best effort: a store still failing (or a lease another worker holds
    /// now; the write is a compare-and-swap) leaves the lease to expire.
    pub(super) async fn release_as_stored(&mut self) {
        let Some(durable) = &mut self.durable else {
            return;
        };
        durable.journal.clear();
        if let Err((run_id, error)) = give_back(&durable.store, &durable.lease).await {
            warn_kept(&run_id, &error);
        }
    }

    /// Lets go of a lease another worker holds now (the run's write found it taken): nothing
    /// is written, and nothing is given back when the run's link is dropped.
    pub(super) async fn forget_lease(&mut self) {
        if let Some(durable) = &self.durable {
            durable.lease.lock().await.take();
        }
    }
}

/// The run's first write, which creates it in the store under a new claim (`held`, locked
/// and empty), in a task of its own: a run dropped while the write is in flight does not drop
/// the write, whose lease only its answer holds (the claim's token is the store's to choose).
/// The write finishes and keeps its lease in `held` before the lock is let go, so the give-back
/// of the run's drop, which waits for the lock, releases it at once under that lease: never
/// one another claim holds.
async fn create(
    store: &SharedStore,
    mut held: OwnedMutexGuard<Option<Lease>>,
    clock: Arc<LeaseClock>,
    state: &RunState,
    worker: &str,
    release: bool,
) -> Result<(), StoreError> {
    // A copy of the state for the task: this first write's is the run's prompt, before any
    // turn.
    let (store, state, worker) = (Arc::clone(store), state.clone(), worker.to_owned());
    let write = tokio::spawn(async move {
        let sent = Instant::now();
        let lease = store.create(&state, &worker).await?;
        clock.extended(&lease.run_id, sent);
        // Released, it is no longer the run's to give back.
        *held = (!release).then_some(lease);
        Ok(())
    });
    // The store's panics are caught as errors already (`DynRunStore`): a failed join is the
    // runtime shutting down under the write.
    write.await.unwrap_or_else(|_| {
        Err(StoreError::Backend(
            "the run's first write was stopped: its runtime is shutting down".to_owned(),
        ))
    })
}

/// Runs `drive` while `renewal` keeps the run's lease; a lost lease ends the run where it is.
pub(super) async fn while_leased<T>(
    drive: impl Future<Output = Result<T, Halt>>,
    renewal: impl Future<Output = Halt>,
) -> Result<T, Halt> {
    tokio::select! {
        biased;
        outcome = drive => outcome,
        lost = renewal => Err(lost),
    }
}
