//! A tool result larger than Restate takes in one journal entry (32 MiB by default) is refused
//! by the server as a retryable failure; journaled as it was, the call would be run and
//! refused again without end. It reaches the model as the tool's error instead (its size and
//! the limit), the tokens the tool counted are still counted, and the run ends.

use crate::harness::Cluster;
use reins::completion::Usage;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_result_over_the_step_limit_reaches_the_model_as_an_error() {
    let mut cluster = Cluster::start("huge").await;
    cluster.spawn_worker();
    cluster.register().await;
    let runs = cluster.runs();
    // `huge`: one `record` call whose result is 40 MiB; the answer quotes the tool's result.
    runs.start("huge-1", "huge").await.expect("the run starts");
    let output = tokio::time::timeout(Duration::from_secs(120), runs.output("huge-1"))
        .await
        .expect("the run ends instead of retrying the step without end")
        .expect("the run answers");
    assert!(
        output.answer.contains(
            "41943042 bytes as JSON, more than a journaled step may hold (8388608 bytes)"
        ),
        "{}",
        output.answer
    );
    // What the tool counted (70/7), though its result was not journaled.
    assert_eq!(output.usage, Usage::new(70, 7));
    let progress = runs.status("huge-1").await.expect("the run's status");
    assert_eq!(
        progress.steps,
        ["huge-1/model/1", "huge-1/t1c0", "huge-1/model/2"]
    );
    // Run once: the failure was journaled, not retried.
    assert_eq!(cluster.effects().len(), 1);
}
