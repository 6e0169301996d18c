//! Many concurrent runs through two workers: every run finishes, and no tool call runs twice.

use crate::harness::Cluster;
use std::collections::HashSet;

const RUNS: usize = 200;

#[tokio::test(flavor = "multi_thread")]
async fn many_concurrent_runs_through_two_workers_each_run_once() {
    let mut cluster = Cluster::start("many").await;
    cluster.spawn_worker();
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    let ids: Vec<String> = (0..RUNS).map(|n| format!("many-{n}")).collect();

    let started = ids.iter().map(|id| runs.start(id, "quick"));
    for result in futures::future::join_all(started).await {
        result.expect("a run starts");
    }
    let finished = ids.iter().map(|id| runs.output(id));
    for (id, output) in ids.iter().zip(futures::future::join_all(finished).await) {
        let output = output.unwrap_or_else(|error| panic!("run {id} failed: {error}"));
        assert_eq!(output.answer, "done");
        assert_eq!(&output.run_id, id);
    }

    let effects = cluster.effects();
    assert_eq!(effects.len(), RUNS, "one tool call per run, none repeated");
    let distinct: HashSet<&str> = effects
        .iter()
        .map(|effect| effect.effect_id.as_str())
        .collect();
    let expected: HashSet<String> = ids.iter().map(|id| format!("{id}/t1c0")).collect();
    assert_eq!(
        distinct,
        expected.iter().map(String::as_str).collect::<HashSet<_>>()
    );
}
