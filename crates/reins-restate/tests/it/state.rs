//! What a run leaves in the workflow's state: one small key per journaled step, so that a
//! step's state write does not grow with the run (a single list rewritten after every step
//! made a run's state writes grow with the square of its length).

use crate::harness::Cluster;

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
