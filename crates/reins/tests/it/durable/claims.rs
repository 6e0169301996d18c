//! Who holds a run: racing workers, workers with the same name, lease tokens, a lost lease,
//! decisions while a worker holds it.

use super::per_store::per_store;
use super::{NeedsApproval, RunStateBuilder, Seen, agent, decide, script, uuid_like};
use crate::common::EchoArgs;
use reins::agent::*;
use reins::store::{Lease, MemoryStore, RunStore, StoreError};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use serde_json::json;
use std::future::IntoFuture;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Two workers resume the same run at once: exactly one proceeds.
async fn racing_workers(store: impl RunStore + Clone) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        Turn::tool_call("pay", json!({"text": "pay 5"})),
        Turn::text("done").delay(Duration::from_millis(100)),
    ]);
    let error = agent(model.clone(), log.clone(), Seen::default())
        .prompt("pay")
        .durable(store.clone())
        .await
        .unwrap_err();
    let PromptError::Suspended { run } = error else {
        panic!("expected a suspension");
    };
    let run_id = run.run_id().to_string();
    decide(&store, &run_id, "t1c0", ToolDecision::approve())
        .await
        .unwrap();

    let first = agent(model.clone(), log.clone(), Seen::default())
        .resume_stored(store.clone(), &run_id)
        .worker("worker-a");
    let second = agent(model.clone(), log.clone(), Seen::default())
        .resume_stored(store.clone(), &run_id)
        .worker("worker-b");
    let (a, b) = tokio::join!(tokio::spawn(first.into_future()), async {
        tokio::time::sleep(Duration::from_millis(30)).await;
        second.await
    });
    let a = a.unwrap();
    assert_eq!(a.unwrap(), "done");
    let error = b.unwrap_err();
    assert!(
        matches!(&error, PromptError::Store { source: StoreError::Busy { owner, .. }, .. } if owner == "worker-a"),
        "{error:?}"
    );
    assert_eq!(*log.lock().unwrap(), vec!["pay 5"], "the tool ran once");
}

per_store!(racing_workers, sqlite file);

/// An agent whose `pay` tool takes a while and counts its executions; payments need approval.
fn slow_pay_agent(model: ScriptedModel, payments: Arc<AtomicUsize>) -> Agent {
    let pay = tool_fn("pay", "Pays.", move |args: EchoArgs| {
        let payments = payments.clone();
        async move {
            payments.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(200)).await;
            Ok::<_, std::convert::Infallible>(args.text)
        }
    });
    AgentBuilder::new(model)
        .tool(pay)
        .add_hook(NeedsApproval)
        .build()
}

/// Two workers with the same name resume the same run at once: exactly one of them holds
/// it, and the payment runs once.
async fn same_name_workers(store: impl RunStore + Clone) {
    let payments = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        Turn::tool_call("pay", json!({"text": "pay 5"})),
        Turn::text("done"),
    ]);
    let agent = slow_pay_agent(model, payments.clone());
    let error = agent
        .prompt("pay")
        .durable(store.clone())
        .await
        .unwrap_err();
    let PromptError::Suspended { run } = error else {
        panic!("expected a suspension, got {error:?}");
    };
    let run_id = run.run_id().to_string();
    decide(&store, &run_id, "t1c0", ToolDecision::approve())
        .await
        .unwrap();

    let first = agent
        .resume_stored(store.clone(), &run_id)
        .worker("twin")
        .into_future();
    let second = agent
        .resume_stored(store.clone(), &run_id)
        .worker("twin")
        .into_future();
    let (a, b) = tokio::join!(first, second);
    let (finished, refused) = match (a, b) {
        (Ok(answer), Err(error)) | (Err(error), Ok(answer)) => (answer, error),
        other => panic!("expected one answer and one refusal, got {other:?}"),
    };
    assert_eq!(finished, "done");
    assert!(
        matches!(&refused, PromptError::Store { source: StoreError::Busy { owner, .. }, .. } if owner == "twin"),
        "{refused:?}"
    );
    assert_eq!(payments.load(Ordering::SeqCst), 1, "the payment ran once");
    assert_eq!(
        store.load(&run_id).await.unwrap().status,
        RunStatus::Completed
    );
}

per_store!(same_name_workers, sqlite file);

