//! What the tests of run listings share: the stores' clock, and a run's summary as both
//! listings (`list_runs` a page at a time, and `list`) give it.

use reins::store::{RunQuery, RunStore, RunSummary};

/// Milliseconds since the Unix epoch, the stores' clock.
pub(super) fn now_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    i64::try_from(since.as_millis()).unwrap()
}

/// Waits until the clock has passed `ms`, so the next write is stamped later than `ms`.
pub(super) async fn after(ms: i64) {
    while now_ms() <= ms {
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
}

/// `field` of `run_id`'s summary, as both listings give it (they must agree).
pub(super) async fn listed<T: PartialEq + std::fmt::Debug>(
    store: &impl RunStore,
    run_id: &str,
    field: impl Fn(&RunSummary) -> T,
) -> T {
    let page = store.list_runs(&RunQuery::new()).await.unwrap();
    assert!(page.unreadable.is_empty(), "{page:?}");
    let pick = |runs: &[RunSummary]| {
        runs.iter()
            .find(|run| run.run_id == run_id)
            .map(&field)
            .unwrap_or_else(|| panic!("{run_id} is not listed: {runs:?}"))
    };
    let paged = pick(&page.runs);
    assert_eq!(
        pick(&store.list().await.unwrap()),
        paged,
        "both listings agree"
    );
    paged
}
