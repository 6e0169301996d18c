//! Records that outlive releases: a suspended run stored by the release before in-doubt
//! calls, bound decisions and checkpoints (format 1, `fixtures/suspended_run_format_1.json`,
//! as that release wrote it) is listed, decided and resumed by this one on every store.

use super::{Seen, agent, decide, uuid_like};
use reins::agent::*;
use reins::store::{MemoryStore, RunStore, SqliteStore, call_binding};
use reins::testing::{ScriptedModel, Turn};
use serde_json::json;
use std::future::Future;
use std::sync::{Arc, Mutex};

#[cfg(feature = "postgres")]
use super::{postgres_client, postgres_database};

/// The stored record.
const FIXTURE: &str = include_str!("fixtures/suspended_run_format_1.json");
const RUN_ID: &str = "fixture-format-1";

/// The insert of the record as the previous release's stores wrote it (parameters: run id,
/// state).
const INSERT: &str = "INSERT INTO reins_runs (run_id, version, format, status, state, lease_owner, lease_token, lease_until, updated_at)
     VALUES ($1, 3, 1, 'suspended', $2, NULL, NULL, 0, 0)";

async fn a_format_1_record_is_resumed<F, Fut>(store: impl RunStore + Clone, insert: F)
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = ()>,
{
    insert().await;
    let listing = store.pending_approvals().await.unwrap();
    assert!(listing.unreadable.is_empty(), "{:?}", listing.unreadable);
    assert_eq!(listing.approvals.len(), 1);
    let pending = &listing.approvals[0];
    assert_eq!(pending.internal_call_id, "t1c1");
    assert_eq!(pending.arguments, json!({"text": "pay 100"}));
    assert!(!pending.in_doubt);
    assert_eq!(
        pending.binding,
        call_binding(RUN_ID, "t1c1", "pay", &json!({"text": "pay 100"}))
    );

    decide(&store, RUN_ID, "t1c1", ToolDecision::approve())
        .await
        .unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::resumable([
        Turn::tool_calls([
            ("lookup", json!({"text": "balance"})),
            ("pay", json!({"text": "pay 100"})),
        ]),
        Turn::text("Paid 100."),
    ]);
    let answer = agent(model, log.clone(), Seen::default())
        .resume_stored(store.clone(), RUN_ID)
        .await
        .unwrap();
    assert_eq!(answer, "Paid 100.");
    assert_eq!(*log.lock().unwrap(), vec!["pay 100"], "the lookup was done");
    let finished = store.load(RUN_ID).await.unwrap();
    assert_eq!(finished.status, RunStatus::Completed);
    assert!(!store.checkpoints(RUN_ID).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_format_1_record_is_resumed_in_memory() {
    let store = MemoryStore::new();
    let raw = store.clone();
    a_format_1_record_is_resumed(store, || async move {
        raw.put_raw(RUN_ID, 1, FIXTURE);
    })
    .await;
}

#[tokio::test]
async fn a_format_1_record_is_resumed_in_sqlite() {
    let path = std::env::temp_dir().join(format!("reins-format-1-{}.sqlite", uuid_like()));
    let store = SqliteStore::open(&path).unwrap();
    let file = path.clone();
    a_format_1_record_is_resumed(store, || async move {
        rusqlite::Connection::open(&file)
            .unwrap()
            .execute(
                &INSERT.replace("$1", "?1").replace("$2", "?2"),
                [RUN_ID, FIXTURE],
            )
            .unwrap();
    })
    .await;
    let _ = std::fs::remove_file(&path);
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_format_1_record_is_resumed_in_postgres() {
    let url = postgres_database().await;
    let store = reins::store::PostgresStore::connect(&url).await.unwrap();
    a_format_1_record_is_resumed(store, || async move {
        postgres_client(&url)
            .await
            .execute(INSERT, &[&RUN_ID, &FIXTURE])
            .await
            .unwrap();
    })
    .await;
}
