//! Durable runs on every store: pause for a decision, resume by id, race, journal, bad records.
//!
//! This module holds the shared hooks, agents and store helpers, and the approval round trip;
//! [`claims`] races workers and checks leases, [`created_at`] lists when each run was
//! created, [`agent_names`] lists whose each run is (on databases
//! [`before_agent_names`] makes as the release before them left them), [`dropped`] gives back the lease of a run whose
//! future was dropped, [`finished`] resumes finished runs, [`records`]
//! reads unreadable, upgraded, corrupt and foreign records, [`copied_states`] refuses a run
//! holding another run's state, [`in_doubt`] cuts calls off between
//! their effect and their checkpoint, [`bindings`] binds decisions to arguments, [`decided_once`]
//! refuses a second decision about a call, [`fork`]
//! lists checkpoints and forks from them, [`renewal`] keeps a slow step's lease (and a
//! stream read slowly), [`format`] resumes a stored format-1 record of a suspended run and
//! leaves a newer release's alone, [`format_kinds`] reads stored format-1
//! records of a call in doubt and of a completed run, [`housekeeping`] lists runs a page at a
//! time and deletes and expires finished ones, [`leases_listed`] lists who drives each run
//! (and which were left), [`listed`] reads a run's summary off both listings, [`watch`] waits for decisions, [`store_faults`]
//! fails a run whose store panics, gives back a run whose store failed a write, and stops a run
//! that lost its lease (with the [`faulty_store`] of these tests), [`typed`] resumes a typed
//! run whose answer was refused, [`deep_json`] stores and resumes runs with JSON nested as
//! deep as a parser takes it; [`postgres_connect`] reports why a connection to PostgreSQL
//! failed, [`row_locks`] gives up on a run's row another session holds locked, [`pg_listener`] replaces a decision listener's connection that died silently;
//! [`sqlite_files`] opens files a SQLite store did not write; [`opened_together`] opens one
//! database from many processes at once; [`schema_generation`] records the tables' generation,
//! refuses a newer release's and opens without waiting for writes. A case run on every store is one
//! body and a [`per_store!`](per_store) line.

mod agent_names;
mod before_agent_names;
mod bindings;
mod claims;
mod copied_states;
mod created_at;
mod decided_once;
mod deep_json;
mod dropped;
mod faulty_store;
mod finished;
mod float_args;
mod fork;
mod fork_reads;
mod format;
mod format_kinds;
mod housekeeping;
mod in_doubt;
mod lapsed_lease;
mod last_written;
mod leases_listed;
mod listed;
mod opened_together;
mod per_store;
#[cfg(feature = "postgres")]
mod pg_listener;
#[cfg(feature = "postgres")]
mod postgres_connect;
mod recent;
mod records;
mod renewal;
#[cfg(feature = "postgres")]
mod row_locks;
mod schema_generation;
mod sqlite_files;
mod sqlite_opening;
mod store_faults;
mod takeovers;
mod typed;
mod watch;

use crate::common::echo_tool;
use reins::agent::*;
use reins::store::{
    Decision, MemoryStore, PendingApprovals, RecordedDecision, RunStore, SqliteStore, StoreError,
};
use reins::testing::{ScriptedModel, Turn};
use serde_json::json;
use std::sync::{Arc, Mutex};

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

