//! A waiting call is decided once: a second, different decision (another process, another
//! person) is refused saying how the call was decided, unless it names the decision it
//! replaces; the same decision sent again is taken as it was recorded.

use super::per_store::per_store;
use super::{Seen, agent, uuid_like};
use reins::agent::*;
use reins::store::{Decision, PendingApproval, RunStore, StoreError};
use reins::testing::{ScriptedModel, Turn};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// The pay-the-bill script, continued from any stored history.
fn script() -> ScriptedModel {
    ScriptedModel::resumable([
        Turn::tool_calls([
            ("lookup", json!({"text": "balance"})),
            ("pay", json!({"text": "pay 100"})),
        ]),
        Turn::text("Done."),
    ])
}

/// A run waiting for approval of `pay`, and that call as listed.
pub(super) async fn waiting_run(store: &(impl RunStore + Clone)) -> (String, PendingApproval) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let error = agent(script(), log, Seen::default())
        .prompt("pay the bill")
        .run_id(format!("once-{}", uuid_like()))
        .durable(store.clone())
        .await
        .unwrap_err();
    let PromptError::Suspended { run } = error else {
        panic!("expected a suspension, got {error:?}");
    };
    let run_id = run.run_id().to_owned();
    let listing = store.pending_approvals().await.unwrap();
    let pending = listing
        .approvals
        .into_iter()
        .find(|p| p.run_id == run_id)
        .unwrap();
    (run_id, pending)
}

/// What the resumed run did: the tools it ran.
async fn resumed(store: &(impl RunStore + Clone), run_id: &str) -> Vec<String> {
    let log = Arc::new(Mutex::new(Vec::new()));
    agent(script(), log.clone(), Seen::default())
        .resume_stored(store.clone(), run_id)
        .await
        .unwrap();
    log.lock().unwrap().clone()
}

/// Alice approves; Bob's later denial does not overrule her silently: it is refused, saying
/// who decided what, nothing is recorded, and the run goes on with her approval. Alice's
/// approval sent again (a retried request) is answered with the one recorded.
async fn a_second_decision_is_refused_saying_how_the_call_was_decided(
    store: impl RunStore + Clone,
) {
    let (run_id, pending) = waiting_run(&store).await;
    let approval = Decision::new(&pending, ToolDecision::approve(), "alice");
    let recorded = store.decide(&run_id, &approval).await.unwrap();

    let denial = Decision::new(&pending, ToolDecision::deny("no"), "bob").because("too much");
    let refused = store.decide(&run_id, &denial).await.unwrap_err();
    let StoreError::AlreadyDecided(standing) = &refused else {
        panic!("expected the call already decided, got {refused:?}");
    };
    assert_eq!(
        (
            standing.run_id.as_str(),
            standing.internal_call_id.as_str(),
            standing.decided,
            standing.decided_by.as_str(),
            standing.decided_at_ms
        ),
        (
            run_id.as_str(),
            "t1c1",
            "approved",
            "alice",
            recorded.decided_at_ms
        )
    );
    assert_eq!(
        refused.to_string(),
        format!(
            "call `t1c1` of run `{run_id}` is already decided (approved, by alice): a decision \
             stands until the run resumes, unless a new one names it as the one it replaces \
             (Decision::replacing)"
        )
    );

    let again = store.decide(&run_id, &approval).await.unwrap();
    assert_eq!(
        again, recorded,
        "the same decision again is the one recorded"
    );
    assert_eq!(store.decisions(&run_id).await.unwrap(), vec![recorded]);
    assert_eq!(resumed(&store, &run_id).await, ["pay 100"]);
}
per_store!(a_second_decision_is_refused_saying_how_the_call_was_decided);

