//! What a caller who reaches the ingress (not the workers) can and cannot do to a run: the
//! ingress is the API, so it starts, reads and decides any run, but it can neither grow a run's
//! journal without end, nor reach the object that makes a call's first decision the only one,
//! nor hold a caller waiting for an output for ever.

use crate::decisions::{complete_directly, pending, waiting_anew};
use crate::harness::{Cluster, wait_for};
use reins_restate::{ClientError, MAX_UNUSABLE_DECISIONS, RunFailure};
use std::time::Duration;

/// Before, every payload that is no decision re-armed the call on a fresh awakeable: three
/// more journal entries each, which every replay reads into a worker's memory, and no end to
/// how many a caller could send. Past the bound the run ends instead.
#[tokio::test(flavor = "multi_thread")]
async fn awakeables_resolved_with_no_decision_again_and_again_end_the_run() {
    let mut cluster = Cluster::start("garbage").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    runs.start("garbage-1", "approve")
        .await
        .expect("the run starts");
    let mut waiting = pending(&runs, "garbage-1").await;
    for sent in 1..=MAX_UNUSABLE_DECISIONS + 1 {
        complete_directly(
            &cluster,
            &waiting.awakeable,
            "resolve",
            r#"{"decision": "bogus"}"#,
        )
        .await;
        if sent <= MAX_UNUSABLE_DECISIONS {
            waiting = waiting_anew(&runs, "garbage-1", &waiting.awakeable).await;
        }
    }

    let ended = wait_for("the run to end", || async {
        runs.status("garbage-1")
            .await
            .ok()
            .filter(|p| p.failure.is_some())
    })
    .await;
    assert_eq!(ended.failure, Some(RunFailure::Error));
    assert!(ended.pending.is_empty(), "{ended:?}");
    match runs.output("garbage-1").await {
        Err(ClientError::Http { body, .. }) => {
            assert!(
                body.contains("payloads that are no usable decision"),
                "{body}"
            );
        }
        other => panic!("expected the run to end, got {other:?}"),
    }
    assert!(cluster.effects().is_empty(), "the transfer never ran");
}

/// `decide` claims a call's awakeable on the object `ReinsAgentDecisions` before resolving
/// it; a caller at the ingress who could claim it first would have every decision refused
/// (409), or could drop the claims (`forget`) and have a call decided twice. The object is
/// private to the ingress: both calls are refused, and the person's decision is taken.
#[tokio::test(flavor = "multi_thread")]
async fn the_decision_claims_cannot_be_reached_through_the_ingress() {
    let mut cluster = Cluster::start("claims").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    runs.start("claims-1", "approve")
        .await
        .expect("the run starts");
    let waiting = pending(&runs, "claims-1").await;

    let http = reqwest::Client::new();
    for (handler, body) in [
        ("claim", serde_json::json!(waiting.awakeable)),
        ("forget", serde_json::Value::Null),
    ] {
        let answer = http
            .post(format!(
                "{}/ReinsAgentDecisions/claims-1/{handler}",
                cluster.ingress
            ))
            .json(&body)
            .send()
            .await
            .expect("the ingress answers");
        assert!(
            !answer.status().is_success(),
            "`{handler}` was taken from the ingress: {answer:?}"
        );
    }

    runs.approve("claims-1", &waiting.call)
        .await
        .expect("the person's decision is taken");
    let output = runs.output("claims-1").await.expect("the run finishes");
    assert_eq!(output.answer, "result: transferred 100");
}

/// A run that waits for a person does not hold whoever waits for its output: the wait ends at
/// the caller's limit, and the run goes on waiting for its decision.
#[tokio::test(flavor = "multi_thread")]
async fn waiting_for_the_output_of_a_suspended_run_ends_at_the_limit() {
    let mut cluster = Cluster::start("patience").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    runs.start("patience-1", "approve")
        .await
        .expect("the run starts");
    let waiting = pending(&runs, "patience-1").await;

    match runs
        .output_within("patience-1", Duration::from_millis(500))
        .await
    {
        Err(ClientError::NotEnded { run_id, .. }) => assert_eq!(run_id, "patience-1"),
        other => panic!("expected the wait to end, got {other:?}"),
    }
    let still = wait_for("the run to wait still", || async {
        runs.status("patience-1")
            .await
            .ok()?
            .pending
            .into_iter()
            .next()
    })
    .await;
    assert_eq!(still, waiting);

    runs.approve("patience-1", &waiting.call)
        .await
        .expect("the decision is taken");
    let output = runs.output("patience-1").await.expect("the run finishes");
    assert_eq!(output.answer, "result: transferred 100");
}
