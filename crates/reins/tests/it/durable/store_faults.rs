//! A store's faults. One whose own code panics fails the run with `StoreError::Panicked`: the
//! panic never unwinds into the task awaiting the run, whether it comes while the store's
//! method runs before returning its future or while that future is polled. One that fails a
//! write (a lost connection) ends the run with the store's error, but does not record it as
//! failed: the run is given back as last stored, and resumes at once. So is a run dropped
//! while the store was taking a write that it took.

use super::{Seen, agent, script};
use crate::common::echo_tool;
use reins::agent::*;
use reins::store::{
    BoxedStore, Checkpoint, ClaimedRun, Decision, DecisionWatch, JournalEntry, Lease, MemoryStore,
    PendingApprovals, RecordedDecision, RunPage, RunQuery, RunStore, RunSummary, StoreError,
};
use reins::testing::{ScriptedModel, Turn};
use serde_json::json;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Where the store goes wrong.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    /// It panics in `create`, before returning its future.
    PanicInCreateCall,
    /// It panics while `checkpoint`'s future is polled.
    PanicInCheckpointPoll,
    /// Its checkpoint with this number (counted from 1) fails with a backend error, once.
    FailCheckpoint(usize),
    /// It fails every renewal of a lease until a run is claimed (so the lease lapses, and
    /// another worker takes the run); then it renews as its inner store does.
    FailRenewalsUntilAClaim,
    /// Its checkpoint with this number is written, then its future never answers (a write
    /// taken by the database whose caller is dropped before it hears so).
    HangAfterCheckpoint(usize),
    /// None: it only leaves out the renewal of a lease, which the trait then does for it.
    None,
}

/// A [`MemoryStore`] with one fault.
#[derive(Clone)]
struct FaultyStore {
    inner: MemoryStore,
    fault: Fault,
    checkpoints: Arc<AtomicUsize>,
    claims: Arc<AtomicUsize>,
    /// Told when a checkpoint hangs.
    hung: Arc<Notify>,
}

impl FaultyStore {
    fn new(fault: Fault) -> Self {
        FaultyStore::over(MemoryStore::new(), fault)
    }

    fn over(inner: MemoryStore, fault: Fault) -> Self {
        FaultyStore {
            inner,
            fault,
            checkpoints: Arc::default(),
            claims: Arc::default(),
            hung: Arc::default(),
        }
    }
}

