//! A run id the server has no invocation for is an error of its own, not an empty progress
//! that reads like a run just starting, nor a bare HTTP status.

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

#[tokio::test(flavor = "multi_thread")]
async fn the_output_of_an_unknown_run_and_a_decision_on_it_are_unknown_run() {
    let mut cluster = Cluster::start("unknown-output").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();

    // What Restate itself answers for a workflow key with no invocation: 404 from both
    // `attach` (waits for the output) and `output` (does not), with a JSON body saying so.
    let http = reqwest::Client::new();
    for handler in ["attach", "output"] {
        let url = format!(
            "{}/restate/workflow/ReinsAgent/nope/{handler}",
            cluster.ingress
        );
        let answer = http.get(url).send().await.expect("the ingress answers");
        assert_eq!(answer.status().as_u16(), 404, "{handler}: {answer:?}");
        let body: serde_json::Value = answer.json().await.expect("a JSON body");
        assert_eq!(body["code"], 404, "{handler}: {body}");
        let message = body["message"].as_str().unwrap_or_default();
        assert!(message.contains("not found"), "{handler}: {body}");
    }

    match runs.output("nope").await {
        Err(ClientError::UnknownRun { run_id }) => assert_eq!(run_id, "nope"),
        other => panic!("output: expected UnknownRun, got {other:?}"),
    }
    match runs.finished_output("nope").await {
        Err(ClientError::UnknownRun { run_id }) => assert_eq!(run_id, "nope"),
        other => panic!("finished_output: expected UnknownRun, got {other:?}"),
    }
    for decided in [
        runs.approve("nope", "t1c0").await,
        runs.deny("nope", "t1c0", "no").await,
    ] {
        match decided {
            Err(ClientError::UnknownRun { run_id }) => assert_eq!(run_id, "nope"),
            other => panic!("a decision: expected UnknownRun, got {other:?}"),
        }
    }
    // The decisions started no run under the id.
    assert!(
        matches!(
            runs.status("nope").await,
            Err(ClientError::UnknownRun { .. })
        ),
        "a decision left a run behind"
    );

    // A known run that does not wait on the call is refused as before, not called unknown.
    runs.start("known", "quick").await.expect("the run starts");
    runs.output("known").await.expect("the run finishes");
    match runs.approve("known", "t1c0").await {
        Err(ClientError::Http { status: 404, body }) => {
            assert!(
                body.contains("not waiting for a decision on `t1c0`"),
                "{body}"
            );
        }
        other => panic!("expected a refusal of the call, got {other:?}"),
    }
    assert!(matches!(runs.finished_output("known").await, Ok(Some(_))));
}
