//! Reads made of several statements see the file as it was when they began: another
//! connection deletes the run just as the read prepares its second statement (SQLite's
//! authorizer, called as a statement is prepared, is where the test's write goes in).

use super::SqliteStore;
use crate::store::RunStore;
use crate::store::interleaved::{
    RUN, delete_statements, fork_of_the_run, pending_calls, run_with_one_call_decided,
};
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use std::sync::{Mutex, PoisonError};

/// A store in a file holding [`RUN`], and the directory holding the file.
async fn store_with_run() -> (SqliteStore, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("runs.sqlite")).unwrap();
    run_with_one_call_decided(&store).await;
    (store, dir)
}

/// Has another connection delete [`RUN`] (and commit) the first time the store's connection
/// prepares a statement reading `table`.
fn delete_the_run_on_reading(store: &SqliteStore, table: &'static str) {
    let other = Mutex::new(Some(rusqlite::Connection::open(store.path()).unwrap()));
    let connection = store
        .connection
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    connection.authorizer(Some(move |context: AuthContext<'_>| {
        if matches!(context.action, AuthAction::Read { table_name, .. } if table_name == table)
            && let Some(other) = other.lock().unwrap_or_else(PoisonError::into_inner).take()
        {
            other
                .execute_batch(&format!("BEGIN; {} COMMIT;", delete_statements()))
                .unwrap();
        }
        Authorization::Allow
    }));
}

#[tokio::test]
async fn a_runs_decisions_are_read_with_the_run() {
    let (store, _dir) = store_with_run().await;
    delete_the_run_on_reading(&store, "reins_decision_log");
    let decisions = store.decisions(RUN).await.unwrap();
    let calls: Vec<&str> = decisions
        .iter()
        .map(|recorded| recorded.decision.internal_call_id.as_str())
        .collect();
    assert_eq!(calls, ["t1c0"], "found, so with the decision it had");
    assert!(store.load(RUN).await.is_err(), "deleted since");
}

#[tokio::test]
async fn a_runs_checkpoints_are_read_with_the_run() {
    let (store, _dir) = store_with_run().await;
    delete_the_run_on_reading(&store, "reins_checkpoints");
    let checkpoints = store.checkpoints(RUN).await.unwrap();
    assert_eq!(checkpoints.len(), 2, "found, so with its checkpoints");
}

#[tokio::test]
async fn pending_approvals_read_each_run_with_its_decisions() {
    let (store, _dir) = store_with_run().await;
    delete_the_run_on_reading(&store, "reins_decisions");
    assert_eq!(
        pending_calls(&store).await,
        ["t1c1"],
        "t1c0 was decided when the run was read"
    );
    assert!(pending_calls(&store).await.is_empty(), "deleted since");
}

#[tokio::test]
async fn a_fork_reads_the_checkpoint_and_the_journal_as_they_were_together() {
    // The run deleted as the fork reads the checkpoint, and as it reads the journal.
    for table in ["reins_checkpoints", "reins_journal"] {
        let (store, _dir) = store_with_run().await;
        delete_the_run_on_reading(&store, table);
        assert_eq!(
            fork_of_the_run(&store).await,
            ["model_turn", "forked_from"],
            "deleted on reading {table}"
        );
        assert!(store.load(RUN).await.is_err(), "deleted since");
    }
}
