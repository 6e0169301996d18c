//! Decisions bound to what runs: who decided, when and why, bound to the call's arguments;
//! refused for arguments that changed, never applied to anything else; an audit trail.

use super::{Seen, agent, decide, uuid_like};
use reins::agent::*;
use reins::store::{Decision, MemoryStore, RunStore, SqliteStore, StoreError, call_binding};
use reins::testing::{ScriptedModel, Turn};
use serde_json::json;
use std::future::Future;
use std::sync::{Arc, Mutex};

#[cfg(feature = "postgres")]
use super::{postgres_client, postgres_database};

/// Starts the pay-the-bill run until it waits for approval of `t1c1` (`pay`, "pay 100").
async fn suspended_run(store: &(impl RunStore + Clone), log: &Arc<Mutex<Vec<String>>>) -> String {
    let error = agent(script(), log.clone(), Seen::default())
        .prompt("pay the bill")
        .run_id(format!("bound-{}", uuid_like()))
        .durable(store.clone())
        .await
        .unwrap_err();
    let PromptError::Suspended { run } = error else {
        panic!("expected a suspension, got {error:?}");
    };
    run.run_id().to_owned()
}

/// The pay-the-bill script, continued from any stored history.
fn script() -> ScriptedModel {
    ScriptedModel::resumable([
        Turn::tool_calls([
            ("lookup", json!({"text": "balance"})),
            ("pay", json!({"text": "pay 100"})),
        ]),
        Turn::text("Paid 100."),
    ])
}

fn paid(log: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
    log.lock()
        .unwrap()
        .iter()
        .filter(|text| text.starts_with("pay"))
        .cloned()
        .collect()
}

/// Who decided what, when and why is recorded and listed; the latest decision is applied; a
/// missing decision runs nothing; a decision for other arguments is refused when made.
async fn decisions_are_recorded_and_bound(store: impl RunStore + Clone) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let run_id = suspended_run(&store, &log).await;

    // No decision: resuming runs nothing and the call still waits.
    let again = agent(script(), log.clone(), Seen::default())
        .resume_stored(store.clone(), &run_id)
        .await
        .unwrap_err();
    assert!(matches!(again, PromptError::Suspended { .. }), "{again:?}");
    assert!(
        paid(&log).is_empty(),
        "a missing decision never runs the tool"
    );

    let listing = store.pending_approvals().await.unwrap();
    let pending = listing
        .approvals
        .iter()
        .find(|p| p.run_id == run_id)
        .unwrap();
    assert_eq!(
        pending.binding,
        call_binding(&run_id, "t1c1", "pay", &json!({"text": "pay 100"}))
    );
    assert!(pending.binding.starts_with("sha256:"));

    // A decision made for other arguments (or another run) is refused and not recorded.
    for binding in [
        call_binding(&run_id, "t1c1", "pay", &json!({"text": "pay 1000"})),
        call_binding("another-run", "t1c1", "pay", &json!({"text": "pay 100"})),
        String::new(),
    ] {
        let decision = Decision {
            binding,
            ..Decision::new(pending, ToolDecision::approve(), "mallory")
        };
        let refused = store.decide(&run_id, &decision).await.unwrap_err();
        assert!(
            matches!(&refused, StoreError::StaleDecision { internal_call_id, .. }
                if internal_call_id == "t1c1"),
            "{refused:?}"
        );
    }
    assert!(store.decisions(&run_id).await.unwrap().is_empty());

    let first =
        Decision::new(pending, ToolDecision::deny("too much"), "alice").because("over budget");
    let recorded = store.decide(&run_id, &first).await.unwrap();
    let second = Decision::new(pending, ToolDecision::approve(), "bob")
        .because("budget raised")
        .replacing(&recorded);
    store.decide(&run_id, &second).await.unwrap();
    let trail = store.decisions(&run_id).await.unwrap();
    assert_eq!(trail.len(), 2, "the audit trail keeps replaced decisions");
    assert_eq!(trail[0].decision, first);
    assert_eq!(trail[1].decision, second);
    assert!(
        trail
            .iter()
            .all(|d| d.run_id == run_id && d.decided_at_ms > 0)
    );
    assert!(trail[0].decided_at_ms <= trail[1].decided_at_ms);

    let answer = agent(script(), log.clone(), Seen::default())
        .resume_stored(store.clone(), &run_id)
        .await
        .unwrap();
    assert_eq!(answer, "Paid 100.");
    assert_eq!(
        paid(&log),
        vec!["pay 100"],
        "the latest decision was applied"
    );
    assert!(matches!(
        store.decisions("no-such-run").await,
        Err(StoreError::NotFound(_))
    ));
}

