//! Time travel: a run's checkpoints, and forks from them that keep what the checkpoint holds
//! (no model turn or tool call repeated) and leave the parent intact.

use super::faulty_store::{Fault, FaultyStore};
use super::per_store::per_store;
use super::{RunStateBuilder, Seen, agent, decide, uuid_like};
use reins::agent::*;
use reins::store::{JournalEntry, RunStore, StoreError, fork};
use reins::testing::{ScriptedModel, Turn};
use serde_json::json;
use std::sync::{Arc, Mutex};

fn script() -> ScriptedModel {
    ScriptedModel::resumable([
        Turn::tool_calls([
            ("lookup", json!({"text": "balance"})),
            ("pay", json!({"text": "pay 100"})),
        ]),
        Turn::text("Paid."),
    ])
}

async fn fork_from_a_checkpoint(store: impl RunStore + Clone) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let run_id = format!("parent-{}", uuid_like());
    let suspended = agent(script(), log.clone(), Seen::default())
        .prompt("pay the bill")
        .run_id(run_id.clone())
        .durable(store.clone())
        .await
        .unwrap_err();
    assert!(matches!(suspended, PromptError::Suspended { .. }));
    decide(&store, &run_id, "t1c1", ToolDecision::approve())
        .await
        .unwrap();
    let answer = agent(script(), log.clone(), Seen::default())
        .resume_stored(store.clone(), &run_id)
        .await
        .unwrap();
    assert_eq!(answer, "Paid.");
    assert_eq!(*log.lock().unwrap(), vec!["balance", "pay 100"]);

    // The checkpoints tell the run's story, oldest first.
    let checkpoints = store.checkpoints(&run_id).await.unwrap();
    assert!(checkpoints.windows(2).all(|w| w[0].version < w[1].version));
    assert!(
        checkpoints
            .windows(2)
            .all(|w| w[0].journal_len <= w[1].journal_len)
    );
    assert_eq!(checkpoints.first().unwrap().status, RunStatus::Running);
    assert_eq!(checkpoints.last().unwrap().status, RunStatus::Completed);
    let at_suspension = checkpoints
        .iter()
        .find(|c| c.status == RunStatus::Suspended)
        .expect("a checkpoint of the suspension")
        .clone();
    let state = store
        .load_checkpoint(&run_id, at_suspension.version)
        .await
        .unwrap();
    assert_eq!(state.status, RunStatus::Suspended);
    assert!(
        state.pending_calls[0].result.is_some(),
        "the lookup is done"
    );
    assert!(state.pending_calls[1].awaits_decision());

    let parent_before = store.load(&run_id).await.unwrap();
    let parent_journal = store.journal(&run_id).await.unwrap();

    // Fork at the suspension, paying 50 instead.
    let fork_id = format!("fork-{}", uuid_like());
    let forked = fork(&store, &run_id, at_suspension.version, &fork_id, |state| {
        state.pending_calls[1].call.arguments = json!({"text": "pay 50"});
    })
    .await
    .unwrap();
    assert_eq!(forked.run_id, fork_id);
    assert_eq!(forked.status, RunStatus::Suspended);
    assert_eq!(store.load(&run_id).await.unwrap(), parent_before);
    assert_eq!(store.journal(&run_id).await.unwrap(), parent_journal);

    let fork_journal = store.journal(&fork_id).await.unwrap();
    assert_eq!(
        fork_journal[..at_suspension.journal_len],
        parent_journal[..at_suspension.journal_len],
        "the fork reuses the parent's journal up to the checkpoint"
    );
    assert_eq!(fork_journal[at_suspension.journal_len].kind, "forked_from");

    // The fork waits for its own decision, about the edited call.
    let listing = store.pending_approvals().await.unwrap();
    let waiting = listing.approvals.iter().find(|p| p.run_id == fork_id);
    assert_eq!(waiting.unwrap().arguments, json!({"text": "pay 50"}));
    decide(&store, &fork_id, "t1c1", ToolDecision::approve())
        .await
        .unwrap();
    let answer = agent(script(), log.clone(), Seen::default())
        .resume_stored(store.clone(), &fork_id)
        .await
        .unwrap();
    assert_eq!(answer, "Paid.");
    assert_eq!(
        *log.lock().unwrap(),
        vec!["balance", "pay 100", "pay 50"],
        "the fork did not look up the balance again"
    );
    assert_eq!(store.load(&run_id).await.unwrap(), parent_before);

    // A fork from the first checkpoint holds the prompt alone: it is a run to continue.
    let first = checkpoints.first().unwrap().version;
    let again_id = format!("again-{}", uuid_like());
    fork(&store, &run_id, first, &again_id, |_| {})
        .await
        .unwrap();
    assert_eq!(
        store.load(&again_id).await.unwrap().status,
        RunStatus::Running
    );

    let missing = fork(&store, &run_id, 9999, "nowhere", |_| {}).await;
    assert!(
        matches!(
            missing,
            Err(StoreError::NoSuchCheckpoint { version: 9999, .. })
        ),
        "{missing:?}"
    );
    assert!(matches!(
        store.load("nowhere").await,
        Err(StoreError::NotFound(_))
    ));
}

per_store!(fork_from_a_checkpoint, sqlite file);

/// A fork is one write: a store whose write after the fork's first one fails cannot leave the
/// fork behind leased (nobody could resume it until the lease ran out) and without its
/// journal. Here every write but the first fails: the fork is stored whole, leased to nobody.
async fn a_fork_is_stored_in_one_write(store: impl RunStore + Clone) {
    let parent = RunStateBuilder::suspended_example();
    let lease = store.create(&parent, "worker").await.unwrap();
    let turn = JournalEntry {
        effect_id: "r-lease/t1".to_owned(),
        kind: "model_turn".to_owned(),
        payload: json!("hello"),
    };
    let lease = store
        .checkpoint(&lease, &parent, &[turn], true)
        .await
        .unwrap();
    let failing = FaultyStore::over(store.clone(), Fault::FailCheckpoint(1));

    fork(&failing, "r-lease", lease.version, "r-fork", |_| {})
        .await
        .unwrap();
    let listed = store.list().await.unwrap();
    let forked = listed.iter().find(|run| run.run_id == "r-fork").unwrap();
    assert_eq!(forked.lease, None, "nobody holds the fork: {forked:?}");
    let kinds: Vec<String> = store
        .journal("r-fork")
        .await
        .unwrap()
        .into_iter()
        .map(|entry| entry.kind)
        .collect();
    assert_eq!(kinds, ["model_turn", "forked_from"]);
    let checkpoints = store.checkpoints("r-fork").await.unwrap();
    assert_eq!(
        checkpoints.last().unwrap().journal_len,
        2,
        "{checkpoints:?}"
    );
    store.claim("r-fork", "another").await.unwrap();
}

per_store!(a_fork_is_stored_in_one_write);
