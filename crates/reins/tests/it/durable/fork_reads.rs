//! Forking from a store of one's own, written before `RunStore::checkpoint_with_journal`
//! existed and without snapshots: the trait's default reads the checkpoint and the journal
//! through three calls, and a run deleted between them fails the fork as not found instead
//! of forking the checkpoint without its journal.

use super::RunStateBuilder;
use reins::agent::{RunState, RunStatus};
use reins::store::{
    Checkpoint, ClaimedRun, Decision, DecisionWatch, JournalEntry, Lease, MemoryStore,
    PendingApprovals, RecordedDecision, RunPage, RunQuery, RunStore, RunSummary, StoreError, fork,
};
use serde_json::json;
use std::sync::Mutex;
use std::time::Duration;

/// A store of one's own over a memory store, implementing every method `RunStore` requires
/// and no other: when asked for the journal of `delete_on_journal`, another process deletes
/// that run first; the first `short_journals` journals it reads miss their last entry, as a
/// store writing a checkpoint and its journal entries apart (or deleting a run table by
/// table) would read them between its two writes.
struct OwnStore {
    inner: MemoryStore,
    delete_on_journal: Mutex<Option<String>>,
    short_journals: Mutex<usize>,
}

impl OwnStore {
    fn new(delete_on_journal: Option<&str>, short_journals: usize) -> Self {
        OwnStore {
            inner: MemoryStore::new(),
            delete_on_journal: Mutex::new(delete_on_journal.map(str::to_owned)),
            short_journals: Mutex::new(short_journals),
        }
    }
}

impl RunStore for OwnStore {
    async fn create(&self, state: &RunState, owner: &str) -> Result<Lease, StoreError> {
        self.inner.create(state, owner).await
    }
    async fn claim(&self, run_id: &str, owner: &str) -> Result<ClaimedRun, StoreError> {
        self.inner.claim(run_id, owner).await
    }
    async fn checkpoint(
        &self,
        lease: &Lease,
        state: &RunState,
        journal: &[JournalEntry],
        release: bool,
    ) -> Result<Lease, StoreError> {
        self.inner.checkpoint(lease, state, journal, release).await
    }
    async fn load(&self, run_id: &str) -> Result<RunState, StoreError> {
        self.inner.load(run_id).await
    }
    async fn journal(&self, run_id: &str) -> Result<Vec<JournalEntry>, StoreError> {
        let deleted = self.delete_on_journal.lock().unwrap().take();
        if let Some(deleted) = deleted {
            self.inner.delete(&deleted).await?;
        }
        let mut journal = self.inner.journal(run_id).await?;
        let mut short = self.short_journals.lock().unwrap();
        if *short > 0 {
            *short -= 1;
            journal.pop();
        }
        Ok(journal)
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
}

/// A completed run `parent` written three times, journaling one model turn with each of its
/// two later writes: checkpoint 2 counts one journal entry.
async fn completed_parent(store: &OwnStore) {
    let mut state = RunStateBuilder::suspended_example();
    state.run_id = "parent".to_owned();
    let lease = store.create(&state, "worker").await.unwrap();
    let turn = |n: u32| JournalEntry {
        effect_id: format!("parent/t{n}"),
        kind: "model_turn".to_owned(),
        payload: json!({ "turn": n }),
    };
    let lease = store
        .checkpoint(&lease, &state, &[turn(1)], false)
        .await
        .unwrap();
    state.status = RunStatus::Completed;
    store
        .checkpoint(&lease, &state, &[turn(2)], true)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_fork_from_a_store_of_ones_own_keeps_the_journal_up_to_its_checkpoint() {
    let store = OwnStore::new(None, 0);
    completed_parent(&store).await;
    fork(&store, "parent", 2, "forked", |_| {}).await.unwrap();
    let journal = store.journal("forked").await.unwrap();
    let effects: Vec<&str> = journal.iter().map(|e| e.effect_id.as_str()).collect();
    assert_eq!(effects, ["parent/t1", "forked/fork"]);
}

#[tokio::test]
async fn a_run_deleted_while_a_fork_reads_it_is_not_forked_without_its_journal() {
    let store = OwnStore::new(Some("parent"), 0);
    completed_parent(&store).await;
    let error = fork(&store, "parent", 2, "forked", |_| {})
        .await
        .unwrap_err();
    assert_eq!(error, StoreError::NotFound("parent".to_owned()));
    assert_eq!(
        store.load("forked").await.unwrap_err(),
        StoreError::NotFound("forked".to_owned()),
        "no fork was stored"
    );
}

#[tokio::test]
async fn a_journal_read_short_while_the_run_is_written_is_read_again() {
    // Checkpoint 3 counts both model turns. Read once between a write of the checkpoint and one of its journal entries: the
    // next read finds them, and the fork has them.
    let store = OwnStore::new(None, 1);
    completed_parent(&store).await;
    fork(&store, "parent", 3, "forked", |_| {}).await.unwrap();
    let journal = store.journal("forked").await.unwrap();
    let effects: Vec<&str> = journal.iter().map(|e| e.effect_id.as_str()).collect();
    assert_eq!(effects, ["parent/t1", "parent/t2", "forked/fork"]);

    // A journal short every time is the store's fault, and said so.
    let store = OwnStore::new(None, usize::MAX);
    completed_parent(&store).await;
    let error = fork(&store, "parent", 3, "forked", |_| {})
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Corrupt { .. }), "{error:?}");
}
