//! The SQLite run store: [`SqliteStore`], one file shared by the processes of one machine.
//!
//! Each [`RunStore`] method prepares what its transaction needs and hands the work to the
//! store's connection on a blocking thread: the writes of a run are in `writes`, the reads of
//! one run in `reads`, listings across runs in `listings`, deletions in `deletion`, over the
//! tables of `schema` and the row readers of `rows`. `cross_process` signals decisions other
//! processes write to the same file.

mod cross_process;
mod deletion;
mod listings;
mod opening;
mod reads;
mod rows;
mod schema;
#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
mod tests;
mod writes;

use super::notify::{DecisionSignals, FeedSlot};
use super::{
    Checkpoint, CheckpointWithJournal, ClaimedRun, DEFAULT_LEASE, Decision, DecisionWatch,
    JournalEntry, Lease, PendingApprovals, RecentRuns, RecordedDecision, RunPage, RunQuery,
    RunStore, RunSummary, StoreError, expiry_cutoff,
};
use crate::run::{RunState, RunStatus};
use rows::backend;
use rusqlite::Connection;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

/// The embedded [`RunStore`]: one SQLite file in WAL mode, shared safely by the processes of
/// one machine. Cheap to clone.
///
/// ```
/// use reins::agent::{AgentBuilder, RunStatus};
/// use reins::store::{RunStore, SqliteStore};
/// use reins::testing::{ScriptedModel, Turn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let store = SqliteStore::open(dir.path().join("runs.db"))?;
/// let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("Done.")])).build();
/// agent.prompt("Go.").run_id("job-1").durable(store.clone()).await?;
///
/// // Another handle on the same file (another process, say) sees the finished run.
/// let other = SqliteStore::open(dir.path().join("runs.db"))?;
/// let run = other.load("job-1").await?;
/// assert_eq!(run.status, RunStatus::Completed);
/// assert_eq!(run.history.len(), 2);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct SqliteStore {
    connection: Arc<Mutex<Connection>>,
    path: PathBuf,
    lease: Duration,
    /// How many checkpoints of a run are kept (`None`: all).
    keep_checkpoints: Option<usize>,
    /// Shared by every handle on the same file in this process.
    signals: DecisionSignals,
    /// The check for decisions written by other processes, while anyone watches.
    feed: FeedSlot,
    /// Opened with [`open_read_only`](SqliteStore::open_read_only): every write is refused.
    read_only: bool,
}

/// How long an operation waits for another process's write to the file (or its set-up of
/// it) before failing with "database is locked".
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The decision signals of every file opened in this process, so that every handle on one
/// file (whoever opened it) tells the others' watches at once.
static FILES: LazyLock<Mutex<HashMap<PathBuf, (DecisionSignals, FeedSlot)>>> =
    LazyLock::new(Mutex::default);

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// `error` with the file's path before SQLite's message (which does not say which file).
fn named_backend(path: &Path, error: StoreError) -> StoreError {
    match error {
        StoreError::Backend(message) => {
            StoreError::Backend(format!("{}: {message}", path.display()))
        }
        other => other,
    }
}

/// Work for the store's connection, run on a blocking thread by [`SqliteStore::with`].
trait Work<T>: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static {}

impl<T, F> Work<T> for F where F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static {}

