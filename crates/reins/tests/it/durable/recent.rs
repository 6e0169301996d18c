//! The runs written last ([`RunStore::recent_runs`]), as every store lists them: the most
//! recently written first, runs written in the same millisecond by id (the last first), at
//! most as many as asked for, of one status if asked.

use super::RunStateBuilder;
use super::listed::after;
use super::per_store::per_store;
use reins::agent::{RunState, RunStatus};
use reins::store::{BoxedStore, MemoryStore, RunStore, SqliteStore};

#[cfg(feature = "postgres")]
use super::{postgres_client, postgres_database};

/// Stores a run that ends with `status`, released like a run that finished or paused, and
/// returns when it was last written.
async fn stored_run(store: &impl RunStore, run_id: &str, status: RunStatus) -> i64 {
    let mut state: RunState = RunStateBuilder::suspended_example();
    state.run_id = run_id.to_owned();
    let lease = store.create(&state, "w").await.unwrap();
    state.status = status;
    store.checkpoint(&lease, &state, &[], true).await.unwrap();
    let recent = store.recent_runs(None, 1).await.unwrap();
    assert_eq!(recent.runs[0].run_id, run_id, "the run written last");
    recent.runs[0].updated_at_ms
}

/// The ids `recent_runs(status, limit)` lists, in its order.
async fn recent_ids(store: &impl RunStore, status: Option<RunStatus>, limit: usize) -> Vec<String> {
    let recent = store.recent_runs(status, limit).await.unwrap();
    assert!(recent.unreadable.is_empty(), "{recent:?}");
    recent.runs.into_iter().map(|run| run.run_id).collect()
}

async fn the_runs_written_last_come_first(store: impl RunStore) {
    assert!(
        recent_ids(&store, None, 10).await.is_empty(),
        "an empty store"
    );
    assert!(
        recent_ids(&store, Some(RunStatus::Suspended), 10)
            .await
            .is_empty()
    );

    // Written in an order that is not the ids' order, each in a millisecond of its own.
    let mut written = 0;
    for (run_id, status) in [
        ("r3", RunStatus::Completed),
        ("r1", RunStatus::Suspended),
        ("r4", RunStatus::Failed),
        ("r2", RunStatus::Suspended),
        ("r0", RunStatus::Completed),
    ] {
        after(written).await;
        written = stored_run(&store, run_id, status).await;
    }
    assert_eq!(
        recent_ids(&store, None, 10).await,
        ["r0", "r2", "r4", "r1", "r3"]
    );
    assert_eq!(recent_ids(&store, None, 2).await, ["r0", "r2"]);
    assert!(recent_ids(&store, None, 0).await.is_empty());
    assert_eq!(
        recent_ids(&store, Some(RunStatus::Suspended), 10).await,
        ["r2", "r1"]
    );
    assert_eq!(
        recent_ids(&store, Some(RunStatus::Suspended), 1).await,
        ["r2"]
    );
    assert_eq!(
        recent_ids(&store, Some(RunStatus::Completed), 10).await,
        ["r0", "r3"]
    );
    assert!(
        recent_ids(&store, Some(RunStatus::Running), 10)
            .await
            .is_empty()
    );

    // A run written again (a claim to resume it) moves to the front.
    after(written).await;
    store.claim("r3", "w").await.unwrap_err(); // finished: refused, nothing written
    store.claim("r1", "w").await.unwrap();
    assert_eq!(recent_ids(&store, None, 2).await, ["r1", "r0"]);

    // The summaries are those the listing gives.
    let recent = store.recent_runs(None, 10).await.unwrap();
    let mut listed = store.list().await.unwrap();
    listed.sort_by(|a, b| (b.updated_at_ms, &b.run_id).cmp(&(a.updated_at_ms, &a.run_id)));
    assert_eq!(
        recent
            .runs
            .iter()
            .map(|run| &run.run_id)
            .collect::<Vec<_>>(),
        listed.iter().map(|run| &run.run_id).collect::<Vec<_>>()
    );
    for (recent, listed) in recent.runs.iter().zip(&listed) {
        assert_eq!(
            (recent.status, recent.version, recent.created_at_ms),
            (listed.status, listed.version, listed.created_at_ms)
        );
        assert_eq!(
            recent.lease.as_ref().map(|l| &l.owner),
            listed.lease.as_ref().map(|l| &l.owner)
        );
    }

    // The same through a box, as a program that picks its store at run time holds it.
    let boxed = BoxedStore::new(store);
    assert_eq!(recent_ids(&boxed, None, 2).await, ["r1", "r0"]);
}

per_store!(the_runs_written_last_come_first);

/// Runs stored by [`stored_run`], in this order, then given one time of last write (as
/// `written_together` sets it) except `newer`: the runs written together list by id, the last
/// first, after the run written later.
const TOGETHER: [&str; 3] = ["t-b", "t-c", "t-a"];

async fn ties_list_by_id<S: RunStore>(store: S, written_together: impl AsyncFnOnce(&S, &[&str])) {
    let mut written = 0;
    for run_id in TOGETHER.iter().chain(&["newer"]) {
        after(written).await;
        written = stored_run(&store, run_id, RunStatus::Completed).await;
    }
    written_together(&store, &TOGETHER).await;
    assert_eq!(
        recent_ids(&store, None, 10).await,
        ["newer", "t-c", "t-b", "t-a"]
    );
    assert_eq!(recent_ids(&store, None, 2).await, ["newer", "t-c"]);
    assert_eq!(
        recent_ids(&store, Some(RunStatus::Completed), 3).await,
        ["newer", "t-c", "t-b"]
    );
}

/// The time of last write [`ties_list_by_id`] gives the runs written together: long ago.
const TOGETHER_MS: i64 = 1_000;

#[tokio::test]
async fn ties_list_by_id_in_memory() {
    ties_list_by_id(MemoryStore::new(), async |store, runs| {
        for run_id in runs {
            store.put_raw_updated_at(run_id, TOGETHER_MS);
        }
    })
    .await;
}

#[tokio::test]
async fn ties_list_by_id_in_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    ties_list_by_id(store, async |_, runs| {
        let connection = rusqlite::Connection::open(&path).unwrap();
        for run_id in runs {
            connection
                .execute(
                    "UPDATE reins_runs SET updated_at = ?1 WHERE run_id = ?2",
                    rusqlite::params![TOGETHER_MS, run_id],
                )
                .unwrap();
        }
    })
    .await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn ties_list_by_id_in_postgres() {
    let url = postgres_database().await;
    let store = reins::store::PostgresStore::connect(&url).await.unwrap();
    ties_list_by_id(store, async |_, runs| {
        let client = postgres_client(&url).await;
        for run_id in runs {
            client
                .execute(
                    "UPDATE reins_runs SET updated_at = $1 WHERE run_id = $2",
                    &[&TOGETHER_MS, run_id],
                )
                .await
                .unwrap();
        }
    })
    .await;
}
