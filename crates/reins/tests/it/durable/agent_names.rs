//! Whose run each listed run is (`RunSummary::agent_name`), as every store lists it without
//! loading the run: the name its state was last written with, `None` for a run of an agent
//! without one; and in a database written by a release that did not keep it, the name each
//! run's state holds, filled when the database is first opened (a state that cannot be read
//! leaves it empty, and does not keep the database from opening).

#[cfg(feature = "postgres")]
use super::before_agent_names::OldPostgresDatabase;
use super::before_agent_names::OldSqliteFile;
use super::listed::listed;
use super::per_store::per_store;
#[cfg(feature = "postgres")]
use super::postgres_database;
use super::{RunStateBuilder, uuid_like};
use reins::agent::{RunState, RunStatus};
use reins::store::{RunStore, SqliteStore};

/// A state of the run `run_id` of the agent `agent_name`, running.
pub(super) fn run_of(run_id: &str, agent_name: Option<&str>) -> RunState {
    let mut state = RunStateBuilder::suspended_example();
    state.run_id = run_id.to_owned();
    state.agent_name = agent_name.map(str::to_owned);
    state
}

/// The agent of `run_id`, as both listings and the listing of the runs written last say it.
async fn agent_of(store: &impl RunStore, run_id: &str) -> Option<String> {
    let name = listed(store, run_id, |run| run.agent_name.clone()).await;
    let recent = store.recent_runs(None, usize::MAX).await.unwrap();
    let recent_name = recent
        .runs
        .iter()
        .find(|run| run.run_id == run_id)
        .map(|run| run.agent_name.clone());
    assert_eq!(recent_name, Some(name.clone()), "{recent:?}");
    name
}

async fn each_run_is_listed_with_its_agent(store: impl RunStore) {
    let mut named = run_of("named", Some("triage"));
    let lease = store.create(&named, "worker").await.unwrap();
    store
        .create(&run_of("unnamed", None), "worker")
        .await
        .unwrap();
    assert_eq!(agent_of(&store, "named").await.as_deref(), Some("triage"));
    assert_eq!(agent_of(&store, "unnamed").await, None);

    // A checkpoint writes the name its state holds.
    named.agent_name = Some("billing".to_owned());
    store.checkpoint(&lease, &named, &[], true).await.unwrap();
    assert_eq!(agent_of(&store, "named").await.as_deref(), Some("billing"));
    // A fork is stored with its state's agent.
    store
        .create_forked(&run_of("forked", Some("billing")), &[])
        .await
        .unwrap();
    assert_eq!(agent_of(&store, "forked").await.as_deref(), Some("billing"));
}

per_store!(each_run_is_listed_with_its_agent);

/// The runs that release stored, each with its state: of a named agent, of an unnamed one,
/// one whose state is not JSON, and one whose agent's name is not text.
fn runs_before_agent_names() -> Vec<(String, String)> {
    let encoded = |state: RunState| serde_json::to_string(&state).unwrap();
    vec![
        ("named".to_owned(), encoded(run_of("named", Some("triage")))),
        ("unnamed".to_owned(), encoded(run_of("unnamed", None))),
        ("garbled".to_owned(), "{not json".to_owned()),
        ("odd".to_owned(), r#"{"agent_name": 7}"#.to_owned()),
    ]
}

/// What a store opened on those runs lists: the agent each state names, where it names one.
async fn old_runs_are_listed_with_their_agents(store: &impl RunStore) {
    assert_eq!(agent_of(store, "named").await.as_deref(), Some("triage"));
    for run_id in ["unnamed", "garbled", "odd"] {
        assert_eq!(agent_of(store, run_id).await, None, "{run_id}");
    }
}

/// A run `later` that the old release stored after the database was upgraded is listed
/// without its agent until this release writes it: then with it.
async fn a_run_the_old_release_stored_is_named_once_written(store: &impl RunStore) {
    assert_eq!(agent_of(store, "later").await, None);
    let claimed = store.claim("later", "worker").await.unwrap();
    assert_eq!(claimed.state.agent_name.as_deref(), Some("triage"));
    let mut state = claimed.state;
    state.status = RunStatus::Running;
    store
        .checkpoint(&claimed.lease, &state, &[], true)
        .await
        .unwrap();
    assert_eq!(agent_of(store, "later").await.as_deref(), Some("triage"));
}

#[tokio::test]
async fn a_sqlite_file_from_before_agent_names_is_upgraded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("runs-{}.sqlite", uuid_like()));
    let old = OldSqliteFile::create(&path, runs_before_agent_names());
    let store = SqliteStore::open(&path).unwrap();
    old_runs_are_listed_with_their_agents(&store).await;

    // The old release still stores runs without the column.
    let later = serde_json::to_string(&run_of("later", Some("triage"))).unwrap();
    old.insert("later", &later);
    a_run_the_old_release_stored_is_named_once_written(&store).await;
    // Opened again, nothing moves.
    old_runs_are_listed_with_their_agents(&SqliteStore::open(&path).unwrap()).await;

    // A name that is not text, written behind the store's back, is not known: the run is
    // listed without it, not as unreadable (its state still says whose it is).
    old.connection()
        .execute_batch("UPDATE reins_runs SET agent_name = X'07' WHERE run_id = 'named'")
        .unwrap();
    assert_eq!(agent_of(&store, "named").await, None);
    assert_eq!(
        store.load("named").await.unwrap().agent_name.as_deref(),
        Some("triage")
    );
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_postgres_database_from_before_agent_names_is_upgraded() {
    let url = postgres_database().await;
    let old = OldPostgresDatabase::create(&url, runs_before_agent_names()).await;
    let store = reins::store::PostgresStore::connect(&url).await.unwrap();
    old_runs_are_listed_with_their_agents(&store).await;

    let later = serde_json::to_string(&run_of("later", Some("triage"))).unwrap();
    old.insert("later", &later).await;
    a_run_the_old_release_stored_is_named_once_written(&store).await;
    let again = reins::store::PostgresStore::connect(&url).await.unwrap();
    old_runs_are_listed_with_their_agents(&again).await;
}
