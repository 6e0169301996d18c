//! What the SQL stores' snapshot tests share: a suspended run whose reads a test interrupts
//! with a write of another connection (the run deleted by hand), and what each read must say
//! then: the run as it was when the read began, never a mix of before and after.

use super::decision::binding_of;
use super::format::RUN_TABLES;
use super::{Decision, JournalEntry, RunStore, fork};
use crate::message::ToolCall;
use crate::run::{PendingCall, RunState, RunStatus, ToolDecision};

/// The run the tests read.
pub(crate) const RUN: &str = "r-two-calls";

/// The run [`fork_of_the_run`] forks from [`RUN`].
pub(crate) const FORK: &str = "r-forked";

/// Statements deleting [`RUN`] with everything kept about it, as another process would.
pub(crate) fn delete_statements() -> String {
    RUN_TABLES
        .iter()
        .map(|table| format!("DELETE FROM {table} WHERE run_id = '{RUN}';"))
        .collect()
}

/// Stores [`RUN`]: suspended with two calls waiting for a person, the first (`t1c0`) decided,
/// written twice (two checkpoints, the second journaling a model turn). Read whole, it waits
/// for `t1c1` only.
pub(crate) async fn run_with_one_call_decided(store: &impl RunStore) {
    let mut state = RunState::new(RUN.to_owned(), None, Vec::new());
    state.status = RunStatus::Suspended;
    for index in 0..2 {
        state.pending_calls.push(PendingCall {
            internal_call_id: format!("t1c{index}"),
            call: ToolCall {
                id: format!("call-{index}"),
                name: "pay".to_owned(),
                arguments: serde_json::json!({ "amount": index }),
            },
            result: None,
            suspended: Some("needs approval".to_owned()),
            started: None,
            in_doubt: false,
            starts: 0,
        });
    }
    let lease = store.create(&state, "worker").await.unwrap();
    let model_turn = JournalEntry {
        effect_id: format!("{RUN}/t1"),
        kind: "model_turn".to_owned(),
        payload: serde_json::json!({ "calls": 2 }),
    };
    store
        .checkpoint(&lease, &state, &[model_turn], true)
        .await
        .unwrap();
    let decision = Decision {
        internal_call_id: "t1c0".to_owned(),
        decision: ToolDecision::approve(),
        binding: binding_of(RUN, &state.pending_calls[0]),
        decided_by: "alice".to_owned(),
        reason: None,
        replaces: None,
    };
    store.decide(RUN, &decision).await.unwrap();
    assert_eq!(pending_calls(store).await, ["t1c1"]);
}

/// The calls [`RunStore::pending_approvals`] lists.
pub(crate) async fn pending_calls(store: &impl RunStore) -> Vec<String> {
    let listing = store.pending_approvals().await.unwrap();
    assert!(listing.unreadable.is_empty(), "{:?}", listing.unreadable);
    listing
        .approvals
        .into_iter()
        .map(|approval| approval.internal_call_id)
        .collect()
}

/// Forks [`RUN`]'s second checkpoint as [`FORK`] and returns the kinds of the fork's journal
/// entries: the parent's model turn and the fork's own entry, when the fork read the
/// checkpoint and the journal as they were together.
pub(crate) async fn fork_of_the_run(store: &impl RunStore) -> Vec<String> {
    let forked = fork(store, RUN, 2, FORK, |_| {}).await;
    assert!(forked.is_ok(), "{forked:?}");
    let journal = store.journal(FORK).await.unwrap();
    journal.into_iter().map(|entry| entry.kind).collect()
}
