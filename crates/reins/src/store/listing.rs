//! Listing stored runs a page at a time, and the rules for deleting finished ones.

#[cfg(doc)]
use super::Lease;
use super::{StoreError, UnreadableRun, check_readable, status_from_name};
use crate::run::RunStatus;

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
///
/// A selected run whose record this release cannot read — written in a newer release's
/// format, or one no upgrade reaches, or stored with a status it does not know — is not left
/// out: it is in
/// [`unreadable`](Self::unreadable), by id with the reason, and counts towards the page size
/// like the others. The listing reads the record's format, not its whole state, so a record
/// whose state is corrupt is listed in [`runs`](Self::runs) and reported when it is loaded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunPage {
    /// The runs this release can read, in the byte order of their ids.
    pub runs: Vec<RunSummary>,
    /// The runs of the page this release cannot read, in the byte order of their ids, each
    /// with why (e.g. [`StoreError::UnsupportedFormat`]). Their records were left untouched.
    pub unreadable: Vec<UnreadableRun>,
    /// Where the next page starts, or `None` when this is the last one.
    pub next: Option<RunCursor>,
}

/// One run as a listing read it: its summary, or why this release cannot read its record.
pub(crate) type Listed = Result<RunSummary, UnreadableRun>;

/// A run's lease as a store keeps it: the worker that claimed it (none once given back) and
/// when the claim runs out, in milliseconds since the Unix epoch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StoredLease<'a> {
    pub owner: Option<&'a str>,
    pub until_ms: i64,
}

impl StoredLease<'_> {
    /// Who holds it at `now`: nobody once it was given back or ran out.
    fn holder(self, now: i64) -> Option<LeaseHolder> {
        let owner = self.owner?;
        (self.until_ms > now).then(|| LeaseHolder {
            owner: owner.to_owned(),
            expires_at_ms: self.until_ms,
        })
    }
}

/// When a store's record of a run was created and last written, in milliseconds since the
/// Unix epoch ([`RunSummary::created_at_ms`], [`RunSummary::updated_at_ms`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StoredTimes {
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

/// The summary of a run stored with `status` (its name as stored) at `times`, its lease seen
/// at `now` (milliseconds since the Unix epoch, one clock reading for a whole listing).
pub(crate) fn summary(
    run_id: String,
    status: &str,
    version: i64,
    times: StoredTimes,
    lease: StoredLease<'_>,
    now: i64,
) -> Result<RunSummary, StoreError> {
    let status = status_from_name(&run_id, status)?;
    Ok(RunSummary::new(
        run_id,
        status,
        version,
        times.created_at_ms,
        times.updated_at_ms,
    )
    .with_lease(lease.holder(now)))
}

/// A listed run stored with `status` (its name as stored) in `format` at `times`: unreadable
/// when this release cannot read that format or does not know that status.
pub(crate) fn listed(
    run_id: String,
    status: &str,
    version: i64,
    format: i64,
    times: StoredTimes,
    lease: StoredLease<'_>,
    now: i64,
) -> Listed {
    let read = check_readable(&run_id, format).and_then(|()| status_from_name(&run_id, status));
    match read {
        Ok(status) => Ok(RunSummary::new(
            run_id,
            status,
            version,
            times.created_at_ms,
            times.updated_at_ms,
        )
        .with_lease(lease.holder(now))),
        Err(error) => Err(UnreadableRun { run_id, error }),
    }
}

/// Makes a page of the runs a store read, in id order, with a limit one larger than the page
/// size: the extra run only tells that there is a next page.
pub(crate) fn page_of(mut rows: Vec<Listed>, query: &RunQuery) -> RunPage {
    let more = rows.len() > query.limit();
    rows.truncate(query.limit());
    let next = if more {
        rows.last().map(|row| {
            let run_id = match row {
                Ok(run) => &run.run_id,
                Err(run) => &run.run_id,
            };
            RunCursor(run_id.clone())
        })
    } else {
        None
    };
    let mut page = RunPage {
        next,
        ..RunPage::default()
    };
    for row in rows {
        match row {
            Ok(run) => page.runs.push(run),
            Err(run) => page.unreadable.push(run),
        }
    }
    page
}

/// Whether a run stored in `format` with `status` may be deleted: only a finished one whose
/// record this release can read (a newer release's record, or one whose status is unknown,
/// is left as it is).
pub(crate) fn check_deletable(run_id: &str, format: i64, status: &str) -> Result<(), StoreError> {
    check_readable(run_id, format)?;
    match status_from_name(run_id, status)? {
        RunStatus::Completed | RunStatus::Failed => Ok(()),
        status => Err(StoreError::NotFinished {
            run_id: run_id.to_owned(),
            status,
        }),
    }
}

/// The stored status names of finished runs, for the stores' queries.
pub(crate) const FINISHED: [&str; 2] = ["completed", "failed"];

