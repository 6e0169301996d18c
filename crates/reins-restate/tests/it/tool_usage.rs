//! What a tool attaches to its call — tokens it counts in the run
//! (`ToolCallContext::add_usage`) and metadata for hooks (`set_extension`) — on Restate: the
//! run replays the call's journaled result after an approval, without running the tool, and
//! still counts and shows them once.

use crate::decisions::pending;
use crate::harness::Cluster;
use reins::completion::Usage;

#[tokio::test(flavor = "multi_thread")]
async fn a_tools_usage_and_extensions_count_once_after_the_run_is_replayed() {
    let mut cluster = Cluster::start("tool-usage").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    let run = "delegate-1";
    runs.start(run, "delegate").await.expect("the run starts");

    // `ask` has run and the run waits, suspended, for the transfer's approval.
    let waiting = pending(&runs, run).await;
    assert_eq!(waiting.tool, "transfer");
    // A fresh worker replays the journal: `ask`'s result comes from it, the tool does not run.
    cluster.kill_all_workers();
    cluster.spawn_worker();
    runs.approve(run, &waiting.call)
        .await
        .expect("the approval is accepted");

    let output = runs.output(run).await.expect("the run finishes");
    let asked: Vec<_> = cluster
        .effects()
        .into_iter()
        .filter(|effect| effect.tool == "ask")
        .collect();
    assert_eq!(asked.len(), 1, "`ask` ran once: {asked:?}");
    // The hook saw `ask`'s extension on the replay too.
    assert_eq!(
        output.answer,
        "results: Paris (answered by geographer) | transferred 100"
    );
    // The demo's three model turns (20/5, 30/5, 40/5) and what `ask` counted (100/10), once.
    assert_eq!(output.usage, Usage::new(190, 25));
}
