//! Taking a run over from a worker known to be dead ([`RunStore::claim_from`]): at once, only
//! from the worker named while it still holds the run, never a finished run.

use super::per_store::per_store;
use super::{RunStateBuilder, version_of};
use reins::agent::RunStatus;
use reins::store::{BoxedStore, ClaimedRun, MemoryStore, RunStore, StoreError, StoreWrapper};

/// A run created by the worker `dead`, whose lease is live (as after its process was killed).
async fn held_by_dead(store: &impl RunStore, run_id: &str) -> reins::store::Lease {
    let mut state = RunStateBuilder::suspended_example();
    state.run_id = run_id.to_owned();
    store.create(&state, "dead").await.unwrap()
}

/// Whether `error` is a refusal as busy naming `holder`.
fn busy_by(error: &StoreError, holder: &str) -> bool {
    matches!(error, StoreError::Busy { owner, .. } if owner == holder)
}

/// A run whose worker died is taken over at once from it by name: the new claim holds it
/// with a token of its own, and the dead worker's lease writes nothing more.
async fn a_dead_holder_is_taken_over(store: impl RunStore) {
    let dead = held_by_dead(&store, "taken").await;
    let error = store.claim("taken", "next").await.unwrap_err();
    assert!(
        busy_by(&error, "dead"),
        "a claim waits for the lease: {error:?}"
    );

    let ClaimedRun { state, lease, .. } = store.claim_from("taken", "next", "dead").await.unwrap();
    assert_eq!(lease.owner, "next");
    assert_ne!(
        lease.token, dead.token,
        "the takeover is a claim of its own"
    );
    assert!(lease.version > dead.version);
    let error = store
        .checkpoint(&dead, &state, &[], false)
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Conflict { .. }), "{error:?}");
    let error = store.claim("taken", "third").await.unwrap_err();
    assert!(
        busy_by(&error, "next"),
        "the new claim holds the run: {error:?}"
    );
    store.checkpoint(&lease, &state, &[], true).await.unwrap();

    // Nobody holds it now: naming a holder claims it as a claim would.
    let claimed = store.claim_from("taken", "later", "dead").await.unwrap();
    assert_eq!(claimed.lease.owner, "later");
}

per_store!(a_dead_holder_is_taken_over);

/// A takeover naming a worker that no longer holds the run (another claim replaced it) is
/// refused as busy, naming the claim that does, and leaves that claim holding the run.
async fn a_replaced_holder_is_not_taken_over(store: impl RunStore) {
    held_by_dead(&store, "replaced").await;
    let first = store.claim_from("replaced", "first", "dead").await.unwrap();
    let version = version_of(&store, "replaced").await;

    let error = store
        .claim_from("replaced", "second", "dead")
        .await
        .unwrap_err();
    assert!(busy_by(&error, "first"), "{error:?}");
    assert_eq!(
        version_of(&store, "replaced").await,
        version,
        "nothing written"
    );
    store
        .checkpoint(&first.lease, &first.state, &[], true)
        .await
        .unwrap();
}

per_store!(a_replaced_holder_is_not_taken_over);

/// Two takeovers from the same dead worker at once: exactly one takes the run, the other is
/// refused as busy by the winner.
async fn racing_takeovers(store: impl RunStore + Clone) {
    held_by_dead(&store, "raced").await;
    let (a, b) = tokio::join!(
        store.claim_from("raced", "a", "dead"),
        store.claim_from("raced", "b", "dead"),
    );
    let (won, refused) = match (a, b) {
        (Ok(won), Err(refused)) | (Err(refused), Ok(won)) => (won, refused),
        other => panic!("expected one takeover and one refusal, got {other:?}"),
    };
    assert!(busy_by(&refused, &won.lease.owner), "{refused:?}");
}

per_store!(racing_takeovers, sqlite file);

/// A finished run is not taken over, even from the worker that holds it: refused as
/// finished, the record unchanged.
async fn a_finished_run_is_not_taken_over(store: impl RunStore) {
    let mut state = RunStateBuilder::suspended_example();
    state.run_id = "finished".to_owned();
    state.status = RunStatus::Completed;
    store.create(&state, "dead").await.unwrap();
    let version = version_of(&store, "finished").await;
    let error = store
        .claim_from("finished", "next", "dead")
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::Finished {
                status: RunStatus::Completed,
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(version_of(&store, "finished").await, version);
}

per_store!(a_finished_run_is_not_taken_over);

/// A store that wraps a memory store and changes nothing.
struct Unchanged(MemoryStore);

impl StoreWrapper for Unchanged {
    type Inner = MemoryStore;

    fn inner(&self) -> &MemoryStore {
        &self.0
    }
}

/// A boxed store and a wrapper pass a takeover on to the store inside, which takes over
/// (the trait's default would refuse it as busy).
#[tokio::test]
async fn wrapped_stores_take_over() {
    let boxed = BoxedStore::new(Unchanged(MemoryStore::new()));
    held_by_dead(&boxed, "wrapped").await;
    let claimed = boxed.claim_from("wrapped", "next", "dead").await.unwrap();
    assert_eq!(claimed.lease.owner, "next");
}
