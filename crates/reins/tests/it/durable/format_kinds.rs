//! Format-1 records of the other kinds a store holds, written by this release's code and kept
//! as it stored them, read by every store: a run whose worker died between a call's side
//! effect and its result (`fixtures/in_doubt_run_format_1.json`: the call's start is
//! checkpointed, its result is not) and a completed run
//! (`fixtures/completed_run_format_1.json`). The call in doubt is reported, decided each way
//! a person may decide it, and the run finishes; the completed run's answer is read back, and
//! resuming it is refused without a write.

use super::format::StoredRecord;
use super::{Seen, agent, decide, version_of};
use crate::common::echo_tool;
use reins::agent::*;
use reins::message::Message;
use reins::store::RunStore;
use reins::testing::{ScriptedModel, Turn};
use serde_json::json;
use std::future::Future;
use std::sync::{Arc, Mutex};

/// A run of one `charge` call (`{"text": "100"}`, no retry declaration) whose worker died
/// after the charge and before its result was checkpointed: left `running`, its lease long
/// expired.
pub(super) const IN_DOUBT: StoredRecord = StoredRecord {
    run_id: "fixture-in-doubt-format-1",
    status: "running",
    state: include_str!("fixtures/in_doubt_run_format_1.json"),
};

/// A run that looked up the balance and answered.
pub(super) const COMPLETED: StoredRecord = StoredRecord {
    run_id: "fixture-completed-format-1",
    status: "completed",
    state: include_str!("fixtures/completed_run_format_1.json"),
};

/// What the completed run answered.
const COMPLETED_ANSWER: &str = "The balance is 3.";

/// The agent the in-doubt run belongs to, in a fresh process: `charge` records each execution
/// in `charges`.
fn charge_agent(charges: Arc<Mutex<Vec<String>>>) -> Agent {
    let model = ScriptedModel::resumable([
        Turn::tool_call("charge", json!({"text": "100"})),
        Turn::text("Charged."),
    ]);
    AgentBuilder::new(model)
        .tool(echo_tool("charge", charges))
        .build()
}

/// The in-doubt record, in a fresh store from `fresh` for each decision: resuming it runs
/// nothing and suspends with the call in doubt, listed for a person; once decided, the run
/// finishes with what the decision says the charge returned.
async fn a_format_1_call_in_doubt_is_decided<S, F, Fut>(fresh: F)
where
    S: RunStore + Clone,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    for (decision, executions, result) in [
        (ToolDecision::rerun(), vec!["100"], "100"),
        (
            ToolDecision::skip("not charged again"),
            vec![],
            "not charged again",
        ),
        (
            ToolDecision::supply_result("charged 100 (checked with the bank)"),
            vec![],
            "charged 100 (checked with the bank)",
        ),
    ] {
        let store = fresh().await;
        let charges = Arc::new(Mutex::new(Vec::new()));
        let agent = charge_agent(charges.clone());

        let error = agent
            .resume_stored(store.clone(), IN_DOUBT.run_id)
            .await
            .unwrap_err();
        let PromptError::Suspended { run } = error else {
            panic!("expected the run to wait for a decision, got {error:?}");
        };
        let waiting: Vec<&PendingCall> = run.pending().collect();
        assert_eq!(waiting.len(), 1);
        assert!(waiting[0].is_in_doubt());
        assert!(charges.lock().unwrap().is_empty(), "the charge ran again");

        let listing = store.pending_approvals().await.unwrap();
        assert!(listing.unreadable.is_empty(), "{:?}", listing.unreadable);
        let [pending] = listing.approvals.as_slice() else {
            panic!("expected one call waiting, got {:?}", listing.approvals);
        };
        assert_eq!(pending.run_id, IN_DOUBT.run_id);
        assert!(pending.in_doubt);
        assert_eq!(pending.tool_name, "charge");
        assert_eq!(pending.arguments, json!({"text": "100"}));
        assert!(pending.reason.starts_with("in doubt"), "{}", pending.reason);

        decide(&store, IN_DOUBT.run_id, &pending.internal_call_id, decision)
            .await
            .unwrap();
        let answer = agent
            .resume_stored(store.clone(), IN_DOUBT.run_id)
            .await
            .unwrap();
        assert_eq!(answer, "Charged.");
        assert_eq!(*charges.lock().unwrap(), executions);
        let finished = store.load(IN_DOUBT.run_id).await.unwrap();
        assert_eq!(finished.status, RunStatus::Completed);
        let results: Vec<String> = finished
            .history
            .iter()
            .filter(|message| matches!(message, Message::Tool(_)))
            .map(Message::text)
            .collect();
        assert_eq!(results, [result]);
    }
}

