//! The PostgreSQL store keeps time by the database server's clock, whatever the clock of the
//! worker's machine says: a worker whose clock runs ahead (or behind) neither takes a run
//! another worker holds, nor writes a lease that lasts longer (or shorter) for the others
//! than the store's lease, nor ages or orders runs by its own clock. A worker on another
//! machine is played by a task whose reading of this process's clock is off
//! ([`CLOCK_SKEW`]). Needs `REINS_POSTGRES_URL` (`scripts/with-postgres.sh`).

use super::PostgresStore;
use crate::message::ToolCall;
use crate::run::{PendingCall, RunState, RunStatus, ToolDecision};
use crate::store::decision::binding_of;
use crate::store::lease::CLOCK_SKEW;
use crate::store::{Decision, Lease, RunQuery, RunStore, StoreError};
use std::time::Duration;

/// How long a claim lasts in these tests.
const LEASE: Duration = Duration::from_secs(60);

/// How far off the clock of the other workers' machines is, in milliseconds: ten times the
/// lease, so the old worker-clock rule would see any live lease as run out (or never live).
const TEN_MINUTES: i64 = 10 * 60 * 1000;

/// A connection to the database `url` names, for the test's own statements.
pub(super) async fn admin(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect to PostgreSQL");
    tokio::spawn(connection);
    client
}

/// A fresh database on the server `scripts/with-postgres.sh` starts: its connection string.
pub(super) async fn fresh_database() -> String {
    let url = std::env::var("REINS_POSTGRES_URL").expect(
        "REINS_POSTGRES_URL must name a PostgreSQL server for the postgres tests; \
         scripts/with-postgres.sh starts one",
    );
    let database = format!("reins_unit_{}", uuid::Uuid::new_v4().simple());
    admin(&url)
        .await
        .batch_execute(&format!("CREATE DATABASE {database}"))
        .await
        .unwrap();
    format!("{url} dbname={database}")
}

/// A store on a fresh database.
async fn store() -> PostgresStore {
    PostgresStore::connect(&fresh_database().await)
        .await
        .unwrap()
        .with_lease(LEASE)
}

/// `work`, done by a worker whose clock is `off` milliseconds ahead (behind when negative).
async fn on_clock_off_by<F: Future>(off: i64, work: F) -> F::Output {
    CLOCK_SKEW.scope(off, work).await
}

/// A run whose one call waits for a person's approval.
fn waiting_run(run_id: &str) -> RunState {
    let mut state = RunState::new(run_id.to_owned(), None, Vec::new());
    state.status = RunStatus::Suspended;
    state.pending_calls.push(PendingCall {
        internal_call_id: "t1c0".to_owned(),
        call: ToolCall {
            id: "call-1".to_owned(),
            name: "pay".to_owned(),
            arguments: serde_json::json!({"amount": 5}),
        },
        result: None,
        suspended: Some("needs approval".to_owned()),
        started: None,
        in_doubt: false,
        starts: 0,
    });
    state
}

/// Checks that `result` is refused because `owner` holds the run, for no longer than a lease.
#[track_caller]
fn assert_held_by<T: std::fmt::Debug>(result: Result<T, StoreError>, owner: &str) {
    match result {
        Err(StoreError::Busy {
            owner: holder,
            remaining,
            ..
        }) => {
            assert_eq!(holder, owner);
            assert!(
                remaining > Duration::ZERO && remaining <= LEASE,
                "a lease lasts the store's lease, not {remaining:?}"
            );
        }
        other => panic!("expected the run held by {owner}, got {other:?}"),
    }
}

/// A worker whose clock runs ten minutes ahead sees the lease another worker took a moment
/// ago as live, and leaves the run to it: its owner goes on writing checkpoints.
#[tokio::test]
async fn a_worker_whose_clock_runs_ahead_cannot_take_a_held_run() {
    let store = store().await;
    let state = waiting_run("r-ahead");
    let lease = store.create(&state, "worker-a").await.unwrap();

    let taken = on_clock_off_by(TEN_MINUTES, store.claim("r-ahead", "worker-b")).await;
    assert_held_by(taken, "worker-a");

    store
        .checkpoint(&lease, &state, &[], false)
        .await
        .expect("the owner still holds its run");
}

