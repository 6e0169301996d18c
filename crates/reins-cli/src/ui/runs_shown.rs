//! Which runs the inbox's first page shows, chosen from run summaries before any run is read:
//! the page is built again every two seconds while it is open, so what it reads grows with
//! the rows it shows and the runs waiting for a person, not with the runs the store holds.
//! The summaries are those of every suspended run and of the runs written last
//! ([`RunStore::recent_runs`], one indexed query in the built-in stores). A summary
//! ([`RunSummary`]) says a run's status, when it was created and last written, who holds it
//! and whose run it is; only the runs chosen are loaded (and, for a suspended one, its
//! decisions read, to tell what still waits), and another agent's run is passed over unread.

use crate::runs::{ListedRun, UnreadableListed};
use reins::agent::RunStatus;
use reins::store::{BoxedStore, PendingApproval, RunStore, RunSummary, StoreError};
use std::collections::HashSet;

/// The most runs the first page lists: a store of thousands would make a page of megabytes,
/// built and sent again every two seconds.
pub(super) const MOST_RUNS_LISTED: usize = 200;

/// The most runs a refresh loads. A run whose summary names no agent (of an agent without a
/// name, or last written by a release that did not record it) is loaded to learn whose it
/// is, and skipped if another agent's, so this bounds the work when they are many. Runs past
/// it are counted among those not listed.
pub(super) const MOST_RUNS_READ: usize = 2 * MOST_RUNS_LISTED;

/// The runs the page shows and what it says about the others.
pub(super) struct ShownRuns {
    /// The runs shown, the last written last.
    pub runs: Vec<ListedRun>,
    /// The calls of the shown runs that wait for a decision.
    pub waiting: Vec<PendingApproval>,
    /// The store's runs this release cannot read: listed so, or failing to load.
    pub unreadable: Vec<UnreadableListed>,
    /// How many readable runs of the store are neither shown nor known to be another
    /// agent's: exact unless [`older_not_counted`](Self::older_not_counted), else at least
    /// this many.
    pub left_out: usize,
    /// Whether the store may hold older runs than those read, not counted in
    /// [`left_out`](Self::left_out): the runs written last filled what a refresh reads, and
    /// counting the older ones would read them all.
    pub older_not_counted: bool,
}

/// The summaries to choose from, in the order in which runs are chosen: every suspended run
/// (they may wait for a person, whom the inbox is for), then the [`MOST_RUNS_READ`] runs
/// written last of the others (no more can be read); each the most recently written first
/// (of runs written in the same millisecond, the last in id order first, as the table shows
/// them). With them, the runs of both listings this release cannot read.
async fn summaries(store: &BoxedStore) -> Result<Summaries, StoreError> {
    let suspended = store
        .recent_runs(Some(RunStatus::Suspended), usize::MAX)
        .await?;
    let recent = store.recent_runs(None, MOST_RUNS_READ).await?;
    let older_not_counted = recent.runs.len() + recent.unreadable.len() >= MOST_RUNS_READ;
    let mut seen: HashSet<String> = HashSet::new();
    let mut unreadable = Vec::new();
    for run in suspended.unreadable.into_iter().chain(recent.unreadable) {
        if seen.insert(run.run_id.clone()) {
            unreadable.push(UnreadableListed {
                reason: run.error.to_string(),
                run_id: run.run_id,
            });
        }
    }
    // A run suspended is listed by both: chosen once, among the suspended.
    let mut chosen = Vec::new();
    for run in suspended.runs.into_iter().chain(recent.runs) {
        if seen.insert(run.run_id.clone()) {
            chosen.push(run);
        }
    }
    Ok(Summaries {
        chosen,
        unreadable,
        older_not_counted,
    })
}

/// What [`summaries`] found.
struct Summaries {
    /// The runs to choose from, in order.
    chosen: Vec<RunSummary>,
    /// The runs of both listings this release cannot read.
    unreadable: Vec<UnreadableListed>,
    /// Whether the runs written last filled what a refresh reads (older ones may be left).
    older_not_counted: bool,
}

/// The runs of `store` the page shows: those of the agents `serves` (given a run's agent's
/// name: the inbox's agent's), chosen in the order of [`summaries`], at most
/// [`MOST_RUNS_LISTED`] of them, loading at most [`MOST_RUNS_READ`]. A run whose summary
/// names an agent `serves` refuses is passed over unread.
pub(super) async fn shown_runs(
    store: &BoxedStore,
    serves: impl Fn(Option<&str>) -> bool,
) -> Result<ShownRuns, StoreError> {
    let Summaries {
        chosen: summaries,
        mut unreadable,
        older_not_counted,
    } = summaries(store).await?;
    let theirs = |summary: &RunSummary| {
        summary
            .agent_name
            .as_deref()
            .is_some_and(|agent| !serves(Some(agent)))
    };
    let mut summaries = summaries.into_iter().filter(|summary| !theirs(summary));
    let (mut shown, mut waiting, mut read) = (Vec::new(), Vec::new(), 0);
    while shown.len() < MOST_RUNS_LISTED && read < MOST_RUNS_READ {
        let Some(summary) = summaries.next() else {
            break;
        };
        read += 1;
        // A run that cannot be read, or whose decisions cannot (as `pending_approvals` says
        // of a suspended one), is named with why; only a failing store fails the page.
        let read_run = async {
            let state = store.load(&summary.run_id).await?;
            let waits = match state.status {
                RunStatus::Suspended if serves(state.agent_name.as_deref()) => {
                    let trail = store.decisions(&summary.run_id).await?;
                    PendingApproval::of_run(&state, &trail)
                }
                _ => Vec::new(),
            };
            Ok::<_, StoreError>((state, waits))
        };
        let state = match read_run.await {
            Ok((state, waits)) => {
                waiting.extend(waits);
                state
            }
            Err(error @ StoreError::Backend(_)) => return Err(error),
            Err(error) => {
                unreadable.push(UnreadableListed {
                    run_id: summary.run_id,
                    reason: error.to_string(),
                });
                continue;
            }
        };
        if !serves(state.agent_name.as_deref()) {
            continue;
        }
        shown.push((
            summary.updated_at_ms,
            ListedRun {
                state,
                lease: summary.lease,
                created_at_ms: summary.created_at_ms,
            },
        ));
    }
    // The runs not read and not known to be another agent's: older or not waiting (of the
    // older ones, those listed).
    let left_out = summaries.count();
    // As `reins runs list` orders them: the last written last, runs written in the same
    // millisecond in id order.
    shown.sort_by(|(a_ms, a), (b_ms, b)| (a_ms, &a.state.run_id).cmp(&(b_ms, &b.state.run_id)));
    unreadable.sort_by(|a, b| a.run_id.cmp(&b.run_id));
    Ok(ShownRuns {
        runs: shown.into_iter().map(|(_, run)| run).collect(),
        waiting,
        unreadable,
        left_out,
        older_not_counted,
    })
}

#[cfg(test)]
mod tests;
