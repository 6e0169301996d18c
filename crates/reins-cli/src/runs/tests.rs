//! The runs listing's unit tests: token sums, and the order of `listed_runs` without a store
//! query per run.

use super::{listed_runs, tokens};
use crate::test_runs::next_millisecond;
use reins::completion::Usage;
use reins::store::{BoxedStore, Checkpoint, MemoryStore, RunStore, StoreError, StoreWrapper};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A [`MemoryStore`] that counts the reads of a run's checkpoints.
#[derive(Clone, Default)]
struct CheckpointReads {
    inner: MemoryStore,
    reads: Arc<AtomicUsize>,
}

impl StoreWrapper for CheckpointReads {
    type Inner = MemoryStore;

    fn inner(&self) -> &MemoryStore {
        &self.inner
    }

    async fn checkpoints(&self, run_id: &str) -> Result<Vec<Checkpoint>, StoreError> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.inner.checkpoints(run_id).await
    }
}

/// A new run `run_id`, stored with its lease given back.
async fn stored(store: &CheckpointReads, run_id: &str) {
    crate::test_runs::stored(&store.inner, run_id, reins::agent::RunStatus::Running).await;
}

#[tokio::test]
async fn runs_are_listed_the_last_written_last_without_reading_their_checkpoints() {
    let store = CheckpointReads::default();
    for run_id in ["c", "a", "b"] {
        stored(&store, run_id).await;
        next_millisecond().await;
    }
    // "c" is written again: it is now the last written.
    let claimed = store.inner.claim("c", "test").await.expect("claimed");
    let state = claimed.state.clone();
    store
        .inner
        .checkpoint(&claimed.lease, &state, &[], true)
        .await
        .expect("checkpointed");

    let listed = listed_runs(&BoxedStore::new(store.clone()))
        .await
        .expect("listed");
    let order: Vec<_> = listed
        .iter()
        .map(|run| run.as_ref().map(|run| run.state.run_id.as_str()).ok())
        .collect();
    assert_eq!(order, [Some("a"), Some("b"), Some("c")]);
    // The order comes with the listing itself: no store query per run for it.
    assert_eq!(store.reads.load(Ordering::Relaxed), 0);
}

#[test]
fn token_sums_saturate_rather_than_overflow() {
    assert_eq!(tokens(&Usage::new(3, 4)), 7);
    assert_eq!(tokens(&Usage::new(u64::MAX, 5)), u64::MAX);
    assert_eq!(tokens(&Usage::new(u64::MAX - 1, u64::MAX)), u64::MAX);
}
