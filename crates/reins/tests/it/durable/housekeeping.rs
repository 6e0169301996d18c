//! Listing runs by status a page at a time, deleting finished runs, expiring old ones, keeping
//! only a run's newest checkpoints.

use super::per_store::per_store;
use super::{RunStateBuilder, Seen, agent, decide, script, uuid_like};
use reins::agent::{PromptError, RunState, RunStatus, ToolDecision};
use reins::store::{MemoryStore, RunCursor, RunQuery, RunStore, SqliteStore, StoreError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[cfg(feature = "postgres")]
use super::postgres_store;

/// Stores a run that ends with `status`, released like a run that finished or paused.
async fn stored_run(store: &impl RunStore, run_id: &str, status: RunStatus) {
    let mut state: RunState = RunStateBuilder::suspended_example();
    state.run_id = run_id.to_owned();
    let lease = store.create(&state, "w").await.unwrap();
    state.status = status;
    store.checkpoint(&lease, &state, &[], true).await.unwrap();
}

/// Every id of every page of `query`, page by page.
async fn pages(store: &impl RunStore, query: RunQuery) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut query = query;
    loop {
        let page = store.list_runs(&query).await.unwrap();
        pages.push(page.runs.iter().map(|run| run.run_id.clone()).collect());
        match page.next {
            Some(next) => query = query.after(next),
            None => return pages,
        }
    }
}

async fn housekeeping(store: impl RunStore) {
    // Ids out of order, and a capital letter: pages follow the ids' bytes in every store.
    for (run_id, status) in [
        ("r5", RunStatus::Completed),
        ("r1", RunStatus::Suspended),
        ("r3", RunStatus::Completed),
        ("R9", RunStatus::Failed),
        ("r2", RunStatus::Suspended),
        ("r4", RunStatus::Running),
    ] {
        stored_run(&store, run_id, status).await;
    }

    let all = pages(&store, RunQuery::new().page_size(2)).await;
    assert_eq!(all, [["R9", "r1"], ["r2", "r3"], ["r4", "r5"]]);
    let suspended = pages(
        &store,
        RunQuery::new().status(RunStatus::Suspended).page_size(1),
    )
    .await;
    assert_eq!(suspended, [["r1"], ["r2"]]);
    let page = store
        .list_runs(&RunQuery::new().status(RunStatus::Completed))
        .await
        .unwrap();
    assert_eq!(page.next, None);
    assert_eq!(page.runs.len(), 2);
    assert!(
        page.runs
            .iter()
            .all(|run| run.status == RunStatus::Completed)
    );
    // A cursor kept as text works the same.
    let resumed = store
        .list_runs(&RunQuery::new().after(RunCursor::new("r3")))
        .await
        .unwrap();
    let ids: Vec<_> = resumed.runs.iter().map(|run| run.run_id.as_str()).collect();
    assert_eq!(ids, ["r4", "r5"]);

    // Only a finished run can be deleted; a refused delete deletes nothing.
    for (run_id, status) in [("r1", RunStatus::Suspended), ("r4", RunStatus::Running)] {
        let refused = store.delete(run_id).await.unwrap_err();
        assert_eq!(
            refused,
            StoreError::NotFinished {
                run_id: run_id.to_owned(),
                status
            }
        );
        assert_eq!(store.load(run_id).await.unwrap().status, status);
    }
    assert_eq!(
        store.delete("nope").await.unwrap_err(),
        StoreError::NotFound("nope".to_owned())
    );
    store.delete("r3").await.unwrap();
    for gone in [
        store.load("r3").await.unwrap_err(),
        store.checkpoints("r3").await.unwrap_err(),
        store.decisions("r3").await.unwrap_err(),
    ] {
        assert_eq!(gone, StoreError::NotFound("r3".to_owned()));
    }
    assert!(matches!(
        store.load_checkpoint("r3", 1).await.unwrap_err(),
        StoreError::NoSuchCheckpoint { .. }
    ));
    // The id is free again: nothing of the old run is left to mix with a new one.
    stored_run(&store, "r3", RunStatus::Suspended).await;
    assert_eq!(store.checkpoints("r3").await.unwrap().len(), 2);

    // Runs finished an hour ago: none yet. Finished now or before: r5 and R9, not the others.
    assert_eq!(store.expire(Duration::from_secs(3600)).await.unwrap(), 0);
    assert_eq!(store.expire(Duration::ZERO).await.unwrap(), 2);
    let left: Vec<_> = pages(&store, RunQuery::new()).await.concat();
    assert_eq!(left, ["r1", "r2", "r3", "r4"]);
    assert_eq!(store.expire(Duration::ZERO).await.unwrap(), 0);
}

