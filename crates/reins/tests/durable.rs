//! Durable runs on every store: pause for a decision, resume by id, race, journal, bad records.

mod common;

use common::echo_tool;
use reins::agent::*;
use reins::store::{MemoryStore, RunStore, SqliteStore, StoreError};
use reins::testing::{ScriptedModel, Turn};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

struct NeedsApproval;
impl AgentHook for NeedsApproval {
    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if event.tool_name() == Some("pay") {
            ctx.append_entry("asked", &event.tool_args()).unwrap();
            DispatchAction::suspend("a person must approve payments")
        } else {
            DispatchAction::proceed()
        }
    }
}

#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<usize>>>);
impl AgentHook for Seen {
    async fn on_outcome(&self, ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if event.tool_outcome().is_some() {
            let asked: Vec<Option<String>> = ctx.entries("asked").unwrap();
            self.0.lock().unwrap().push(asked.len());
        }
        OutcomeAction::proceed()
    }
}

fn agent(model: ScriptedModel, log: Arc<Mutex<Vec<String>>>, seen: Seen) -> Agent {
    AgentBuilder::new(model)
        .tool(echo_tool("lookup", log.clone()))
        .tool(echo_tool("pay", log))
        .add_hook(NeedsApproval)
        .add_hook(seen)
        .build()
}

fn script() -> ScriptedModel {
    ScriptedModel::new([
        Turn::tool_calls([
            ("lookup", json!({"text": "balance"})),
            ("pay", json!({"text": "pay 100"})),
        ]),
        Turn::text("Paid 100."),
    ])
}

