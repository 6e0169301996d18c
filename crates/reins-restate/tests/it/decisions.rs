//! Decisions a run must refuse, through the ingress: each gets a clear error and leaves the
//! call waiting for a decision that can be taken.

use crate::harness::{Cluster, wait_for};
use reins_restate::{ClientError, PendingDecision, RestateRuns};
use serde_json::json;

async fn pending(runs: &RestateRuns, run: &str) -> PendingDecision {
    wait_for("the run to suspend for a decision", || async {
        runs.status(run).await.ok()?.pending.into_iter().next()
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn edited_arguments_that_are_not_an_object_are_refused_and_the_call_keeps_waiting() {
    let mut cluster = Cluster::start("edit-args").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    runs.start("args-1", "approve")
        .await
        .expect("the run starts");
    let waiting = pending(&runs, "args-1").await;

    match runs
        .approve_with_args("args-1", &waiting.call, json!("amount=5"))
        .await
    {
        Err(ClientError::Http { status, body }) => {
            assert_eq!(status, 400, "{body}");
            assert!(
                body.contains("must be a JSON object, not a string"),
                "{body}"
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(
        pending(&runs, "args-1").await,
        waiting,
        "the call still waits"
    );

    runs.approve_with_args("args-1", &waiting.call, json!({"amount": 5}))
        .await
        .expect("an object is accepted");
    let output = runs.output("args-1").await.expect("the run finishes");
    assert_eq!(output.answer, "result: transferred 5");
}
