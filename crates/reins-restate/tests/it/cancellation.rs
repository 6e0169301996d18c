//! A run whose invocation is cancelled through Restate ends: whether it was working (the
//! cancellation reaches the step it awaited, which must not be read as that step's failure,
//! or the run would go on) or waiting for a decision (the call is no longer listed as waiting,
//! and a decision about it is refused rather than taken and lost).

use crate::harness::{Cluster, wait_for};
use reins_restate::{ClientError, RestateRuns, RunFailure, RunProgress};

/// The run's progress once it ended cancelled.
async fn cancelled(runs: &RestateRuns, run: &str) -> RunProgress {
    wait_for("the run to end cancelled", || async {
        let progress = runs.status(run).await.ok()?;
        (progress.failure == Some(RunFailure::Cancelled)).then_some(progress)
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_cancelled_while_it_waits_for_a_decision_ends_and_refuses_one() {
    let mut cluster = Cluster::start("cancel-waiting").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    runs.start("waits-1", "approve")
        .await
        .expect("the run starts");
    let waiting = wait_for("the run to suspend for a decision", || async {
        runs.status("waits-1")
            .await
            .ok()?
            .pending
            .into_iter()
            .next()
    })
    .await;

    cluster.cancel("waits-1").await;
    let progress = cancelled(&runs, "waits-1").await;
    assert!(progress.pending.is_empty(), "{progress:?}");
    match runs.approve("waits-1", &waiting.call).await {
        Err(ClientError::Http { status, body }) => {
            assert_eq!(status, 409, "{body}");
            assert!(body.contains("has ended"), "{body}");
        }
        other => panic!("expected the decision to be refused, got {other:?}"),
    }
    assert!(runs.output("waits-1").await.is_err());
    assert!(cluster.effects().is_empty(), "nothing was transferred");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_cancelled_while_it_works_ends_cancelled() {
    let mut cluster = Cluster::start("cancel-working").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    // `crash`: records `one`, then takes a slow model turn before recording `two`.
    runs.start("works-1", "crash")
        .await
        .expect("the run starts");
    wait_for("the first record", || async {
        (!cluster.effects().is_empty()).then_some(())
    })
    .await;

    cluster.cancel("works-1").await;
    let progress = cancelled(&runs, "works-1").await;
    assert!(progress.pending.is_empty(), "{progress:?}");
    let ended = runs.output("works-1").await;
    assert!(
        matches!(&ended, Err(ClientError::Http { body, .. }) if body.contains("cancelled")),
        "{ended:?}"
    );
}