/// A stored run, as listed.
///
/// A run stored as [`RunStatus::Running`] is either driven by a worker right now or was left
/// by one (its process stopped or died); [`lease`](Self::lease) tells them apart: a run with
/// a live lease is held by the worker it names, and a resume is refused
/// ([`StoreError::Busy`]) until the lease expires; a running run without one was left and
/// can be resumed at once.
///
/// A store of your own makes one with [`RunSummary::new`]: fields may be added in later
/// releases, so it cannot be written as a struct literal outside this crate.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunSummary {
    /// The run's id.
    pub run_id: String,
    /// Where it is.
    pub status: RunStatus,
    /// Its stored version.
    pub version: i64,
    /// When the run was stored ([`RunStore::create`](super::RunStore::create)), in
    /// milliseconds since the Unix epoch (the clock of the process that created it; the
    /// database server's for `PostgresStore`). Unlike the oldest of its
    /// [`checkpoints`](super::RunStore::checkpoints), it stays when a store keeps only the
    /// newest checkpoints (`keep_checkpoints`). A run forked from another was created when it
    /// was forked. For a run stored by a release that did not record it, the
    /// SQL stores take the time of its oldest checkpoint kept when they first open the
    /// database, else when it was last written.
    pub created_at_ms: i64,
    /// When the run's record was last written, in milliseconds since the Unix epoch (the
    /// clock of the process that wrote it; the database server's for `PostgresStore`): when it
    /// was created, when a checkpoint was written, or when a worker claimed it to resume it.
    /// It is the latest checkpoint's
    /// [`created_at_ms`](super::Checkpoint::created_at_ms) unless a worker claimed the run
    /// after that checkpoint and has not written one since (a resume that has only begun,
    /// or whose process died before its first step). Recording a decision
    /// ([`RunStore::decide`](super::RunStore::decide)) does not move it, nor, in this crate's
    /// stores, does renewing a lease ([`RunStore::renew`](super::RunStore::renew)), so a run
    /// a worker holds while it waits on a slow model or tool keeps its place in a listing
    /// ordered by it. [`RunStore::expire`](super::RunStore::expire) measures a finished run's
    /// age from it.
    pub updated_at_ms: i64,
    /// Who holds the run's lease and until when, when a claim's lease is live as the run is
    /// listed; `None` when nobody holds it: the lease was given back (the run finished or
    /// paused, or its process stopped it on purpose) or ran out (its process died).
    pub lease: Option<LeaseHolder>,
    /// The name of the agent whose run it is
    /// ([`RunState::agent_name`](crate::agent::RunState::agent_name) as the run's state was
    /// last written), read without loading the run, so a program sharing a store with other
    /// agents can pass over their runs unread. `None` for a run of an agent without a name,
    /// and for one whose agent the store's listing cannot tell: in the SQL stores, a run an
    /// earlier release stored after this release first opened the database (the runs
    /// already there are named then), until this release writes it, or one whose column was
    /// changed to something else than text behind the store's back. For such a run,
    /// [`RunStore::load`](super::RunStore::load) tells.
    pub agent_name: Option<String>,
}

impl RunSummary {
    /// The summary of a run `run_id` with `status` at `version`, created at `created_at_ms`
    /// and last written at `updated_at_ms` (milliseconds since the Unix epoch), whose lease
    /// nobody holds ([`with_lease`](Self::with_lease) says who does), of no named agent
    /// ([`with_agent_name`](Self::with_agent_name) names it).
    pub fn new(
        run_id: impl Into<String>,
        status: RunStatus,
        version: i64,
        created_at_ms: i64,
        updated_at_ms: i64,
    ) -> Self {
        RunSummary {
            run_id: run_id.into(),
            status,
            version,
            created_at_ms,
            updated_at_ms,
            lease: None,
            agent_name: None,
        }
    }

    /// The summary with `agent_name` as the name of the run's agent.
    pub fn with_agent_name(mut self, agent_name: Option<String>) -> Self {
        self.agent_name = agent_name;
        self
    }

    /// The summary with `lease` as who holds the run's lease.
    pub fn with_lease(mut self, lease: Option<LeaseHolder>) -> Self {
        self.lease = lease;
        self
    }
}

/// A live lease on a listed run ([`RunSummary::lease`]): the worker that holds it, and when
/// it expires unless that worker writes a checkpoint or renews it first. A worker that died
/// keeps it until then: a lease names who may drive the run, not that its process still
/// runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseHolder {
    /// The name of the worker that claimed the run
    /// ([`PromptRequest::worker`](crate::agent::PromptRequest::worker), [`Lease::owner`]): a
    /// label for people, the one [`StoreError::Busy`] shows.
    pub owner: String,
    /// When the lease runs out, in milliseconds since the Unix epoch (the clock of the
    /// process that claimed or last renewed it; the database server's for
    /// `PostgresStore`).
    pub expires_at_ms: i64,
}