/// A decision that names the one it replaces (a person changing their mind, `--change`)
/// replaces it while it is still the call's decision; one naming a decision replaced since is
/// refused, naming the decision that stands.
async fn a_decision_naming_the_one_it_replaces_replaces_it(store: impl RunStore + Clone) {
    let (run_id, pending) = waiting_run(&store).await;
    let approval = Decision::new(&pending, ToolDecision::approve(), "alice");
    let first = store.decide(&run_id, &approval).await.unwrap();

    let denial = Decision::new(&pending, ToolDecision::deny("no"), "bob").replacing(&first);
    let second = store.decide(&run_id, &denial).await.unwrap();
    let late = Decision::new(&pending, ToolDecision::deny("later"), "carol").replacing(&first);
    let refused = store.decide(&run_id, &late).await.unwrap_err();
    assert!(
        matches!(&refused, StoreError::AlreadyDecided(standing)
            if standing.decided == "denied" && standing.decided_by == "bob"),
        "{refused:?}"
    );

    assert_eq!(
        store.decisions(&run_id).await.unwrap(),
        vec![first, second],
        "the trail keeps the replaced decision"
    );
    assert!(resumed(&store, &run_id).await.is_empty(), "bob's denial");
}
per_store!(a_decision_naming_the_one_it_replaces_replaces_it);

/// Two processes deciding the same call at once: one decision is recorded, the other is
/// refused, and the run goes on with the one recorded.
async fn of_two_decisions_at_once_one_is_refused(store: impl RunStore + Clone) {
    let (run_id, pending) = waiting_run(&store).await;
    let approval = Decision::new(&pending, ToolDecision::approve(), "alice");
    let denial = Decision::new(&pending, ToolDecision::deny("no"), "bob");
    let (approved, denied) = tokio::join!(
        store.decide(&run_id, &approval),
        store.decide(&run_id, &denial)
    );
    let recorded = match (approved, denied) {
        (Ok(recorded), Err(StoreError::AlreadyDecided(standing)))
            if standing.decided_by == "alice" =>
        {
            recorded
        }
        (Err(StoreError::AlreadyDecided(standing)), Ok(recorded))
            if standing.decided_by == "bob" =>
        {
            recorded
        }
        other => panic!("expected one decision recorded, one refused: {other:?}"),
    };
    assert_eq!(
        store.decisions(&run_id).await.unwrap(),
        vec![recorded.clone()]
    );
    let ran = resumed(&store, &run_id).await;
    match recorded.decision.decision {
        ToolDecision::Approve => assert_eq!(ran, ["pay 100"]),
        _ => assert!(ran.is_empty()),
    }
}
per_store!(of_two_decisions_at_once_one_is_refused, sqlite file);

/// A call that waits for approval never ran: skipping it or supplying its result (answers to a
/// call in doubt, which may have had its effect) is refused on every store, as the CLI and the
/// Restate backend refuse it, nothing recorded; approving it still goes through.
async fn a_call_waiting_for_approval_is_not_skipped_or_given_a_result(
    store: impl RunStore + Clone,
) {
    let (run_id, pending) = waiting_run(&store).await;
    assert!(!pending.in_doubt);
    for answer in [
        ToolDecision::skip("paid by hand"),
        ToolDecision::supply_result("paid 100"),
    ] {
        let refused = store
            .decide(&run_id, &Decision::new(&pending, answer, "alice"))
            .await
            .unwrap_err();
        assert_eq!(
            refused,
            StoreError::NotInDoubt {
                run_id: run_id.clone(),
                internal_call_id: "t1c1".to_owned(),
            }
        );
        assert_eq!(
            refused.to_string(),
            format!(
                "call `t1c1` of run `{run_id}` waits for approval and never started, so it \
                 had no effect: skip and supply_result answer only a call in doubt; approve, \
                 edit or deny this one"
            )
        );
    }
    assert!(store.decisions(&run_id).await.unwrap().is_empty());
    let approval = Decision::new(&pending, ToolDecision::approve(), "alice");
    store.decide(&run_id, &approval).await.unwrap();
    assert_eq!(resumed(&store, &run_id).await, ["pay 100"]);
}
per_store!(a_call_waiting_for_approval_is_not_skipped_or_given_a_result);