impl RunStore for FaultyStore {
    // A plain `fn`: its body runs when it is called, before any poll.
    #[allow(clippy::manual_async_fn)]
    fn create(
        &self,
        state: &RunState,
        owner: &str,
    ) -> impl Future<Output = Result<Lease, StoreError>> + Send {
        assert_ne!(self.fault, Fault::PanicInCreateCall, "store bug in create");
        self.inner.create(state, owner)
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
    async fn load(&self, run_id: &str) -> Result<RunState, StoreError> {
        self.inner.load(run_id).await
    }
    async fn journal(&self, run_id: &str) -> Result<Vec<JournalEntry>, StoreError> {
        self.inner.journal(run_id).await
    }
    async fn decide(
        &self,
        run_id: &str,
        decision: &Decision,
    ) -> Result<RecordedDecision, StoreError> {
        self.inner.decide(run_id, decision).await
    }
    async fn decisions(&self, run_id: &str) -> Result<Vec<RecordedDecision>, StoreError> {
        self.inner.decisions(run_id).await
    }
    async fn checkpoints(&self, run_id: &str) -> Result<Vec<Checkpoint>, StoreError> {
        self.inner.checkpoints(run_id).await
    }
    async fn load_checkpoint(&self, run_id: &str, version: i64) -> Result<RunState, StoreError> {
        self.inner.load_checkpoint(run_id, version).await
    }
    async fn list(&self) -> Result<Vec<RunSummary>, StoreError> {
        self.inner.list().await
    }
    async fn list_runs(&self, query: &RunQuery) -> Result<RunPage, StoreError> {
        self.inner.list_runs(query).await
    }
    async fn delete(&self, run_id: &str) -> Result<(), StoreError> {
        self.inner.delete(run_id).await
    }
    async fn expire(&self, older_than: Duration) -> Result<u64, StoreError> {
        self.inner.expire(older_than).await
    }
    async fn watch_decisions(&self) -> Result<DecisionWatch, StoreError> {
        self.inner.watch_decisions().await
    }
    async fn pending_approvals(&self) -> Result<PendingApprovals, StoreError> {
        self.inner.pending_approvals().await
    }
    fn lease_duration(&self) -> Duration {
        self.inner.lease_duration()
    }
    async fn renew(&self, lease: &Lease) -> Result<Lease, StoreError> {
        match self.fault {
            Fault::FailRenewalsUntilAClaim if self.claims.load(Ordering::SeqCst) == 0 => Err(
                StoreError::Backend("the database is unreachable".to_owned()),
            ),
            Fault::FailRenewalsUntilAClaim => self.inner.renew(lease).await,
            // The trait's own renewal, which writes the stored state again.
            _ => {
                let stored = self.load(&lease.run_id).await?;
                self.checkpoint(lease, &stored, &[], false).await
            }
        }
    }
}

#[tokio::test]
async fn a_store_panicking_in_its_call_or_its_future_fails_the_run_with_a_store_error() {
    let mut stored = Vec::new();
    for (at, message) in [
        (Fault::PanicInCreateCall, "store bug in create"),
        (Fault::PanicInCheckpointPoll, "store bug in checkpoint"),
    ] {
        let log = Arc::new(Mutex::new(Vec::new()));
        let store = FaultyStore::new(at);
        // Awaited in a task of its own: a panic escaping the run would end the task.
        let run = agent(script(), log.clone(), Seen::default())
            .prompt("pay the bill")
            .run_id("panicky")
            .durable(store.clone());
        let ended = tokio::spawn(run.into_future()).await;
        let Ok(Err(PromptError::Store { source, run_id, .. })) = ended else {
            panic!("{at:?}: expected a store error, got {ended:?}");
        };
        assert_eq!(run_id, "panicky");
        let StoreError::Panicked(said) = &source else {
            panic!("{at:?}: expected `Panicked`, got {source:?}");
        };
        assert!(said.contains(message), "{at:?}: {said}");
        assert!(
            source.to_string().starts_with("the run store panicked"),
            "{source}"
        );
        // No tool ran past a state the store failed to write.
        assert!(log.lock().unwrap().is_empty(), "{at:?}: {log:?}");
        stored.extend(store.inner.load("panicky").await.ok());
    }
    // The run was created before the checkpoint that panicked.
    let [state] = &stored[..] else {
        panic!("one run was stored: {stored:?}")
    };

    // A boxed store answers the same for a direct call.
    let boxed = BoxedStore::new(FaultyStore::new(Fault::PanicInCreateCall));
    let created = boxed.create(state, "worker").await;
    assert!(
        matches!(&created, Err(StoreError::Panicked(said)) if said.contains("store bug")),
        "{created:?}"
    );
}

/// An agent whose model looks the balance up (`lookup`, logging its text to `log`), then
/// answers.
fn balance_agent(log: &Arc<Mutex<Vec<String>>>) -> Agent {
    let model = ScriptedModel::resumable([
        Turn::tool_call("lookup", json!({"text": "balance"})),
        Turn::text("The balance is fine."),
    ]);
    AgentBuilder::new(model)
        .tool(echo_tool("lookup", log.clone()))
        .build()
}

/// A write the store fails (here the checkpoint of the tool call's start, so the tool never
/// ran) ends the run with the store's error; the run is not recorded as failed, which would
/// be final, but given back as last stored, lease released: it resumes at once and the tool
/// runs once.
#[tokio::test]
async fn a_write_the_store_failed_leaves_the_run_to_resume_at_once() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let agent = balance_agent(&log);
    // The first checkpoint records the model's turn, the second the call's start.
    let store = FaultyStore::new(Fault::FailCheckpoint(2));
    let ended = agent
        .prompt("check the balance")
        .run_id("flaky")
        .durable(store.clone())
        .await;
    let Err(PromptError::Store { source, .. }) = &ended else {
        panic!("expected the store's error, got {ended:?}");
    };
    assert!(matches!(source, StoreError::Backend(_)), "{source:?}");
    assert!(
        log.lock().unwrap().is_empty(),
        "the call's start was not stored"
    );
    let stored = store.load("flaky").await.unwrap();
    assert_eq!(stored.status, RunStatus::Running, "not failed for good");