/// A lease is held by its claim's token: a second claim under the same name is refused, and
/// a lease with another token (forged, or from an earlier claim) cannot checkpoint.
async fn claims_are_held_by_their_token(store: impl RunStore) {
    let state = RunStateBuilder::suspended_example();
    let created = store.create(&state, "w").await.unwrap();
    let error = store.claim(&state.run_id, "w").await.unwrap_err();
    assert!(
        matches!(&error, StoreError::Busy { owner, .. } if owner == "w"),
        "{error:?}"
    );
    let forged = Lease {
        token: "forged".into(),
        ..created.clone()
    };
    let error = store
        .checkpoint(&forged, &state, &[], false)
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Conflict { .. }), "{error:?}");
    let released = store.checkpoint(&created, &state, &[], true).await.unwrap();
    assert_eq!(released.token, created.token);

    let claimed = store.claim(&state.run_id, "w").await.unwrap();
    assert_eq!(claimed.lease.owner, "w");
    assert_ne!(
        claimed.lease.token, created.token,
        "every claim has its own token"
    );
    let stale = Lease {
        version: claimed.lease.version,
        ..created
    };
    let error = store
        .checkpoint(&stale, &state, &[], false)
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Conflict { .. }), "{error:?}");
    store
        .checkpoint(&claimed.lease, &state, &[], true)
        .await
        .unwrap();
}

per_store!(claims_are_held_by_their_token);

/// A run that asked to pay the bill and waits for a decision about it, its id starting with
/// `prefix`.
async fn suspended_run(store: &(impl RunStore + Clone), prefix: &str) -> String {
    let log = Arc::new(Mutex::new(Vec::new()));
    let run_id = format!("{prefix}-{}", uuid_like());
    let suspended = agent(script(), log, Seen::default())
        .prompt("pay the bill")
        .run_id(run_id.clone())
        .durable(store.clone())
        .await;
    assert!(
        matches!(suspended, Err(PromptError::Suspended { .. })),
        "{suspended:?}"
    );
    run_id
}

/// While a worker holds a suspended run it resumes, no decision about it is recorded: the
/// worker read the run's decisions when it took it and goes on under those, so a later one
/// would be logged but never applied. Once the run is given back, decisions are taken again.
async fn no_decision_while_a_worker_holds_the_run(store: impl RunStore + Clone) {
    let run_id = suspended_run(&store, "held").await;
    let claimed = store.claim(&run_id, "worker").await.unwrap();
    let error = decide(&store, &run_id, "t1c1", ToolDecision::deny("no"))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, StoreError::Busy { owner, .. } if owner == "worker"),
        "{error:?}"
    );
    assert!(store.decisions(&run_id).await.unwrap().is_empty());

    store
        .checkpoint(&claimed.lease, &claimed.state, &[], true)
        .await
        .unwrap();
    decide(&store, &run_id, "t1c1", ToolDecision::deny("no"))
        .await
        .expect("a run given back takes decisions");
}

per_store!(no_decision_while_a_worker_holds_the_run);

#[tokio::test]
async fn a_worker_that_lost_its_lease_cannot_overwrite_the_run() {
    let store = MemoryStore::new().with_lease(Duration::from_millis(20));
    let state = RunStateBuilder::suspended_example();
    let lease = store.create(&state, "old").await.unwrap();
    tokio::time::sleep(Duration::from_millis(40)).await;
    let claimed = store.claim(&state.run_id, "new").await.unwrap();
    assert_eq!(claimed.lease.owner, "new");
    let error = store
        .checkpoint(&lease, &state, &[], false)
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Conflict { .. }));
}

/// A decision recorded once a worker's lease has run out (its process paused, say, and not
/// yet claimed by another) takes the run from that worker: it read the run's decisions when it
/// claimed it and would go on without this one, which would be logged but never applied. So
/// its writes (a checkpoint, a renewal, a decision of its own) are refused, and the next claim
/// applies the decision. The lease here is short, and waited out. (Not zero: a run holding a
/// lease that runs out the moment it is taken stops at once, its lease lapsed.)
async fn a_decision_takes_the_run_from_a_lapsed_worker(store: impl RunStore + Clone) {
    let run_id = suspended_run(&store, "lapsed").await;
    let lapsed = store.claim(&run_id, "paused").await.unwrap();
    tokio::time::sleep(SHORT_LEASE + SHORT_LEASE / 2).await;
    let recorded = decide(&store, &run_id, "t1c1", ToolDecision::deny("no"))
        .await
        .expect("a run whose lease ran out takes decisions");

    let error = store
        .checkpoint(&lapsed.lease, &lapsed.state, &[], false)
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Conflict { .. }), "{error:?}");
    let error = store.renew(&lapsed.lease).await.unwrap_err();
    assert!(matches!(error, StoreError::Conflict { .. }), "{error:?}");

    let next = store.claim(&run_id, "next").await.unwrap();
    assert_eq!(
        next.decisions,
        vec![recorded],
        "the decision is applied next"
    );
}

/// The lease of [`a_decision_takes_the_run_from_a_lapsed_worker`]: long enough for a run to
/// suspend under it, short to wait out.
const SHORT_LEASE: Duration = Duration::from_millis(200);

per_store!(
    a_decision_takes_the_run_from_a_lapsed_worker,
    each.with_lease(SHORT_LEASE)
);
