//! When each run was last written, as every store lists it: set when the run is created,
//! moved by a checkpoint and by a claim, left alone by a lease renewal, and the same as the
//! latest checkpoint's time once a checkpoint follows.

use super::RunStateBuilder;
use super::per_store::per_store;
use reins::store::{RunQuery, RunStore, RunSummary};

/// Milliseconds since the Unix epoch, the stores' clock.
fn now_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    i64::try_from(since.as_millis()).unwrap()
}

/// Waits until the clock has passed `ms`, so the next write is stamped later than `ms`.
async fn after(ms: i64) {
    while now_ms() <= ms {
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
}

/// When `run_id` was last written, as both listings say it (they must agree).
async fn written_ms(store: &impl RunStore, run_id: &str) -> i64 {
    let page = store.list_runs(&RunQuery::new()).await.unwrap();
    assert!(page.unreadable.is_empty(), "{page:?}");
    let pick = |runs: &[RunSummary]| {
        runs.iter()
            .find(|run| run.run_id == run_id)
            .unwrap_or_else(|| panic!("{run_id} is not listed: {runs:?}"))
            .updated_at_ms
    };
    let paged = pick(&page.runs);
    assert_eq!(
        pick(&store.list().await.unwrap()),
        paged,
        "both listings agree"
    );
    paged
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
