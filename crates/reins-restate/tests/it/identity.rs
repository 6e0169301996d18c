//! Who may drive the workers: an invocation carries its journal, so whoever can send one to a
//! worker chooses the answers its run replays. A worker served with `serve_verified` takes
//! only its own Restate server's signed requests.

use crate::harness::{Cluster, wait_for};
use reins_restate::{ClientError, register_deployment};

/// Why `serve_verified` exists: a worker served with `serve_on` takes a second Restate
/// server that can reach its port, which runs the agent's tools through it — its own
/// `decide` approving what the approval policy suspended.
#[tokio::test(flavor = "multi_thread")]
async fn an_unverified_worker_serves_any_restate_server_that_reaches_it() {
    let mut own = Cluster::start("identity-open").await;
    own.spawn_worker();
    own.register().await;
    let other = Cluster::start("identity-open-other").await;
    other.register_deployment(&format!("http://{}", own.worker_addr));
    let runs = other.runs();
    runs.start("taken", "approve")
        .await
        .expect("the run starts");
    let waiting = wait_for("the transfer to wait", || async {
        runs.status("taken").await.ok()?.pending.into_iter().next()
    })
    .await;
    runs.approve("taken", &waiting.call)
        .await
        .expect("approved");
    let output = runs.output("taken").await.expect("the run finishes");
    assert_eq!(output.answer, "result: transferred 100");
    assert!(own.effects().iter().any(|effect| effect.tool == "transfer"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_verified_worker_serves_its_own_server_and_refuses_another() {
    let mut own = Cluster::start_signing("identity-signed").await;
    own.spawn_worker();
    // Discovery and invocations are signed: the worker takes them.
    own.register().await;
    let runs = own.runs();
    runs.start("own", "hello").await.expect("the run starts");
    let output = runs.output("own").await.expect("the run finishes");
    assert_eq!(output.answer, "done");

    // A server without the key cannot even register the worker.
    let other = Cluster::start("identity-signed-other").await;
    let deployment = format!("http://{}", own.worker_addr);
    let refused = register_deployment(&other.admin_url(), &deployment).await;
    assert!(
        matches!(refused, Err(ClientError::AdminHttp { .. })),
        "{refused:?}"
    );
}