impl SqliteStore {
    /// Opens (or creates) the store in the file at `path`: a new or empty file, or one a
    /// `SqliteStore` wrote. A database holding other tables and none of the store's (another
    /// application's) is refused with a [`StoreError::Backend`] naming the file, and left as
    /// it is, rather than filled with the store's tables;
    /// [`open_in_shared_database`](Self::open_in_shared_database) adds them on purpose. Every
    /// error opening the file (one that is not a SQLite database, say) names it. A file whose
    /// tables a newer release set up, in a layout this one cannot use, is refused with
    /// [`StoreError::UnsupportedSchema`] and left as it is. Opening a file whose tables are
    /// set up already only reads it: it does not wait for another process's write.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_file(path.as_ref(), false)
    }

    /// Opens the store in the SQLite database at `path` even when it holds other tables (an
    /// application's own), adding the store's tables (all named `reins_…`) beside them.
    /// Otherwise as [`open`](Self::open).
    pub fn open_in_shared_database(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_file(path.as_ref(), true)
    }

    /// Opens the store in the file at `path` for reading only: nothing is written to the file
    /// or beside it (its journal mode is not set, nor its tables set up), so a user who may
    /// read the file but not write it, or not write in its directory, can list and load runs.
    /// The file must be a store this release can use as it is: one that does not exist, is
    /// empty, or was set up by an earlier release (whose tables opening for writing would
    /// upgrade) is refused with a [`StoreError::Backend`] saying so and naming the file; one
    /// a newer release set up with [`StoreError::UnsupportedSchema`]. Every write through the
    /// handle (a run created, claimed, decided, checkpointed, deleted) is refused with a
    /// [`StoreError::Backend`] saying it was opened read-only.
    ///
    /// ```
    /// use reins::store::{RunStore, SqliteStore};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let dir = tempfile::tempdir()?;
    /// let file = dir.path().join("runs.db");
    /// assert!(SqliteStore::open_read_only(&file).is_err(), "no such file yet");
    /// SqliteStore::open(&file)?;
    /// let reader = SqliteStore::open_read_only(&file)?;
    /// assert!(reader.list().await?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let connection = opening::read_only(path)?;
        let mut store = Self::handle(connection, path.to_path_buf());
        store.read_only = true;
        Ok(store)
    }

    fn open_file(path: &Path, shared: bool) -> Result<Self, StoreError> {
        // SQLite's own messages ("file is not a database") do not say which file; and where
        // it cannot open one, not why (its message then names the file itself).
        let named = |error: rusqlite::Error| {
            let cannot_open = matches!(&error, rusqlite::Error::SqliteFailure(failure, _)
                if failure.code == rusqlite::ErrorCode::CannotOpen);
            match opening::why_unopenable(path).filter(|_| cannot_open) {
                Some(why) => StoreError::Backend(format!("{}: {why}", path.display())),
                None => named_backend(path, backend(error)),
            }
        };
        let connection = Connection::open(path).map_err(named)?;
        Self::prepare(connection, path.to_path_buf(), shared).map_err(|error| match error {
            StoreError::Backend(message) if message.starts_with("unable to open") => {
                match opening::why_unopenable(path) {
                    Some(why) => StoreError::Backend(format!("{}: {why}", path.display())),
                    None => named_backend(path, StoreError::Backend(message)),
                }
            }
            other => named_backend(path, other),
        })
    }

    /// A store in memory (lost when dropped), e.g. for tests.
    pub fn in_memory() -> Result<Self, StoreError> {
        Self::prepare(
            Connection::open_in_memory().map_err(backend)?,
            PathBuf::from(":memory:"),
            false,
        )
    }

    fn prepare(
        mut connection: Connection,
        path: PathBuf,
        shared: bool,
    ) -> Result<Self, StoreError> {
        // The busy timeout makes concurrent writers from other processes (other openers
        // among them) wait for the lock instead of failing. WAL lets readers work while a
        // writer commits. `FULL` syncs the log at every commit: a checkpoint that returned (a
        // tool call marked started among them) survives a power loss, so the call is not run
        // again after it.
        connection.busy_timeout(BUSY_TIMEOUT).map_err(backend)?;
        schema::use_write_ahead_log(&connection, BUSY_TIMEOUT)?;
        connection
            .pragma_update(None, "synchronous", "FULL")
            .map_err(backend)?;
        schema::set_up(&mut connection, shared, &path.display().to_string())?;
        Ok(Self::handle(connection, path))
    }

    /// A handle on `connection`, the file at `path` ready for it.
    fn handle(connection: Connection, path: PathBuf) -> Self {
        let (signals, feed) = if path.as_os_str() == ":memory:" {
            (DecisionSignals::new(), FeedSlot::default())
        } else {
            // One file may be named by many paths: the canonical one is its key.
            let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            FILES
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(key)
                .or_insert_with(|| (DecisionSignals::new(), FeedSlot::default()))
                .clone()
        };
        SqliteStore {
            connection: Arc::new(Mutex::new(connection)),
            path,
            lease: DEFAULT_LEASE,
            keep_checkpoints: None,
            signals,
            feed,
            read_only: false,
        }
    }

    /// How often a [`DecisionWatch`] on a file checks whether another process wrote to it
    /// (SQLite's `PRAGMA data_version`, one cheap query on a connection of its own), and if
    /// so reads the decisions recorded since: a decision made by another process is signalled
    /// within this time. Decisions made through any handle on the file in this process are
    /// signalled at once. The check runs only while a watch is alive.
    pub const CROSS_PROCESS_CHECK: Duration = Duration::from_secs(1);

    /// Sets how long a claim lasts without a checkpoint (default [`DEFAULT_LEASE`]).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Keeps only the newest `newest` checkpoints of each run (at least one): older ones are
    /// deleted as new ones are written, so a long run's record grows with its state, not with
    /// its state times its turns. [`checkpoints`](RunStore::checkpoints) and forks reach back
    /// that far only. By default every checkpoint is kept.
    pub fn keep_checkpoints(mut self, newest: usize) -> Self {
        self.keep_checkpoints = Some(newest.max(1));
        self
    }

    /// Trades durability for write speed: commits no longer wait for the disk (SQLite's
    /// `synchronous=NORMAL` in WAL mode instead of the default `FULL`, which syncs the
    /// write-ahead log at every commit). The file stays consistent, and a crash of the
    /// process loses nothing; but after a power loss or an operating-system crash the last
    /// commits before it may be gone, checkpoints that told the run to go on included. A run
    /// resumed then repeats what they recorded: a model turn is requested again, and a tool
    /// call whose start was lost **runs again**, even one that does not declare itself safe to
    /// repeat — the guarantee that such a call runs at most once then holds only for crashes
    /// of the process. Applies to every clone of this handle (they share one connection), not
    /// to other handles on the file.
    pub fn relaxed_durability(self) -> Result<Self, StoreError> {
        self.connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(backend)?;
        Ok(self)
    }

    /// The file the store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `work` on the connection on a blocking thread.
    async fn with<T: Send + 'static>(&self, work: impl Work<T>) -> Result<T, StoreError> {
        let connection = Arc::clone(&self.connection);
        tokio::task::spawn_blocking(move || {
            let mut connection = connection.lock().unwrap_or_else(PoisonError::into_inner);
            work(&mut connection)
        })
        .await
        .map_err(|error| {
            StoreError::Backend(format!("the store's worker thread failed: {error}"))
        })?
    }

    fn lease_millis(&self) -> i64 {
        i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX)
    }
}

