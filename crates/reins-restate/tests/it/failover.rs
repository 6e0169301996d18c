//! A worker killed with SIGKILL in the middle of a run: Restate fails the invocation over to
//! the other worker, which replays the journal and does not execute a finished step again.

use crate::harness::{Cluster, wait_for};
use reins_restate::ClientError;

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_mid_run_fails_over_and_runs_each_tool_call_once() {
    let mut cluster = Cluster::start("failover").await;
    cluster.spawn_worker();
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    let run = "crash-1";
    runs.start(run, "crash").await.expect("the run starts");

    // Once the first tool call is journaled, the run is inside its slow second model turn:
    // kill the worker that runs it.
    let first = format!("{run}/t1c0");
    wait_for("the first tool call to be journaled", || async {
        let progress = runs.status(run).await.ok()?;
        progress.steps.contains(&first).then_some(())
    })
    .await;
    let running = cluster
        .effects()
        .iter()
        .find(|effect| effect.effect_id == first)
        .map(|effect| effect.pid)
        .expect("the first call's effect names its worker");
    cluster.kill_worker(running);
    let survivor = cluster.worker_pids()[0];

    let output = runs.output(run).await.expect("the run finishes");
    assert_eq!(output.answer, "done");
    assert_eq!(output.turns, 3);

    let effects = cluster.effects();
    let ids: Vec<&str> = effects
        .iter()
        .map(|effect| effect.effect_id.as_str())
        .collect();
    // Each call's side effect happened exactly once, by effect id.
    assert_eq!(ids, [first.as_str(), "crash-1/t2c0"]);
    // The second call ran on the surviving worker, after the failover.
    assert_eq!(effects[1].pid, survivor);
    // The hook's clock readings (journaled with Steps::record) stamped each item.
    assert!(effects[0].argument.starts_with("one@"), "{effects:?}");
    assert!(effects[1].argument.starts_with("two@"), "{effects:?}");

    // The journal holds every step once, in order: the replay on the surviving worker took
    // the same path, its hook reading the first clock value from the journal.
    let progress = runs.status(run).await.expect("the run's status");
    assert_eq!(
        progress.steps,
        [
            "crash-1/model/1",
            "crash-1/record/clock/t1c0",
            "crash-1/t1c0",
            "crash-1/model/2",
            "crash-1/record/clock/t2c0",
            "crash-1/t2c0",
            "crash-1/model/3"
        ]
    );

    // A run id runs once: starting it again is refused, runs nothing, and the output stays
    // the same.
    let again = runs.start(run, "something else").await;
    assert!(
        matches!(&again, Err(ClientError::AlreadyExists { run_id }) if run_id == run),
        "{again:?}"
    );
    assert_eq!(runs.output(run).await.expect("the output").answer, "done");
    assert_eq!(cluster.effects().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_model_call_fails_the_run_once_without_retries() {
    let mut cluster = Cluster::start("failed").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    runs.start("fail-1", "fail").await.expect("the run starts");
    match runs.output("fail-1").await {
        Err(ClientError::Http { body, .. }) => {
            assert!(body.contains("HTTP 503"), "{body}");
            assert!(body.contains("model unavailable"), "{body}");
        }
        other => panic!("expected the run to fail, got {other:?}"),
    }
    let progress = runs.status("fail-1").await.expect("the run's status");
    assert_eq!(progress.steps, ["fail-1/model/1"]);
}
