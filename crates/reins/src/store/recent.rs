//! The runs written last ([`RunStore::recent_runs`]): what the built-in stores read with one
//! ordered, limited query, and the default that lists every run to find them.

use super::listing::Listed;
use super::{RunQuery, RunStore, RunSummary, StoreError, UnreadableRun};
use crate::run::RunStatus;
use std::cmp::Reverse;

/// The runs written last, as listed by [`RunStore::recent_runs`].
///
/// A selected run whose record this release cannot read (a newer release's format, a status
/// it does not know) is not left out: it is in [`unreadable`](Self::unreadable), by id with
/// the reason, and counts towards the limit like the others.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecentRuns {
    /// The runs this release can read, the most recently written first; of runs written in
    /// the same millisecond, the last in the byte order of their ids first.
    pub runs: Vec<RunSummary>,
    /// The runs among them this release cannot read, in the same order, each with why. Their
    /// records were left untouched.
    pub unreadable: Vec<UnreadableRun>,
}

/// The order of [`RecentRuns`]: the last written first, ties by id, the last first.
pub(crate) fn newest_first(updated_at_ms: i64, run_id: &str) -> Reverse<(i64, &str)> {
    Reverse((updated_at_ms, run_id))
}

/// The runs a store read, already in [`RecentRuns`]' order and limited, split into those it
/// can read and those it cannot.
pub(crate) fn recent_of(rows: Vec<Listed>) -> RecentRuns {
    let mut recent = RecentRuns::default();
    for row in rows {
        match row {
            Ok(run) => recent.runs.push(run),
            Err(run) => recent.unreadable.push(run),
        }
    }
    recent
}

/// How many summaries one listing call of the default asks for.
const SUMMARIES_PER_PAGE: usize = 1000;

/// [`RunStore::recent_runs`] for a store that does not say how: every summary of the
/// selected runs, a page at a time, sorted. A listing does not say when an unreadable run was
/// last written, so those count as written before every readable run, all in one
/// millisecond.
pub(crate) async fn by_listing<S: RunStore + ?Sized>(
    store: &S,
    status: Option<RunStatus>,
    limit: usize,
) -> Result<RecentRuns, StoreError> {
    let mut query = RunQuery::new().page_size(SUMMARIES_PER_PAGE);
    query.status = status;
    let mut recent = RecentRuns::default();
    loop {
        let page = store.list_runs(&query).await?;
        recent.runs.extend(page.runs);
        recent.unreadable.extend(page.unreadable);
        match page.next {
            Some(next) => query = query.after(next),
            None => break,
        }
    }
    recent.runs.sort_by(|a, b| {
        newest_first(a.updated_at_ms, &a.run_id).cmp(&newest_first(b.updated_at_ms, &b.run_id))
    });
    recent.runs.truncate(limit);
    // Listed in id order: the last id first, as for readable runs written together.
    recent.unreadable.reverse();
    recent
        .unreadable
        .truncate(limit.saturating_sub(recent.runs.len()));
    Ok(recent)
}