    let answer = agent.resume_stored(store.clone(), "flaky").await.unwrap();
    assert_eq!(answer, "The balance is fine.");
    assert_eq!(*log.lock().unwrap(), vec!["balance"]);
}

/// A run dropped while its store was taking a write (here the call's start) that the store
/// took: the run is a version past the lease it knows, and is given back all the same, at
/// once, rather than when the lease expires; the call it started waits in doubt.
#[tokio::test]
async fn a_run_dropped_during_a_write_the_store_took_is_free_at_once() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let agent = balance_agent(&log);
    // The first checkpoint records the model's turn, the second the call's start.
    let store = FaultyStore::new(Fault::HangAfterCheckpoint(2));
    let run = agent
        .prompt("check the balance")
        .run_id("cut-off")
        .durable(store.clone());
    let task = tokio::spawn(run.into_future());
    store.hung.notified().await;
    task.abort();
    let _ = task.await;

    // Far longer than the release takes, far shorter than the lease (five minutes).
    let asked = Instant::now();
    let resumed = loop {
        match agent.resume_stored(store.clone(), "cut-off").await {
            Err(PromptError::Store {
                source: StoreError::Busy { .. },
                ..
            }) if asked.elapsed() < Duration::from_secs(30) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            other => break other,
        }
    };
    let Err(PromptError::Suspended { run }) = resumed else {
        panic!("expected the started call to wait in doubt, got {resumed:?}");
    };
    let pending = &run.state.pending_calls;
    assert!(pending.len() == 1 && pending[0].in_doubt, "{pending:?}");
    assert!(log.lock().unwrap().is_empty(), "the tool never ran");
}

/// A store that does not renew leases itself gets the trait's renewal, which writes the
/// stored state again: a step longer than the lease keeps the run all the same.
#[tokio::test]
async fn a_store_without_a_renewal_of_its_own_keeps_a_slow_steps_lease() {
    let inner = MemoryStore::new().with_lease(super::renewal::LEASE);
    let store = FaultyStore::over(inner, Fault::None);
    super::renewal::a_slow_step_keeps_the_run(store.clone()).await;
    assert!(
        store.checkpoints.load(Ordering::SeqCst) > 6,
        "the renewals were written as checkpoints"
    );
}

/// A run whose lease lapsed (its store could not renew it) and was claimed by another worker
/// stops at its next renewal, its tool call dropped, rather than going on beside the new
/// owner until it next writes (here: never, the tool does not finish).
#[tokio::test]
async fn a_run_that_lost_its_lease_stops_where_it_is() {
    let lease = super::renewal::LEASE;
    let store = FaultyStore::over(
        MemoryStore::new().with_lease(lease),
        Fault::FailRenewalsUntilAClaim,
    );
    let started = Arc::new(tokio::sync::Notify::new());
    let agent = super::renewal::slow_agent(None, started.clone(), Arc::default());
    let run = agent.prompt("go").run_id("lapsed").durable(store.clone());
    let run = tokio::spawn(run.into_future());
    started.notified().await;
    let claimed = loop {
        match store.claim("lapsed", "other").await {
            Ok(claimed) => break claimed,
            Err(StoreError::Busy { .. }) => tokio::time::sleep(lease / 4).await,
            Err(error) => panic!("{error:?}"),
        }
    };
    // Bounded only so that a run that never stops fails the test instead of hanging it.
    let ended = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the run stops once its lease is found lost")
        .unwrap();
    let Err(PromptError::Store { source, .. }) = &ended else {
        panic!("expected the lost lease, got {ended:?}");
    };
    assert!(matches!(source, StoreError::Conflict { .. }), "{source:?}");
    // The new owner's claim is untouched: it checkpoints with its lease.
    store
        .checkpoint(&claimed.lease, &claimed.state, &[], true)
        .await
        .expect("the new owner still holds the run");
}
