//! What a refresh of the runs page reads: the runs it shows, not every run of the store, and
//! the summaries of the runs waiting and of those written last, not of every run; and each
//! run's age from when the store created it, not from its oldest checkpoint kept.

use super::{MOST_RUNS_LISTED, MOST_RUNS_READ, shown_runs};
use crate::test_runs::{next_millisecond, now_ms, state, stored};
use reins::agent::{RunState, RunStatus};
use reins::store::{
    BoxedStore, Checkpoint, MemoryStore, PendingApprovals, RecentRuns, RecordedDecision, RunPage,
    RunQuery, RunStore, RunSummary, StoreError, StoreWrapper,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A [`MemoryStore`] that counts the reads of one run's records (state, checkpoints,
/// decisions) and the listings of what waits, which read every suspended run; and, apart,
/// the run summaries its listings return.
#[derive(Clone, Default)]
struct ReadsCounted {
    inner: MemoryStore,
    reads: Arc<AtomicUsize>,
    summaries: Arc<AtomicUsize>,
}

impl ReadsCounted {
    fn reads(&self) -> usize {
        self.reads.load(Ordering::Relaxed)
    }

    fn summaries(&self) -> usize {
        self.summaries.load(Ordering::Relaxed)
    }

    fn count_summaries(&self, listed: usize) {
        self.summaries.fetch_add(listed, Ordering::Relaxed);
    }

    fn count(&self) {
        self.reads.fetch_add(1, Ordering::Relaxed);
    }
}

impl StoreWrapper for ReadsCounted {
    type Inner = MemoryStore;

    fn inner(&self) -> &MemoryStore {
        &self.inner
    }

    async fn load(&self, run_id: &str) -> Result<RunState, StoreError> {
        self.count();
        self.inner.load(run_id).await
    }

    async fn checkpoints(&self, run_id: &str) -> Result<Vec<Checkpoint>, StoreError> {
        self.count();
        self.inner.checkpoints(run_id).await
    }

    async fn load_checkpoint(&self, run_id: &str, version: i64) -> Result<RunState, StoreError> {
        self.count();
        self.inner.load_checkpoint(run_id, version).await
    }

    async fn decisions(&self, run_id: &str) -> Result<Vec<RecordedDecision>, StoreError> {
        self.count();
        self.inner.decisions(run_id).await
    }

    async fn pending_approvals(&self) -> Result<PendingApprovals, StoreError> {
        self.count();
        self.inner.pending_approvals().await
    }

    async fn list(&self) -> Result<Vec<RunSummary>, StoreError> {
        let listed = self.inner.list().await?;
        self.count_summaries(listed.len());
        Ok(listed)
    }

    async fn list_runs(&self, query: &RunQuery) -> Result<RunPage, StoreError> {
        let page = self.inner.list_runs(query).await?;
        self.count_summaries(page.runs.len() + page.unreadable.len());
        Ok(page)
    }

    async fn recent_runs(
        &self,
        status: Option<RunStatus>,
        limit: usize,
    ) -> Result<RecentRuns, StoreError> {
        let recent = self.inner.recent_runs(status, limit).await?;
        self.count_summaries(recent.runs.len() + recent.unreadable.len());
        Ok(recent)
    }
}

#[tokio::test]
async fn a_refresh_reads_the_summaries_of_the_runs_waiting_and_written_last_not_of_every_run() {
    let store = ReadsCounted::default();
    // Two runs wait, the oldest of all among them; twice as many finished runs as a refresh
    // can read came after them.
    stored(&store.inner, "0-suspended", RunStatus::Suspended).await;
    stored(&store.inner, "1-suspended", RunStatus::Suspended).await;
    let finished = 2 * MOST_RUNS_READ;
    for run in 0..finished {
        stored(&store.inner, &format!("run-{run:04}"), RunStatus::Completed).await;
    }
    let shown = shown_runs(&BoxedStore::new(store.clone()), |_| true)
        .await
        .expect("shown");

    // Those of the runs waiting and of the runs written last, at most as many as can be
    // read: not one per run of the store.
    assert!(
        store.summaries() <= 2 + MOST_RUNS_READ,
        "{} summaries read of {} runs",
        store.summaries(),
        finished + 2
    );
    assert_eq!(store.reads(), MOST_RUNS_LISTED + 2, "states and decisions");
    assert_eq!(shown.runs.len(), MOST_RUNS_LISTED);
    let ids: Vec<&str> = shown.runs.iter().map(|r| r.state.run_id.as_str()).collect();
    assert!(
        ids.contains(&"0-suspended") && ids.contains(&"1-suspended"),
        "{ids:?}"
    );
    let newest = format!("run-{:04}", finished - 1);
    assert_eq!(ids.last(), Some(&newest.as_str()), "the last written last");
    let oldest_shown = format!("run-{:04}", finished - (MOST_RUNS_LISTED - 2));
    assert!(ids.contains(&oldest_shown.as_str()), "{ids:?}");
    let oldest_left_out = format!("run-{:04}", finished - (MOST_RUNS_LISTED - 1));
    assert!(!ids.contains(&oldest_left_out.as_str()), "{ids:?}");
    assert!(shown.left_out > 0);
    // Older runs than those read are not counted: the page says "or more".
    assert!(shown.older_not_counted);
}

#[tokio::test]
async fn a_refresh_reads_the_runs_it_shows_not_every_run() {
    let store = ReadsCounted::default();
    // The oldest run is suspended: shown however many runs came after it.
    stored(&store.inner, "0-suspended", RunStatus::Suspended).await;
    let runs = MOST_RUNS_LISTED + 60;
    for run in 1..runs {
        stored(&store.inner, &format!("run-{run:04}"), RunStatus::Completed).await;
    }
    let shown = shown_runs(&BoxedStore::new(store.clone()), |_| true)
        .await
        .expect("shown");

    // One read per run shown (its state) and one for the suspended one's decisions: none for
    // the runs left out, no listing of every suspended run, no checkpoint.
    assert_eq!(store.reads(), MOST_RUNS_LISTED + 1);
    assert_eq!(shown.runs.len(), MOST_RUNS_LISTED);
    assert_eq!(shown.left_out, runs - MOST_RUNS_LISTED);
    assert!(
        !shown.older_not_counted,
        "every run was listed: the count is exact"
    );
    let ids: Vec<&str> = shown.runs.iter().map(|r| r.state.run_id.as_str()).collect();
    assert!(ids.contains(&"0-suspended"), "{ids:?}");
    assert!(
        ids.contains(&format!("run-{:04}", runs - 1).as_str()),
        "{ids:?}"
    );
    assert!(
        !ids.contains(&"run-0001"),
        "the oldest finished run is left out"
    );
}

#[tokio::test]
async fn runs_of_other_agents_are_skipped_unread_by_their_summaries() {
    let store = ReadsCounted::default();
    for run in 0..3 {
        stored(&store.inner, &format!("mine-{run}"), RunStatus::Completed).await;
        let mut theirs = state(&format!("theirs-{run}"), RunStatus::Completed);
        theirs.agent_name = Some("other".to_owned());
        crate::test_runs::store(&store.inner, &theirs).await;
    }
    // Another agent's run whose summary does not say whose it is (as a database lists a run
    // an earlier release last wrote): read to learn it, and skipped.
    let mut unnamed = state("theirs-unnamed", RunStatus::Completed);
    unnamed.agent_name = Some("other".to_owned());
    let record = serde_json::to_string(&unnamed).expect("encoded");
    store.inner.put_raw("theirs-unnamed", 1, &record);
    store.inner.put_raw_status("theirs-unnamed", "completed");

    let shown = shown_runs(&BoxedStore::new(store.clone()), |agent| agent.is_none())
        .await
        .expect("shown");
    let ids: Vec<&str> = shown.runs.iter().map(|r| r.state.run_id.as_str()).collect();
    assert_eq!(ids, ["mine-0", "mine-1", "mine-2"]);
    assert_eq!(store.reads(), 4, "the runs shown and the unnamed one");
    assert_eq!(
        shown.left_out, 0,
        "each run is shown or known to be another's"
    );
}

#[tokio::test]
async fn a_run_is_as_old_as_its_creation_though_its_first_checkpoints_were_pruned() {
    let store = ReadsCounted {
        inner: MemoryStore::new().keep_checkpoints(1),
        ..ReadsCounted::default()
    };
    let running = state("long", RunStatus::Running);
    let before = now_ms();
    let mut lease = store.inner.create(&running, "test").await.expect("created");
    let created_by = now_ms();
    for _ in 0..3 {
        next_millisecond().await;
        lease = store
            .inner
            .checkpoint(&lease, &running, &[], false)
            .await
            .expect("checkpointed");
    }
    let oldest_kept = store.inner.checkpoints("long").await.expect("checkpoints")[0].created_at_ms;
    assert!(
        oldest_kept > created_by,
        "the first checkpoints were pruned"
    );

    let shown = shown_runs(&BoxedStore::new(store.clone()), |_| true)
        .await
        .expect("shown");
    let created = shown.runs[0].created_at_ms;
    assert!((before..=created_by).contains(&created), "{created}");
    assert_eq!(store.reads(), 1, "its state only: no checkpoint read");
}
