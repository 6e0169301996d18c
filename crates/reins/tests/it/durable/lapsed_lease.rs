//! A run whose store stops renewing its lease (every renewal fails, or none is ever answered:
//! a connection whose server went silent) stops once the lease it last wrote has run out by
//! its own clock, which is before the store lets another worker claim the run: two workers
//! never run the run's calls side by side, each believing it holds the run. Its tool call is
//! dropped, nothing is written, and the run resumes from its last checkpoint, the cut-off call
//! in doubt.

use super::faulty_store::{Fault, FaultyStore};
use super::renewal::{LEASE, slow_agent};
use reins::agent::*;
use reins::store::{MemoryStore, StoreError};
use std::future::IntoFuture;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

async fn stops_once_its_lease_ran_out(fault: Fault) {
    let store = FaultyStore::over(MemoryStore::new().with_lease(LEASE), fault);
    let started = Arc::new(Notify::new());
    // Its one tool call never ends: only the lease can stop the run.
    let agent = slow_agent(None, started.clone(), Arc::default());
    let run = agent
        .prompt("go")
        .run_id("unrenewed")
        .durable(store.clone());
    let run = tokio::spawn(run.into_future());
    started.notified().await;
    // Bounded only so that a run that never stops fails the test instead of hanging it.
    let ended = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("the run stops once its lease ran out unrenewed")
        .unwrap();
    let Err(PromptError::Store { source, .. }) = &ended else {
        panic!("expected the lapsed lease, got {ended:?}");
    };
    assert!(
        matches!(source, StoreError::LeaseLapsed { run_id } if run_id == "unrenewed"),
        "{source:?}"
    );
    // Nothing is lost: once the lease is free, another worker resumes the run, and the call
    // that was cut off waits in doubt (its tool declares nothing).
    let resumed = loop {
        match agent.resume_stored(store.inner.clone(), "unrenewed").await {
            Err(PromptError::Store {
                source: StoreError::Busy { .. },
                ..
            }) => tokio::time::sleep(LEASE / 4).await,
            other => break other,
        }
    };
    let Err(PromptError::Suspended { run }) = resumed else {
        panic!("expected the call in doubt, got {resumed:?}");
    };
    let waiting: Vec<_> = run.pending().collect();
    assert_eq!(waiting.len(), 1);
    assert!(waiting[0].is_in_doubt(), "{:?}", waiting[0]);
}

#[tokio::test]
async fn a_run_whose_renewals_fail_stops_when_its_lease_runs_out() {
    stops_once_its_lease_ran_out(Fault::FailRenewalsUntilAClaim).await;
}

#[tokio::test]
async fn a_run_whose_renewals_never_answer_stops_when_its_lease_runs_out() {
    stops_once_its_lease_ran_out(Fault::HangRenewals).await;
}