/// A recorded decision whose call changed behind the store's back is refused on resume: the
/// tool does not run, the run is left claimable and waiting, and a decision about the call as
/// it is now runs it with those arguments.
async fn changed_arguments_are_refused_on_resume<F, Fut>(store: impl RunStore + Clone, tamper: F)
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = ()>,
{
    let log = Arc::new(Mutex::new(Vec::new()));
    let run_id = suspended_run(&store, &log).await;
    decide(&store, &run_id, "t1c1", ToolDecision::approve())
        .await
        .unwrap();
    // The stored call now asks to pay 1000; the approval was for 100.
    tamper(run_id.clone()).await;

    for _ in 0..2 {
        // Twice: the refusal released the claim, so the second resume is not Busy.
        let error = agent(script(), log.clone(), Seen::default())
            .resume_stored(store.clone(), &run_id)
            .await
            .unwrap_err();
        assert!(
            matches!(&error, PromptError::Store { source: StoreError::StaleDecision { internal_call_id, .. }, .. } if internal_call_id == "t1c1"),
            "{error:?}"
        );
    }
    assert!(
        paid(&log).is_empty(),
        "the approval for 100 did not pay 1000"
    );
    let listing = store.pending_approvals().await.unwrap();
    let pending = listing.approvals.iter().find(|p| p.run_id == run_id);
    let pending = pending.expect("the changed call waits for a decision again");
    assert_eq!(pending.arguments, json!({"text": "pay 1000"}));

    store
        .decide(
            &run_id,
            &Decision::new(pending, ToolDecision::approve(), "alice"),
        )
        .await
        .unwrap();
    let answer = agent(script(), log.clone(), Seen::default())
        .resume_stored(store.clone(), &run_id)
        .await
        .unwrap();
    assert_eq!(answer, "Paid 100.");
    assert_eq!(paid(&log), vec!["pay 1000"]);
}

/// A decision stored by a release before bindings (a bare `ToolDecision`) binds nothing: the
/// call is listed as waiting, and resuming refuses the decision and runs nothing.
async fn a_decision_from_before_bindings_binds_nothing<F, Fut>(
    store: impl RunStore + Clone,
    insert_legacy: F,
) where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = ()>,
{
    let log = Arc::new(Mutex::new(Vec::new()));
    let run_id = suspended_run(&store, &log).await;
    insert_legacy(run_id.clone()).await;
    let listing = store.pending_approvals().await.unwrap();
    assert!(listing.unreadable.is_empty());
    assert!(
        listing.approvals.iter().any(|p| p.run_id == run_id),
        "the call still waits"
    );
    let error = agent(script(), log.clone(), Seen::default())
        .resume_stored(store.clone(), &run_id)
        .await
        .unwrap_err();
    assert!(
        matches!(
            &error,
            PromptError::Store {
                source: StoreError::StaleDecision { .. },
                ..
            }
        ),
        "{error:?}"
    );
    assert!(paid(&log).is_empty());
}