/// The completed record: read back with its answer, listed as completed, and a resume of it
/// refused as already finished, running nothing and writing nothing.
async fn a_format_1_completed_run_is_read_and_left_alone(store: impl RunStore + Clone) {
    let stored = store.load(COMPLETED.run_id).await.unwrap();
    assert_eq!(stored.status, RunStatus::Completed);
    assert_eq!(
        stored.history.last().map(Message::text).as_deref(),
        Some(COMPLETED_ANSWER)
    );
    let runs = store.list().await.unwrap();
    let [summary] = runs.as_slice() else {
        panic!("expected one run, got {runs:?}");
    };
    assert_eq!(
        (summary.run_id.as_str(), summary.status),
        (COMPLETED.run_id, RunStatus::Completed)
    );
    let version = version_of(&store, COMPLETED.run_id).await;
    let journal = store.journal(COMPLETED.run_id).await.unwrap();

    let log = Arc::new(Mutex::new(Vec::new()));
    let error = agent(ScriptedModel::new([]), log.clone(), Seen::default())
        .resume_stored(store.clone(), COMPLETED.run_id)
        .await
        .unwrap_err();
    match &error {
        PromptError::AlreadyFinished {
            run_id,
            status,
            answer,
            history,
        } => {
            assert_eq!(run_id, COMPLETED.run_id);
            assert_eq!(*status, RunStatus::Completed);
            assert_eq!(answer.as_deref(), Some(COMPLETED_ANSWER));
            assert_eq!(*history, stored.history);
        }
        other => panic!("expected AlreadyFinished, got {other:?}"),
    }
    assert!(log.lock().unwrap().is_empty(), "a tool ran");
    assert_eq!(version_of(&store, COMPLETED.run_id).await, version);
    assert_eq!(store.journal(COMPLETED.run_id).await.unwrap(), journal);
    assert_eq!(store.load(COMPLETED.run_id).await.unwrap(), stored);
}

#[tokio::test]
async fn a_format_1_call_in_doubt_is_decided_in_memory() {
    a_format_1_call_in_doubt_is_decided(|| async { IN_DOUBT.in_memory() }).await;
}

#[tokio::test]
async fn a_format_1_call_in_doubt_is_decided_in_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    a_format_1_call_in_doubt_is_decided(|| async { IN_DOUBT.in_sqlite(dir.path()) }).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_format_1_call_in_doubt_is_decided_in_postgres() {
    a_format_1_call_in_doubt_is_decided(|| IN_DOUBT.in_postgres()).await;
}

#[tokio::test]
async fn a_format_1_completed_run_is_read_and_left_alone_in_memory() {
    a_format_1_completed_run_is_read_and_left_alone(COMPLETED.in_memory()).await;
}

#[tokio::test]
async fn a_format_1_completed_run_is_read_and_left_alone_in_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    a_format_1_completed_run_is_read_and_left_alone(COMPLETED.in_sqlite(dir.path())).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_format_1_completed_run_is_read_and_left_alone_in_postgres() {
    a_format_1_completed_run_is_read_and_left_alone(COMPLETED.in_postgres().await).await;
}
