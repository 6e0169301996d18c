//! A worker killed (SIGKILL) while a tool that declares nothing about running twice is
//! executing: the resumed run does not execute it again by itself, it waits in doubt for a
//! decision — at most once, as a stored run's call in doubt.

use crate::harness::{Cluster, wait_for};
use reins::agent::ToolDecision;
use reins_restate::{PendingDecision, RestateRuns};

/// Starts `run` (the demo's `charge` script), kills the worker executing `charge`, starts
/// another worker, and returns the call as listed in doubt.
async fn cut_off(cluster: &mut Cluster, runs: &RestateRuns, run: &str) -> PendingDecision {
    runs.start(run, "charge").await.expect("the run starts");
    let effect = format!("{run}/t1c0");
    let executing = wait_for("the charge to start", || async {
        let effects = cluster.effects();
        effects
            .iter()
            .find(|done| done.effect_id == effect)
            .map(|done| done.pid)
    })
    .await;
    cluster.kill_worker(executing);
    cluster.spawn_worker();
    wait_for("the call to wait in doubt", || async {
        runs.status(run).await.ok()?.pending.into_iter().next()
    })
    .await
}

/// How many times the tool executed for `run`'s call.
fn executions(cluster: &Cluster, run: &str) -> usize {
    let effect = format!("{run}/t1c0");
    cluster
        .effects()
        .iter()
        .filter(|done| done.tool == "charge" && done.effect_id == effect)
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_cut_off_by_a_crash_waits_in_doubt_and_runs_again_only_when_told() {
    let mut cluster = Cluster::start("in-doubt").await;
    let runs = cluster.runs();
    cluster.spawn_worker();
    cluster.register().await;

    // Skipped: the run ends without executing the tool a second time.
    let waiting = cut_off(&mut cluster, &runs, "doubt-skip").await;
    assert!(waiting.in_doubt, "{waiting:?}");
    assert_eq!(waiting.call, "t1c0");
    assert_eq!(waiting.tool, "charge");
    assert_eq!(waiting.arguments, serde_json::json!({"amount": 5}));
    assert_eq!(executions(&cluster, "doubt-skip"), 1);
    runs.decide(
        "doubt-skip",
        &waiting.call,
        ToolDecision::Skip {
            message: "not charged again".to_owned(),
        },
    )
    .await
    .expect("the decision is taken");
    let output = runs.output("doubt-skip").await.expect("the run finishes");
    // The demo's hook prefixes the result with its outcome: a skip, as on a stored run.
    assert_eq!(output.answer, "result: skipped: not charged again");
    assert_eq!(executions(&cluster, "doubt-skip"), 1);
    let progress = runs.status("doubt-skip").await.expect("the status");
    assert!(progress.pending.is_empty(), "{progress:?}");

    // Rerun: the tool executes once more, and the run answers with its result.
    let waiting = cut_off(&mut cluster, &runs, "doubt-rerun").await;
    assert!(waiting.in_doubt, "{waiting:?}");
    assert_eq!(executions(&cluster, "doubt-rerun"), 1);
    std::fs::write(cluster.effects.with_extension("release"), "").expect("the release file");
    runs.decide("doubt-rerun", &waiting.call, ToolDecision::Rerun)
        .await
        .expect("the decision is taken");
    let output = runs.output("doubt-rerun").await.expect("the run finishes");
    assert_eq!(output.answer, "result: success: charged 5");
    assert_eq!(executions(&cluster, "doubt-rerun"), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denied_or_supplied_call_in_doubt_is_recorded_as_a_stored_run_records_it() {
    let mut cluster = Cluster::start("in-doubt-answers").await;
    let runs = cluster.runs();
    cluster.spawn_worker();
    cluster.register().await;

    // Denied: the model reads the report, and the call's outcome is a denial (as on a stored
    // run), not the tool's failure.
    let waiting = cut_off(&mut cluster, &runs, "doubt-deny").await;
    runs.decide(
        "doubt-deny",
        &waiting.call,
        ToolDecision::deny("not charged"),
    )
    .await
    .expect("the decision is taken");
    let output = runs.output("doubt-deny").await.expect("the run finishes");
    assert_eq!(output.answer, "result: denied: not charged");
    assert_eq!(executions(&cluster, "doubt-deny"), 1);

    // Supplied: the model reads the result as the tool's success.
    let waiting = cut_off(&mut cluster, &runs, "doubt-supply").await;
    runs.decide(
        "doubt-supply",
        &waiting.call,
        ToolDecision::supply_result("charged 5 (receipt 17)"),
    )
    .await
    .expect("the decision is taken");
    let output = runs.output("doubt-supply").await.expect("the run finishes");
    assert_eq!(output.answer, "result: success: charged 5 (receipt 17)");
    assert_eq!(executions(&cluster, "doubt-supply"), 1);
}

/// A run cancelled while a call waits in doubt ends cancelled, as one waiting for an
/// approval does: the call is no longer listed, a decision about it is refused, and the
/// tool never runs again.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_cancelled_while_a_call_waits_in_doubt_ends_and_refuses_a_decision() {
    let mut cluster = Cluster::start("in-doubt-cancel").await;
    let runs = cluster.runs();
    cluster.spawn_worker();
    cluster.register().await;
    let waiting = cut_off(&mut cluster, &runs, "doubt-cancel").await;
    cluster.cancel("doubt-cancel").await;
    let progress = wait_for("the run to end cancelled", || async {
        let progress = runs.status("doubt-cancel").await.ok()?;
        (progress.failure == Some(reins_restate::RunFailure::Cancelled)).then_some(progress)
    })
    .await;
    assert!(progress.pending.is_empty(), "{progress:?}");
    let refused = runs
        .decide("doubt-cancel", &waiting.call, ToolDecision::Rerun)
        .await;
    assert!(
        matches!(
            &refused,
            Err(reins_restate::ClientError::Http { status: 409, .. })
        ),
        "{refused:?}"
    );
    assert_eq!(executions(&cluster, "doubt-cancel"), 1);
}