/// Every lease a worker writes — creating, claiming, checkpointing, renewing — lasts the
/// store's lease for the other workers, however far its own clock is off either way.
#[tokio::test]
async fn a_lease_lasts_the_stores_lease_whatever_the_writers_clock() {
    let store = store().await;
    for (run_id, off) in [
        ("r-writer-ahead", TEN_MINUTES),
        ("r-writer-behind", -TEN_MINUTES),
    ] {
        let state = waiting_run(run_id);
        let lease = on_clock_off_by(off, store.create(&state, "skewed"))
            .await
            .unwrap();
        assert_held_by(store.claim(run_id, "peer").await, "skewed");

        let lease = on_clock_off_by(off, store.renew(&lease)).await.unwrap();
        assert_held_by(store.claim(run_id, "peer").await, "skewed");

        let lease = on_clock_off_by(off, store.checkpoint(&lease, &state, &[], false))
            .await
            .unwrap();
        assert_held_by(store.claim(run_id, "peer").await, "skewed");

        on_clock_off_by(off, store.checkpoint(&lease, &state, &[], true))
            .await
            .unwrap();
        on_clock_off_by(off, store.claim(run_id, "skewed"))
            .await
            .unwrap();
        assert_held_by(store.claim(run_id, "peer").await, "skewed");
    }
}

/// A decision made on a machine whose clock runs ahead waits for the worker that holds the
/// run: it neither ends that worker's lease nor is recorded for a claim it would miss.
#[tokio::test]
async fn a_decider_whose_clock_runs_ahead_waits_for_the_holder() {
    let store = store().await;
    let state = waiting_run("r-decided");
    let lease: Lease = store.create(&state, "worker-a").await.unwrap();
    let decision = Decision {
        internal_call_id: "t1c0".to_owned(),
        decision: ToolDecision::approve(),
        binding: binding_of("r-decided", &state.pending_calls[0]),
        decided_by: "alice".to_owned(),
        reason: None,
        replaces: None,
    };

    let decided = on_clock_off_by(TEN_MINUTES, store.decide("r-decided", &decision)).await;
    assert_held_by(decided, "worker-a");

    store
        .checkpoint(&lease, &state, &[], false)
        .await
        .expect("the owner still holds its run");
    assert!(store.decisions("r-decided").await.unwrap().is_empty());
}

/// Listings read on a machine whose clock runs ahead still show who holds a run.
#[tokio::test]
async fn listings_show_a_live_lease_whatever_the_readers_clock() {
    let store = store().await;
    store
        .create(&waiting_run("r-listed"), "worker-a")
        .await
        .unwrap();

    let (all, page, recent) = on_clock_off_by(TEN_MINUTES, async {
        (
            store.list().await.unwrap(),
            store.list_runs(&RunQuery::new()).await.unwrap(),
            store.recent_runs(None, 10).await.unwrap(),
        )
    })
    .await;
    for summary in [&all[0], &page.runs[0], &recent.runs[0]] {
        let holder = summary.lease.as_ref().expect("the lease is live");
        assert_eq!(holder.owner, "worker-a");
    }
}

/// The run written last is listed first, and a finished run's age counts from when it was
/// written, by the same clock whichever worker wrote it or expires runs.
#[tokio::test]
async fn runs_are_aged_and_ordered_by_one_clock() {
    let store = store().await;
    let mut finished = RunState::new("r-finished".to_owned(), None, Vec::new());
    let lease = on_clock_off_by(TEN_MINUTES, store.create(&finished, "ahead"))
        .await
        .unwrap();
    finished.status = RunStatus::Completed;
    on_clock_off_by(TEN_MINUTES, store.checkpoint(&lease, &finished, &[], true))
        .await
        .unwrap();
    store
        .create(&waiting_run("r-later"), "on-time")
        .await
        .unwrap();

    let recent = store.recent_runs(None, 10).await.unwrap();
    let order: Vec<&str> = recent.runs.iter().map(|run| run.run_id.as_str()).collect();
    assert_eq!(
        order,
        ["r-later", "r-finished"],
        "the run written last first"
    );

    let expired = on_clock_off_by(TEN_MINUTES, store.expire(Duration::from_secs(300))).await;
    assert_eq!(expired.unwrap(), 0, "the run finished a moment ago");
    store.load("r-finished").await.expect("still stored");
}

/// The tables and indexes connecting checks for are those the set-up makes (primary keys
/// aside: they come with their tables).
#[tokio::test]
async fn the_layout_checked_on_connecting_is_the_one_set_up() {
    let url = fresh_database().await;
    PostgresStore::connect(&url).await.unwrap();
    let mut made: Vec<String> = admin(&url)
        .await
        .query(
            "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'i')
                 AND c.relname NOT LIKE '%\\_pkey'",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    made.sort_unstable();
    let mut checked = crate::store::generation::TABLES_AND_INDEXES.to_vec();
    checked.sort_unstable();
    assert_eq!(made, checked);
}