/// A decision the run's own decider made while the run went on is logged in its trail under
/// the lease the run holds, and only there: no claim applies it, and the call it names still
/// waits; a lease the run no longer holds logs nothing.
async fn decisions_made_during_the_run_are_logged_only(store: impl RunStore + Clone) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let run_id = suspended_run(&store, &log).await;
    let waiting = |approvals: reins::store::PendingApprovals| {
        approvals
            .approvals
            .into_iter()
            .filter(|pending| pending.run_id == run_id)
            .collect::<Vec<_>>()
    };
    let pending = waiting(store.pending_approvals().await.unwrap()).remove(0);
    let claimed = store.claim(&run_id, "worker").await.unwrap();
    let decision = Decision::new(&pending, ToolDecision::approve(), "ana via the terminal");
    let logged = store.log_decision(&claimed.lease, &decision).await.unwrap();
    assert!(logged.during_run);
    assert_eq!(logged.decision, decision);

    let mut stale = claimed.lease.clone();
    stale.token = "not-the-claims".to_owned();
    let refused = store.log_decision(&stale, &decision).await.unwrap_err();
    assert!(
        matches!(refused, StoreError::Conflict { .. }),
        "{refused:?}"
    );

    let trail = store.decisions(&run_id).await.unwrap();
    assert_eq!(trail, [logged]);
    let state = store.load(&run_id).await.unwrap();
    store
        .checkpoint(&claimed.lease, &state, &[], true)
        .await
        .unwrap();
    // Not a decision for a claim, nor one the listing counts: the call still waits.
    assert_eq!(waiting(store.pending_approvals().await.unwrap()), [pending]);
    let again = store.claim(&run_id, "worker").await.unwrap();
    assert_eq!(again.decisions, []);
    assert!(paid(&log).is_empty());
}

/// The row a release before bindings wrote for an approval of `t1c1`.
const LEGACY_APPROVAL: &str =
    "INSERT INTO reins_decisions (run_id, internal_call_id, decision, decided_at)
     VALUES ($1, 't1c1', '{\"decision\":\"approve\"}', 0)";

#[tokio::test]
async fn decisions_are_bound_in_memory() {
    let store = MemoryStore::new();
    decisions_are_recorded_and_bound(store.clone()).await;
    decisions_made_during_the_run_are_logged_only(store.clone()).await;
    let tampered = store.clone();
    changed_arguments_are_refused_on_resume(store, |run_id| async move {
        let state = tampered.load(&run_id).await.unwrap();
        let json = serde_json::to_string(&state)
            .unwrap()
            .replace("pay 100", "pay 1000");
        tampered.put_raw_state(&run_id, &json);
    })
    .await;
}

#[tokio::test]
async fn decisions_are_bound_in_sqlite() {
    // Removed with its -wal and -shm files when the test ends, however it ends.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bound.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    decisions_are_recorded_and_bound(store.clone()).await;
    decisions_made_during_the_run_are_logged_only(store.clone()).await;
    let file = path.clone();
    changed_arguments_are_refused_on_resume(store, |run_id| async move {
        rusqlite::Connection::open(&file)
            .unwrap()
            .execute(
                "UPDATE reins_runs SET state = replace(state, 'pay 100', 'pay 1000') WHERE run_id = ?1",
                [run_id],
            )
            .unwrap();
    })
    .await;
    let store = SqliteStore::open(&path).unwrap();
    let file = path.clone();
    a_decision_from_before_bindings_binds_nothing(store, |run_id| async move {
        rusqlite::Connection::open(&file)
            .unwrap()
            .execute(&LEGACY_APPROVAL.replace("$1", "?1"), [run_id])
            .unwrap();
    })
    .await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn decisions_are_bound_in_postgres() {
    let url = postgres_database().await;
    let store = reins::store::PostgresStore::connect(&url).await.unwrap();
    decisions_are_recorded_and_bound(store.clone()).await;
    decisions_made_during_the_run_are_logged_only(store.clone()).await;
    let tamper_url = url.clone();
    changed_arguments_are_refused_on_resume(store, |run_id| async move {
        postgres_client(&tamper_url)
            .await
            .execute(
                "UPDATE reins_runs SET state = replace(state, 'pay 100', 'pay 1000') WHERE run_id = $1",
                &[&run_id],
            )
            .await
            .unwrap();
    })
    .await;
    let store = reins::store::PostgresStore::connect(&url).await.unwrap();
    a_decision_from_before_bindings_binds_nothing(store, |run_id| async move {
        postgres_client(&url)
            .await
            .execute(LEGACY_APPROVAL, &[&run_id])
            .await
            .unwrap();
    })
    .await;
}
