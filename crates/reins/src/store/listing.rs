//! Listing stored runs a page at a time, and the rules for deleting finished ones.

use super::{RunSummary, StoreError, status_from_name};
use crate::agent::RunStatus;

/// Which stored runs to list, a page at a time ([`RunStore::list_runs`](super::RunStore::list_runs)).
///
/// Runs are listed in the byte order of their ids, the same in every store, so a cursor stays
/// valid while runs are added or deleted: a page never repeats a run of an earlier page.
///
/// ```
/// use reins::agent::RunStatus;
/// use reins::store::RunQuery;
///
/// let first = RunQuery::new().status(RunStatus::Suspended).page_size(50);
/// assert_eq!(first.page_size, 50);
/// assert!(first.after.is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunQuery {
    /// Only runs with this status (`None`: every run).
    pub status: Option<RunStatus>,
    /// At most this many runs per page (0 counts as 1).
    pub page_size: usize,
    /// Where the page starts: the previous page's [`RunPage::next`] (`None`: the first page).
    pub after: Option<RunCursor>,
}

impl RunQuery {
    /// How many runs a page holds unless [`page_size`](Self::page_size) says otherwise.
    pub const DEFAULT_PAGE_SIZE: usize = 100;

    /// The first page of every run, [`DEFAULT_PAGE_SIZE`](Self::DEFAULT_PAGE_SIZE) runs long.
    pub fn new() -> Self {
        RunQuery {
            status: None,
            page_size: Self::DEFAULT_PAGE_SIZE,
            after: None,
        }
    }

    /// Only runs with `status`.
    pub fn status(mut self, status: RunStatus) -> Self {
        self.status = Some(status);
        self
    }

    /// At most `page_size` runs per page.
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size;
        self
    }

    /// The page after the one that returned `cursor` as its [`RunPage::next`].
    pub fn after(mut self, cursor: RunCursor) -> Self {
        self.after = Some(cursor);
        self
    }

    /// The page size as the stores use it (at least 1).
    pub(crate) fn limit(&self) -> usize {
        self.page_size.max(1)
    }

    /// The run id a page starts after, if any.
    pub(crate) fn after_id(&self) -> Option<&str> {
        self.after.as_ref().map(|cursor| cursor.0.as_str())
    }
}

impl Default for RunQuery {
    fn default() -> Self {
        RunQuery::new()
    }
}

/// Where the next page of a listing starts ([`RunPage::next`]). It is the id of the last run
/// listed, so it can be kept as text (e.g. in a web page's link) and rebuilt with
/// [`RunCursor::new`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RunCursor(String);

impl RunCursor {
    /// A cursor from its text ([`as_str`](Self::as_str)).
    pub fn new(text: impl Into<String>) -> Self {
        RunCursor(text.into())
    }

    /// The cursor as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// One page of stored runs, as listed by
/// [`RunStore::list_runs`](super::RunStore::list_runs).
#[derive(Debug, Clone, PartialEq)]
pub struct RunPage {
    /// The runs, in the byte order of their ids.
    pub runs: Vec<RunSummary>,
    /// Where the next page starts, or `None` when this is the last one.
    pub next: Option<RunCursor>,
}

/// Makes a page of the runs a store read with a limit one larger than the page size: the
/// extra run only tells that there is a next page.
pub(crate) fn page_of(mut runs: Vec<RunSummary>, query: &RunQuery) -> RunPage {
    let more = runs.len() > query.limit();
    runs.truncate(query.limit());
    let next = if more {
        runs.last().map(|run| RunCursor(run.run_id.clone()))
    } else {
        None
    };
    RunPage { runs, next }
}

/// Whether a run with the stored `status` may be deleted: only a finished one.
pub(crate) fn check_deletable(run_id: &str, status: &str) -> Result<(), StoreError> {
    match status_from_name(status) {
        RunStatus::Completed | RunStatus::Failed => Ok(()),
        status => Err(StoreError::NotFinished {
            run_id: run_id.to_owned(),
            status,
        }),
    }
}

/// The stored status names of finished runs, for the stores' queries.
pub(crate) const FINISHED: [&str; 2] = ["completed", "failed"];
