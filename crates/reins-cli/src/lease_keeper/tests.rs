//! Giving a lease back while the store does not answer a write.

use super::{LeaseKeeper, ReleaseError};
use crate::test_runs::{now_ms, state};
use reins::agent::RunStatus;
use reins::store::{BoxedStore, Lease, MemoryStore, RunStore, StoreError, StoreWrapper};
use std::time::Duration;

/// A store whose renewals never answer, as a PostgreSQL server gone silent.
struct SilentRenewals(MemoryStore);

impl StoreWrapper for SilentRenewals {
    type Inner = MemoryStore;

    fn inner(&self) -> &MemoryStore {
        &self.0
    }

    async fn renew(&self, _lease: &Lease) -> Result<Lease, StoreError> {
        std::future::pending().await
    }
}

/// A renewal that does not answer keeps the keeper's lock; the release (Ctrl-C) waits for it
/// only until it gives up, leaving the lease to expire no sooner than a lease's length after
/// the last write that extended it, instead of never returning.
#[tokio::test(start_paused = true)]
async fn a_release_behind_a_renewal_that_never_answers_leaves_the_lease_to_expire() {
    let lease_length = Duration::from_secs(300);
    let store = SilentRenewals(MemoryStore::new().with_lease(lease_length));
    let keeper = LeaseKeeper::new(BoxedStore::new(store));
    let before_create = now_ms();
    let lease = RunStore::create(&keeper, &state("run-silent", RunStatus::Running), "test")
        .await
        .expect("created");
    let renewing = tokio::spawn({
        let keeper = keeper.clone();
        async move { RunStore::renew(&keeper, &lease).await }
    });
    // The renewal takes the lock (time is paused: this sleep only lets it run first).
    tokio::time::sleep(Duration::from_millis(1)).await;

    let released = tokio::time::timeout(Duration::from_secs(3600), keeper.release()).await;
    let Ok(Err(ReleaseError::NoAnswer {
        expires_at_ms: Some(expires_at_ms),
    })) = released
    else {
        panic!("the release did not give up and say when the lease expires: {released:?}");
    };
    let length_ms = i64::try_from(lease_length.as_millis()).expect("ms");
    assert!(
        expires_at_ms >= before_create + length_ms && expires_at_ms <= now_ms() + length_ms,
        "the lease runs out a lease's length after the create: {expires_at_ms}"
    );
    assert!(
        !renewing.is_finished(),
        "the renewal still has not answered"
    );
}
