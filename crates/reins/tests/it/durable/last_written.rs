//! When each run was last written, as every store lists it: set when the run is created,
//! moved by a checkpoint and by a claim, left alone by a lease renewal, and the same as the
//! latest checkpoint's time once a checkpoint follows.

use super::RunStateBuilder;
use super::listed::{after, listed, now_ms};
use super::per_store::per_store;
use reins::store::RunStore;

/// When `run_id` was last written, as both listings say it.
async fn written_ms(store: &impl RunStore, run_id: &str) -> i64 {
    listed(store, run_id, |run| run.updated_at_ms).await
}

/// The time of `run_id`'s latest checkpoint.
async fn latest_checkpoint_ms(store: &impl RunStore, run_id: &str) -> i64 {
    store
        .checkpoints(run_id)
        .await
        .unwrap()
        .last()
        .expect("every stored run has a checkpoint")
        .created_at_ms
}

async fn a_listing_says_when_each_run_was_last_written(store: impl RunStore) {
    let mut state = RunStateBuilder::suspended_example();
    state.run_id = "written".to_owned();
    let before = now_ms();
    let lease = store.create(&state, "worker-a").await.unwrap();
    let created = written_ms(&store, "written").await;
    assert!((before..=now_ms()).contains(&created), "{created}");
    assert_eq!(created, latest_checkpoint_ms(&store, "written").await);

    // A lease renewal writes no checkpoint: the run keeps its place.
    after(created).await;
    let lease = store.renew(&lease).await.unwrap();
    assert_eq!(written_ms(&store, "written").await, created);

    // A checkpoint moves it, to the checkpoint's own time.
    after(created).await;
    store.checkpoint(&lease, &state, &[], true).await.unwrap();
    let checkpointed = written_ms(&store, "written").await;
    assert!(checkpointed > created, "{checkpointed} after {created}");
    assert_eq!(checkpointed, latest_checkpoint_ms(&store, "written").await);

    // A worker claiming the run to resume it writes its record too.
    after(checkpointed).await;
    let before_claim = now_ms();
    store.claim("written", "worker-b").await.unwrap();
    let claimed = written_ms(&store, "written").await;
    assert!((before_claim..=now_ms()).contains(&claimed), "{claimed}");
}

per_store!(a_listing_says_when_each_run_was_last_written);
