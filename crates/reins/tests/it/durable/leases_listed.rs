//! What a listing says about each run's lease, on every store: who drives a running run and
//! until when, and which running runs were left behind (their lease given back, or run out
//! after their worker died) and can be resumed at once.

use super::RunStateBuilder;
use super::listed::now_ms;
use super::per_store::per_store;
use reins::agent::RunStatus;
use reins::store::{RunQuery, RunStore, RunSummary, StoreError};
use std::time::Duration;

/// A running run stored as `run_id`, leased to `owner`, and the lease.
async fn running(store: &impl RunStore, run_id: &str, owner: &str) -> reins::store::Lease {
    let mut state = RunStateBuilder::suspended_example();
    state.run_id = run_id.to_owned();
    assert_eq!(state.status, RunStatus::Running);
    store.create(&state, owner).await.unwrap()
}

/// The run `run_id` of `runs`.
fn listed<'a>(runs: &'a [RunSummary], run_id: &str) -> &'a RunSummary {
    runs.iter()
        .find(|run| run.run_id == run_id)
        .unwrap_or_else(|| panic!("{run_id} is not listed: {runs:?}"))
}

/// Both listings of the store: `list` and the first page of `list_runs`.
async fn listings(store: &impl RunStore) -> [Vec<RunSummary>; 2] {
    let page = store.list_runs(&RunQuery::new()).await.unwrap();
    assert!(page.unreadable.is_empty(), "{page:?}");
    [store.list().await.unwrap(), page.runs]
}

/// A run a worker drives is listed with that worker and when its lease ends; one whose
/// worker gave it back (stopped on purpose) with nobody, and a resume takes it at once.
async fn a_listing_tells_a_driven_run_from_a_left_one(store: impl RunStore) {
    let lease_ms = i64::try_from(store.lease_duration().as_millis()).unwrap();
    let before = now_ms();
    running(&store, "driven", "worker-a").await;
    let after = now_ms();
    let left = running(&store, "left", "worker-b").await;
    let state = store.load("left").await.unwrap();
    store.checkpoint(&left, &state, &[], true).await.unwrap();

    for runs in listings(&store).await {
        let driven = listed(&runs, "driven");
        assert_eq!(driven.status, RunStatus::Running);
        let holder = driven.lease.as_ref().expect("a worker drives the run");
        assert_eq!(holder.owner, "worker-a");
        assert!(
            (before + lease_ms..=after + lease_ms).contains(&holder.expires_at_ms),
            "the lease ends a lease's length after the claim: {holder:?}"
        );
        let left = listed(&runs, "left");
        assert_eq!(left.status, RunStatus::Running);
        assert_eq!(left.lease, None, "nobody drives a run given back");
    }

    // What the listing says is what a resume finds.
    let error = store.claim("driven", "worker-c").await.unwrap_err();
    assert!(
        matches!(&error, StoreError::Busy { owner, .. } if owner == "worker-a"),
        "{error:?}"
    );
    store.claim("left", "worker-c").await.unwrap();
    for runs in listings(&store).await {
        let taken = listed(&runs, "left").lease.as_ref();
        assert_eq!(taken.map(|holder| holder.owner.as_str()), Some("worker-c"));
    }
}

per_store!(a_listing_tells_a_driven_run_from_a_left_one);

/// A run whose worker died keeps its lease until it runs out, then is listed with nobody
/// holding it, and a resume takes it.
async fn a_lease_that_ran_out_is_held_by_nobody(store: impl RunStore) {
    running(&store, "crashed", "worker-gone").await;
    let lease = store.lease_duration();
    tokio::time::sleep(lease * 3).await;
    for runs in listings(&store).await {
        let crashed = listed(&runs, "crashed");
        assert_eq!(crashed.status, RunStatus::Running);
        assert_eq!(crashed.lease, None, "a lease that ran out holds nothing");
    }
    store.claim("crashed", "worker-new").await.unwrap();
}

per_store!(
    a_lease_that_ran_out_is_held_by_nobody,
    each.with_lease(SHORT_LEASE)
);

const SHORT_LEASE: Duration = Duration::from_millis(20);