/// Deleting a run deletes its journal and decisions too: a run stored again under its id
/// starts clean.
async fn delete_takes_everything(store: impl RunStore + Clone) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = script();
    let error = agent(model.clone(), log.clone(), Seen::default())
        .prompt("pay the bill")
        .durable(store.clone())
        .await
        .unwrap_err();
    let PromptError::Suspended { run } = error else {
        panic!("expected a suspension, got {error:?}");
    };
    let run_id = run.run_id().to_string();
    decide(&store, &run_id, "t1c1", ToolDecision::approve())
        .await
        .unwrap();
    agent(model, log, Seen::default())
        .resume_stored(store.clone(), &run_id)
        .await
        .unwrap();
    let finished = store.load(&run_id).await.unwrap();
    assert!(!store.journal(&run_id).await.unwrap().is_empty());
    assert_eq!(store.decisions(&run_id).await.unwrap().len(), 1);

    store.delete(&run_id).await.unwrap();
    let mut again = finished;
    again.status = RunStatus::Running;
    store.create(&again, "w").await.unwrap();
    assert_eq!(store.journal(&run_id).await.unwrap(), []);
    assert_eq!(store.decisions(&run_id).await.unwrap(), []);
    assert_eq!(store.checkpoints(&run_id).await.unwrap().len(), 1);
}

per_store!(housekeeping, sqlite file);
per_store!(delete_takes_everything);

/// Writes a run of six checkpoints (its creation, then five more) to `store`; returns the
/// versions `store` keeps of it, oldest first, and the run's last version.
async fn six_checkpoints(store: &impl RunStore, run_id: &str) -> (Vec<i64>, i64) {
    let mut state: RunState = RunStateBuilder::suspended_example();
    state.run_id = run_id.to_owned();
    let mut lease = store.create(&state, "w").await.unwrap();
    for turn in 1..=5 {
        state.turn = turn;
        lease = store.checkpoint(&lease, &state, &[], false).await.unwrap();
    }
    let checkpoints = store.checkpoints(run_id).await.unwrap();
    (
        checkpoints.iter().map(|c| c.version).collect(),
        lease.version,
    )
}

/// A store told to keep two checkpoints a run keeps the newest two, and the run's state with
/// them; the same store without the setting keeps every one.
async fn only_the_newest_checkpoints_are_kept(every: impl RunStore, two: impl RunStore) {
    let (versions, _) = six_checkpoints(&every, &format!("every-{}", uuid_like())).await;
    assert_eq!(versions.len(), 6, "{versions:?}");
    let run_id = format!("two-{}", uuid_like());
    let (versions, last) = six_checkpoints(&two, &run_id).await;
    assert_eq!(versions, [last - 1, last]);
    assert!(two.load_checkpoint(&run_id, last - 2).await.is_err());
    assert_eq!(two.load_checkpoint(&run_id, last).await.unwrap().turn, 5);
    assert_eq!(two.load(&run_id).await.unwrap().turn, 5);
}

#[tokio::test]
async fn only_the_newest_checkpoints_are_kept_in_memory() {
    only_the_newest_checkpoints_are_kept(
        MemoryStore::new(),
        MemoryStore::new().keep_checkpoints(2),
    )
    .await;
}

#[tokio::test]
async fn only_the_newest_checkpoints_are_kept_in_sqlite() {
    let every = SqliteStore::in_memory().unwrap();
    let two = SqliteStore::in_memory().unwrap().keep_checkpoints(2);
    only_the_newest_checkpoints_are_kept(every, two).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn only_the_newest_checkpoints_are_kept_in_postgres() {
    let two = postgres_store().await.keep_checkpoints(2);
    only_the_newest_checkpoints_are_kept(postgres_store().await, two).await;
}