/// Suspends every call to `pay` for a person's approval (and asks nothing else).
pub(super) struct PaymentsWait;
impl AgentHook for PaymentsWait {
    async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if event.tool_name() == Some("pay") {
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
    let listing = store.pending_approvals().await.unwrap();
    assert!(listing.unreadable.is_empty());
    let pending = listing.approvals;
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].run_id, run_id);
    assert_eq!(pending[0].tool_name, "pay");
    assert_eq!(pending[0].reason, "a person must approve payments");
    let summaries = store.list().await.unwrap();
    assert_eq!(summaries.len(), 1);
    assert_eq!(summaries[0].status, RunStatus::Suspended);

    // A decision about an unknown call is refused.
    let refused = decide(&store, &run_id, "t9c9", ToolDecision::approve())
        .await
        .unwrap_err();
    assert!(matches!(refused, StoreError::NoSuchPendingCall { .. }));
    // It says where the calls that do wait are listed.
    assert_eq!(
        refused.to_string(),
        format!(
            "run `{run_id}` has no suspended call `t9c9` (RunStore::pending_approvals lists \
             the calls that wait, each with its id and binding)"
        )
    );

    decide(
        &store,
        &run_id,
        &pending[0].internal_call_id,
        ToolDecision::approve(),
    )
    .await
    .unwrap();
    assert_eq!(
        store.pending_approvals().await.unwrap(),
        PendingApprovals::default()
    );

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
            ("tool_call_started", format!("{run_id}/t1c0")),
            ("tool_call", format!("{run_id}/t1c0")),
            ("tool_call_started", format!("{run_id}/t1c1")),
            ("tool_call", format!("{run_id}/t1c1")),
            ("model_turn", format!("{run_id}/t2")),
        ]
    );
    let finished = store.load(&run_id).await.unwrap();
    assert_eq!(finished.status, RunStatus::Completed);

    // Resuming a finished run does nothing again, writes nothing, and says so.
    let version = version_of(&store, &run_id).await;
    let again = agent(model, log.clone(), Seen::default())
        .resume_stored(store.clone(), &run_id)
        .await
        .unwrap_err();
    assert!(
        matches!(&again, PromptError::AlreadyFinished { status: RunStatus::Completed, answer: Some(answer), .. } if answer == "Paid 100."),
        "{again:?}"
    );
    assert_eq!(log.lock().unwrap().len(), 2);
    assert_eq!(version_of(&store, &run_id).await, version);
}

/// Decides about a call of a stored run as a person would: bound to the call as the pending
/// listing shows it (an unlisted call gets an empty binding).
async fn decide(
    store: &impl RunStore,
    run_id: &str,
    internal_call_id: &str,
    decision: ToolDecision,
) -> Result<RecordedDecision, StoreError> {
    let listing = store.pending_approvals().await?;
    let listed = listing
        .approvals
        .iter()
        .find(|p| p.run_id == run_id && p.internal_call_id == internal_call_id);
    let decision = match listed {
        Some(pending) => Decision::new(pending, decision, "tester"),
        None => Decision {
            internal_call_id: internal_call_id.to_owned(),
            decision,
            binding: String::new(),
            decided_by: "tester".to_owned(),
            reason: None,
            replaces: None,
        },
    };
    store.decide(run_id, &decision).await
}

/// The stored version of a run.
async fn version_of(store: &impl RunStore, run_id: &str) -> i64 {
    let runs = store.list().await.unwrap();
    let run = runs.iter().find(|run| run.run_id == run_id);
    run.unwrap_or_else(|| panic!("no run {run_id}")).version
}

#[tokio::test]
async fn approval_round_trip_in_memory() {
    approval_round_trip(MemoryStore::new()).await;
}

#[tokio::test]
async fn approval_round_trip_in_sqlite() {
    // Removed with its -wal and -shm files when the test ends, however it ends.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("durable.sqlite");
    approval_round_trip(SqliteStore::open(&path).unwrap()).await;
    // A second handle on the same file (another process would open its own) sees the run.
    let reopened = SqliteStore::open(&path).unwrap();
    assert_eq!(reopened.list().await.unwrap().len(), 1);
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

/// A fresh PostgreSQL database on the server `scripts/with-postgres.sh` starts: its
/// connection string.
#[cfg(feature = "postgres")]
async fn postgres_database() -> String {
    let url = std::env::var("REINS_POSTGRES_URL").expect(
        "REINS_POSTGRES_URL must name a PostgreSQL server for the postgres tests; \
         scripts/with-postgres.sh starts one",
    );
    let client = postgres_client(&url).await;
    let database = format!("reins_test_{}", uuid_like().replace('-', "_"));
    client
        .batch_execute(&format!("CREATE DATABASE {database}"))
        .await
        .unwrap();
    format!("{url} dbname={database}")
}

#[cfg(feature = "postgres")]
async fn postgres_client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect to PostgreSQL");
    tokio::spawn(connection);
    client
}

/// A store in a fresh PostgreSQL database.
#[cfg(feature = "postgres")]
async fn postgres_store() -> reins::store::PostgresStore {
    reins::store::PostgresStore::connect(&postgres_database().await)
        .await
        .unwrap()
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn approval_round_trip_in_postgres() {
    approval_round_trip(postgres_store().await).await;
}

/// Every operation takes one pooled connection and needs no second one: a pool of one
/// connection serves a whole run.
#[cfg(feature = "postgres")]
#[tokio::test]
async fn approval_round_trip_in_postgres_on_one_pooled_connection() {
    let store = postgres_store().await.with_pool_size(1);
    approval_round_trip(store).await;
}