impl RunStore for SqliteStore {
    async fn create(&self, state: &RunState, owner: &str) -> Result<Lease, StoreError> {
        self.writable()?;
        self.with(writes::create(state, owner, self.lease_millis())?)
            .await
    }

    async fn create_forked(
        &self,
        state: &RunState,
        journal: &[JournalEntry],
    ) -> Result<(), StoreError> {
        self.writable()?;
        self.with(writes::create_forked(state, journal)?).await
    }

    async fn claim(&self, run_id: &str, owner: &str) -> Result<ClaimedRun, StoreError> {
        self.writable()?;
        self.with(writes::claim(run_id, owner, self.lease_millis(), None))
            .await
    }

    async fn claim_from(
        &self,
        run_id: &str,
        owner: &str,
        holder: &str,
    ) -> Result<ClaimedRun, StoreError> {
        self.writable()?;
        let lease = self.lease_millis();
        self.with(writes::claim(run_id, owner, lease, Some(holder)))
            .await
    }

    async fn checkpoint(
        &self,
        lease: &Lease,
        state: &RunState,
        journal: &[JournalEntry],
        release: bool,
    ) -> Result<Lease, StoreError> {
        self.writable()?;
        let work = writes::checkpoint(
            lease,
            state,
            journal,
            release,
            self.lease_millis(),
            self.keep_checkpoints,
        )?;
        self.with(work).await
    }

