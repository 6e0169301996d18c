//! What a run leaves in the workflow's state: one small key per journaled step, so that a
//! step's state write does not grow with the run (a single list rewritten after every step
//! made a run's state writes grow with the square of its length).

use crate::harness::{Cluster, wait_for};

#[tokio::test(flavor = "multi_thread")]
async fn each_step_adds_one_empty_state_key_instead_of_rewriting_a_list() {
    let mut cluster = Cluster::start("state").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    runs.start("loop-1", "loop").await.expect("the run starts");
    runs.output("loop-1").await.expect("the run finishes");

    let progress = runs.status("loop-1").await.expect("the run's status");
    assert_eq!(progress.steps.len(), 19, "{progress:?}");
    assert_eq!(progress.steps[0], "loop-1/model/1");
    assert_eq!(progress.steps[1], "loop-1/t1c0");
    assert_eq!(progress.steps[18], "loop-1/model/10");

    let rows = cluster
        .query(
            "SELECT key, value_length FROM state WHERE service_name = 'ReinsAgent' AND \
             service_key = 'loop-1'",
        )
        .await;
    let steps: Vec<_> = rows
        .iter()
        .filter(|row| {
            row["key"]
                .as_str()
                .is_some_and(|key| key.starts_with("step/"))
        })
        .collect();
    assert_eq!(steps.len(), 19, "{rows:?}");
    assert!(
        rows.iter().all(|row| row["value_length"] == 0),
        "no step rewrites a list: {rows:?}"
    );
}

/// The keys and values of the `ReinsAgent` workflow `run`'s state.
async fn state_of(cluster: &Cluster, run: &str) -> Vec<serde_json::Value> {
    cluster
        .query(&format!(
            "SELECT key, value_utf8 FROM state WHERE service_name = 'ReinsAgent' AND \
             service_key = '{run}'"
        ))
        .await
}

/// A run recorded before the per-step keys kept its steps' names as one JSON list under the
/// state key `steps`. Its state is written here as that code left it — the list, and the
/// `pending` calls (a layout that did not change) — through the admin API, over a real run
/// suspended on a decision; after the decision the run records its next steps with per-step
/// keys, and `status` lists the old steps, then the new ones.
#[tokio::test(flavor = "multi_thread")]
async fn status_reads_the_steps_list_of_runs_recorded_before_the_per_step_keys() {
    let mut cluster = Cluster::start("legacy-steps").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    let run = "legacy-1";
    runs.start(run, "approve").await.expect("the run starts");
    let waiting = wait_for("the run to suspend for a decision", || async {
        runs.status(run).await.ok()?.pending.into_iter().next()
    })
    .await;

    let rows = state_of(&cluster, run).await;
    let pending = rows
        .iter()
        .find(|row| row["key"] == "pending")
        .and_then(|row| row["value_utf8"].as_str())
        .unwrap_or_else(|| panic!("the run's pending calls: {rows:?}"))
        .to_owned();
    let old_list =
        serde_json::to_vec(&[format!("{run}/model/1")]).expect("a list of names serializes");
    cluster
        .replace_state(
            run,
            &[("steps", old_list), ("pending", pending.into_bytes())],
        )
        .await;
    wait_for("the old layout to replace the run's state", || async {
        let rows = state_of(&cluster, run).await;
        let keys: Vec<&str> = rows.iter().filter_map(|row| row["key"].as_str()).collect();
        (keys.len() == 2 && keys.contains(&"steps")).then_some(())
    })
    .await;

    let progress = runs.status(run).await.expect("the run's status");
    assert_eq!(progress.steps, [format!("{run}/model/1")], "{progress:?}");
    assert_eq!(progress.pending, std::slice::from_ref(&waiting));

    runs.approve(run, &waiting.call)
        .await
        .expect("the approval is accepted");
    runs.output(run).await.expect("the run finishes");
    let progress = runs.status(run).await.expect("the run's status");
    assert_eq!(
        progress.steps,
        [
            format!("{run}/model/1"),
            format!("{run}/t1c0"),
            format!("{run}/model/2")
        ],
        "{progress:?}"
    );
    // Read from both layouts: the old list is still there beside the new keys.
    let rows = state_of(&cluster, run).await;
    let keys: Vec<&str> = rows.iter().filter_map(|row| row["key"].as_str()).collect();
    assert!(keys.contains(&"steps"), "{rows:?}");
    assert_eq!(
        keys.iter().filter(|key| key.starts_with("step/")).count(),
        2,
        "{rows:?}"
    );
}
