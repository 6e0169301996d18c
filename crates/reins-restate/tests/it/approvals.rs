//! `DispatchAction::suspend` on Restate: the run waits on an awakeable without a worker, and a
//! decision through the ingress resumes it on whichever worker is up.

use crate::decisions::pending;
use crate::harness::Cluster;
use reins_restate::ClientError;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn a_suspended_run_outlives_every_worker_and_finishes_after_approval() {
    let mut cluster = Cluster::start("approve").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    let run = "approve-1";
    runs.start(run, "approve").await.expect("the run starts");

    let waiting = pending(&runs, run).await;
    assert_eq!(waiting.call, "t1c0");
    assert_eq!(waiting.tool, "transfer");
    assert_eq!(waiting.arguments, json!({"amount": 100}));
    assert_eq!(waiting.reason, "transfers need a person");
    assert!(cluster.effects().is_empty(), "nothing ran before approval");

    cluster.kill_all_workers();
    let fresh = cluster.spawn_worker();
    runs.approve(run, &waiting.call)
        .await
        .expect("the approval is accepted");

    let output = runs.output(run).await.expect("the run finishes");
    assert_eq!(output.answer, "result: transferred 100");
    let effects = cluster.effects();
    assert_eq!(effects.len(), 1, "the tool ran once: {effects:?}");
    assert_eq!(effects[0].effect_id, "approve-1/t1c0");
    assert_eq!(effects[0].pid, fresh);
    assert!(runs.status(run).await.expect("status").pending.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn deny_and_edited_arguments_through_the_ingress() {
    let mut cluster = Cluster::start("decide").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    runs.start("deny-1", "approve").await.expect("a run starts");
    runs.start("edit-1", "approve").await.expect("a run starts");

    // A decision about a call the run does not wait on is refused.
    let denied = pending(&runs, "deny-1").await;
    match runs.approve("deny-1", "t9c9").await {
        Err(ClientError::Http { status, body }) => {
            assert_eq!(status, 404, "{body}");
            assert!(body.contains("t9c9"), "{body}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }

    runs.deny("deny-1", &denied.call, "not today")
        .await
        .expect("the denial is accepted");
    let edited = pending(&runs, "edit-1").await;
    runs.approve_with_args("edit-1", &edited.call, json!({"amount": 5}))
        .await
        .expect("the edited approval is accepted");

    let output = runs
        .output("deny-1")
        .await
        .expect("the denied run finishes");
    assert_eq!(output.answer, "result: not today");
    let output = runs
        .output("edit-1")
        .await
        .expect("the edited run finishes");
    assert_eq!(output.answer, "result: transferred 5");

    let effects: Vec<(String, String)> = cluster
        .effects()
        .into_iter()
        .map(|effect| (effect.effect_id, effect.argument))
        .collect();
    assert_eq!(effects, [("edit-1/t1c0".to_owned(), "5".to_owned())]);
}