async fn approval_round_trip(store: impl RunStore + Clone) {
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

    // Another process would see this in the store.
    let stored = store.load(&run_id).await.unwrap();
    assert_eq!(stored.status, RunStatus::Suspended);
    assert_eq!(stored, run.state);
    let pending = store.pending_approvals().await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].run_id, run_id);
    assert_eq!(pending[0].tool_name, "pay");
    assert_eq!(pending[0].reason, "a person must approve payments");
    let summaries = store.list().await.unwrap();
    assert_eq!(summaries.len(), 1);
    assert_eq!(summaries[0].status, RunStatus::Suspended);

    // A decision about an unknown call is refused.
    let refused = store
        .decide(&run_id, "t9c9", &ToolDecision::approve())
        .await
        .unwrap_err();
    assert!(matches!(refused, StoreError::NoSuchPendingCall { .. }));

    store
        .decide(
            &run_id,
            &pending[0].internal_call_id,
            &ToolDecision::approve(),
        )
        .await
        .unwrap();
    assert!(store.pending_approvals().await.unwrap().is_empty());

    let seen = Seen::default();
    let response = agent(model.clone(), log.clone(), seen.clone())
        .resume_stored(store.clone(), &run_id)
        .extended_details()
        .await
        .unwrap();
    assert_eq!(response.output, "Paid 100.");
    assert_eq!(response.run_id(), run_id);
    assert_eq!(
        *log.lock().unwrap(),
        vec!["balance", "pay 100"],
        "each tool ran once"
    );
    assert_eq!(
        *seen.0.lock().unwrap(),
        vec![1],
        "resumed hooks see the saved entries"
    );

    let journal = store.journal(&run_id).await.unwrap();
    let effects: Vec<_> = journal
        .iter()
        .map(|e| (e.kind.as_str(), e.effect_id.clone()))
        .collect();
    assert_eq!(
        effects,
        vec![
            ("model_turn", format!("{run_id}/t1")),
            ("tool_call", format!("{run_id}/t1c0")),
            ("tool_call", format!("{run_id}/t1c1")),
            ("model_turn", format!("{run_id}/t2")),
        ]
    );
    let finished = store.load(&run_id).await.unwrap();
    assert_eq!(finished.status, RunStatus::Completed);

    // Resuming a finished run does nothing again.
    let again = agent(model, log.clone(), Seen::default())
        .resume_stored(store.clone(), &run_id)
        .await
        .unwrap();
    assert_eq!(again, "Paid 100.");
    assert_eq!(log.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn approval_round_trip_in_memory() {
    approval_round_trip(MemoryStore::new()).await;
}

#[tokio::test]
async fn approval_round_trip_in_sqlite() {
    let path = std::env::temp_dir().join(format!("reins-durable-{}.sqlite", uuid_like()));
    approval_round_trip(SqliteStore::open(&path).unwrap()).await;
    // A second handle on the same file (another process would open its own) sees the run.
    let reopened = SqliteStore::open(&path).unwrap();
    assert_eq!(reopened.list().await.unwrap().len(), 1);
    let _ = std::fs::remove_file(&path);
}

fn uuid_like() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

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
    store
        .decide(&run_id, "t1c0", &ToolDecision::approve())
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

#[tokio::test]
async fn racing_workers_in_memory() {
    racing_workers(MemoryStore::new()).await;
}

#[tokio::test]
async fn racing_workers_in_sqlite() {
    let path = std::env::temp_dir().join(format!("reins-race-{}.sqlite", uuid_like()));
    racing_workers(SqliteStore::open(&path).unwrap()).await;
    let _ = std::fs::remove_file(&path);
}

use std::future::IntoFuture;

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

/// Builds a minimal state through a real run.
struct RunStateBuilder;
impl RunStateBuilder {
    fn suspended_example() -> RunState {
        let mut state: RunState = serde_json::from_value(json!({
            "version": 1, "run_id": "r-lease", "agent_name": null, "turn": 0,
            "history": [], "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
            "entries": [], "last_model": null, "invalid_tool_call_retries": 0
        }))
        .unwrap();
        state.status = RunStatus::Running;
        state
    }
}

#[tokio::test]
async fn corrupt_or_foreign_records_are_reported_and_left_untouched() {
    let store = MemoryStore::new();
    store.put_raw("bad-json", 1, "{not json");
    store.put_raw("future", 99, "{}");
    let agent = AgentBuilder::new(ScriptedModel::new([])).build();
    let error = agent
        .resume_stored(store.clone(), "bad-json")
        .await
        .unwrap_err();
    assert!(
        matches!(&error, PromptError::Store { source: StoreError::Corrupt { run_id, .. }, .. } if run_id == "bad-json"),
        "{error:?}"
    );
    let error = store.load("future").await.unwrap_err();
    assert_eq!(
        error,
        StoreError::UnsupportedFormat {
            run_id: "future".into(),
            found: 99,
            supported: reins::store::FORMAT_VERSION
        }
    );
    // Untouched: the same error again.
    assert!(matches!(
        store.load("bad-json").await,
        Err(StoreError::Corrupt { .. })
    ));
    let error = agent.resume_stored(store, "missing").await.unwrap_err();
    assert!(matches!(
        error,
        PromptError::Store {
            source: StoreError::NotFound(_),
            ..
        }
    ));
}

#[tokio::test]
async fn a_sqlite_record_in_an_unknown_format_is_left_untouched() {
    let path = std::env::temp_dir().join(format!("reins-format-{}.sqlite", uuid_like()));
    let store = SqliteStore::open(&path).unwrap();
    let state = RunStateBuilder::suspended_example();
    store.create(&state, "w").await.unwrap();
    {
        let connection = rusqlite_connection(&path);
        connection
            .execute(
                "UPDATE reins_runs SET format = 7 WHERE run_id = 'r-lease'",
                [],
            )
            .unwrap();
    }
    let error = store.claim("r-lease", "w2").await.unwrap_err();
    assert!(
        matches!(error, StoreError::UnsupportedFormat { found: 7, .. }),
        "{error:?}"
    );
    let error = store.load("r-lease").await.unwrap_err();
    assert!(matches!(
        error,
        StoreError::UnsupportedFormat { found: 7, .. }
    ));
    let _ = std::fs::remove_file(&path);
}

fn rusqlite_connection(path: &std::path::Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

/// A store in a fresh PostgreSQL database on the server `scripts/test.sh` starts.
#[cfg(feature = "postgres")]
async fn postgres_store() -> reins::store::PostgresStore {
    let url = std::env::var("REINS_POSTGRES_URL").expect(
        "REINS_POSTGRES_URL must name a PostgreSQL server for the postgres tests; \
         scripts/test.sh starts one",
    );
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("connect to PostgreSQL");
    tokio::spawn(connection);
    let database = format!("reins_test_{}", uuid_like().replace('-', "_"));
    client
        .batch_execute(&format!("CREATE DATABASE {database}"))
        .await
        .unwrap();
    reins::store::PostgresStore::connect(&format!("{url} dbname={database}"))
        .await
        .unwrap()
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn approval_round_trip_in_postgres() {
    approval_round_trip(postgres_store().await).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn racing_workers_in_postgres() {
    racing_workers(postgres_store().await).await;
}
