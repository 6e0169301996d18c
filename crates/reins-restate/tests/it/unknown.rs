//! A run id the server has no invocation for is an error of its own, not an empty progress
//! that reads like a run just starting.

use crate::harness::Cluster;
use reins_restate::ClientError;

#[tokio::test(flavor = "multi_thread")]
async fn the_status_of_an_unknown_run_is_an_error_and_a_started_one_is_known_at_once() {
    let mut cluster = Cluster::start("unknown").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();

    match runs.status("nope").await {
        Err(ClientError::UnknownRun { run_id }) => assert_eq!(run_id, "nope"),
        other => panic!("expected UnknownRun, got {other:?}"),
    }
    // Read right after `start` returns, before the run may have journaled anything.
    runs.start("known", "quick").await.expect("the run starts");
    let progress = runs.status("known").await.expect("a started run is known");
    assert!(progress.pending.is_empty(), "{progress:?}");
    runs.output("known").await.expect("the run finishes");
    let finished = runs.status("known").await.expect("a finished run is known");
    assert_eq!(finished.steps.len(), 3, "{finished:?}");
}
