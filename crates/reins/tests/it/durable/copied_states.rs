//! A run whose stored state is another run's (its row copied or edited outside reins, say to
//! run a run again under a new id): refused as corrupt, naming the run and whose state it
//! holds, rather than resumed, listed for approval or decided on under the other run's id;
//! the other runs are read and listed as before.

use super::{Seen, agent, decide, script, uuid_like};
use reins::agent::*;
use reins::store::{MemoryStore, RunStore, SqliteStore, StoreError};
use std::sync::{Arc, Mutex};

#[cfg(feature = "postgres")]
use super::{postgres_client, postgres_database};

/// What copies the state of `wait-b` over that of `wait-a`, behind the store's back.
const COPY_SQL: &str =
    "UPDATE reins_runs SET state = (SELECT state FROM reins_runs WHERE run_id = 'wait-b')
     WHERE run_id = 'wait-a'";

/// `error` says that `wait-a` holds `wait-b`'s state.
fn holds_anothers_state(error: &StoreError) -> bool {
    matches!(error, StoreError::Corrupt { run_id, message }
        if run_id == "wait-a" && message.contains("`wait-b`"))
}

/// Two runs wait for a payment approval; `copy` puts `wait-b`'s state in `wait-a`'s record.
async fn a_state_of_another_run_is_refused<F, Fut>(store: impl RunStore + Clone, copy: F)
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let log = Arc::new(Mutex::new(Vec::new()));
    for run_id in ["wait-a", "wait-b"] {
        let error = agent(script(), log.clone(), Seen::default())
            .prompt("pay the bill")
            .run_id(run_id)
            .durable(store.clone())
            .await
            .unwrap_err();
        assert!(matches!(error, PromptError::Suspended { .. }), "{error:?}");
    }
    let call_id = store.pending_approvals().await.unwrap().approvals[0]
        .internal_call_id
        .clone();
    copy().await;

    let error = store.load("wait-a").await.unwrap_err();
    assert!(holds_anothers_state(&error), "{error:?}");
    let error = store.claim("wait-a", "worker").await.unwrap_err();
    assert!(holds_anothers_state(&error), "{error:?}");
    let error = decide(&store, "wait-a", &call_id, ToolDecision::approve())
        .await
        .unwrap_err();
    assert!(holds_anothers_state(&error), "{error:?}");
    let error = agent(script(), log.clone(), Seen::default())
        .resume_stored(store.clone(), "wait-a")
        .await
        .unwrap_err();
    assert!(
        matches!(&error, PromptError::Store { source, .. } if holds_anothers_state(source)),
        "{error:?}"
    );

    // The other run is listed for approval, and read, as before; `wait-a` is reported.
    let listing = store.pending_approvals().await.unwrap();
    let listed: Vec<&str> = listing
        .approvals
        .iter()
        .map(|a| a.run_id.as_str())
        .collect();
    assert_eq!(listed, ["wait-b"]);
    assert_eq!(listing.unreadable.len(), 1, "{listing:?}");
    assert!(holds_anothers_state(&listing.unreadable[0].error));
    assert_eq!(store.load("wait-b").await.unwrap().run_id, "wait-b");
    for run_id in ["wait-a", "wait-b"] {
        assert!(
            store.decisions(run_id).await.unwrap().is_empty(),
            "{run_id}"
        );
    }
}

#[tokio::test]
async fn a_state_of_another_run_is_refused_in_memory() {
    let store = MemoryStore::new();
    let handle = store.clone();
    a_state_of_another_run_is_refused(store, || async move {
        let state = handle.load("wait-b").await.unwrap();
        handle.put_raw_state("wait-a", &serde_json::to_string(&state).unwrap());
    })
    .await;
}

#[tokio::test]
async fn a_state_of_another_run_is_refused_in_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("runs-{}.sqlite", uuid_like()));
    let store = SqliteStore::open(&path).unwrap();
    a_state_of_another_run_is_refused(store, || async move {
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch(COPY_SQL)
            .unwrap();
    })
    .await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_state_of_another_run_is_refused_in_postgres() {
    let url = postgres_database().await;
    let store = reins::store::PostgresStore::connect(&url).await.unwrap();
    a_state_of_another_run_is_refused(store, || async move {
        postgres_client(&url)
            .await
            .batch_execute(COPY_SQL)
            .await
            .unwrap();
    })
    .await;
}