    async fn load(&self, run_id: &str) -> Result<RunState, StoreError> {
        self.with(reads::load(run_id)).await
    }

    async fn journal(&self, run_id: &str) -> Result<Vec<JournalEntry>, StoreError> {
        self.with(reads::journal(run_id)).await
    }

    async fn decide(
        &self,
        run_id: &str,
        decision: &Decision,
    ) -> Result<RecordedDecision, StoreError> {
        self.writable()?;
        let recorded = self.with(writes::decide(run_id, decision)).await?;
        self.signals.recorded(run_id);
        Ok(recorded)
    }

    async fn log_decision(
        &self,
        lease: &Lease,
        decision: &Decision,
    ) -> Result<RecordedDecision, StoreError> {
        self.writable()?;
        self.with(writes::log_decision(lease, decision)).await
    }

    async fn decisions(&self, run_id: &str) -> Result<Vec<RecordedDecision>, StoreError> {
        self.with(reads::decisions(run_id)).await
    }

    async fn checkpoints(&self, run_id: &str) -> Result<Vec<Checkpoint>, StoreError> {
        self.with(reads::checkpoints(run_id)).await
    }

    async fn load_checkpoint(&self, run_id: &str, version: i64) -> Result<RunState, StoreError> {
        self.with(reads::load_checkpoint(run_id, version)).await
    }

    async fn checkpoint_with_journal(
        &self,
        run_id: &str,
        version: i64,
    ) -> Result<CheckpointWithJournal, StoreError> {
        self.with(reads::checkpoint_with_journal(run_id, version))
            .await
    }

    async fn list(&self) -> Result<Vec<RunSummary>, StoreError> {
        self.with(listings::list()).await
    }

    async fn pending_approvals(&self) -> Result<PendingApprovals, StoreError> {
        self.with(listings::pending_approvals()).await
    }

    fn lease_duration(&self) -> Duration {
        self.lease
    }

    async fn renew(&self, lease: &Lease) -> Result<Lease, StoreError> {
        self.writable()?;
        self.with(writes::renew(lease, self.lease_millis())).await
    }

    async fn list_runs(&self, query: &RunQuery) -> Result<RunPage, StoreError> {
        self.with(listings::list_runs(query)).await
    }

    async fn recent_runs(
        &self,
        status: Option<RunStatus>,
        limit: usize,
    ) -> Result<RecentRuns, StoreError> {
        self.with(listings::recent_runs(status, limit)).await
    }

    async fn delete(&self, run_id: &str) -> Result<(), StoreError> {
        self.writable()?;
        self.with(deletion::delete(run_id)).await
    }

    async fn expire(&self, older_than: Duration) -> Result<u64, StoreError> {
        self.writable()?;
        self.with(deletion::expire(expiry_cutoff(older_than))).await
    }

    async fn watch_decisions(&self) -> Result<DecisionWatch, StoreError> {
        if self.path.as_os_str() == ":memory:" {
            return Ok(DecisionWatch::new(&self.signals, None));
        }
        // Subscribed before the check starts: nothing between the two is missed.
        let feed = self.feed.get_or_start(cross_process::check_other_processes(
            self.path.clone(),
            self.signals.clone(),
        ));
        let watch = DecisionWatch::new(&self.signals, None);
        Ok(watch.with_feed(feed.await?))
    }
}
