//! The SQLite run store.
//!
//! Over 500 lines because it is one implementation of the `RunStore` trait whose methods (each
//! one transaction) share the schema and the row readers. The seam to split next is the
//! decision and checkpoint methods (with their readers) into a submodule.

use super::DecisionWatch;
use super::notify::{DecisionSignals, Feed, FeedSlot};
use super::{
    Checkpoint, ClaimedRun, DEFAULT_LEASE, Decision, FINISHED, FORMAT_VERSION, JournalEntry, Lease,
    PendingApprovals, RecordedDecision, RunPage, RunQuery, RunStore, RunSummary, StoreError,
    UnreadableRun, check_claimable, check_decision, check_deletable, collect_pending,
    decode_decision, decode_state, encode_decision, encode_state, expiry_cutoff, listed, new_token,
    now_millis, oldest_readable, page_of, status_from_name, status_name,
};
use crate::run::RunState;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

/// The embedded [`RunStore`]: one SQLite file in WAL mode, shared safely by the processes of
/// one machine. Cheap to clone.
#[derive(Clone)]
pub struct SqliteStore {
    connection: Arc<Mutex<Connection>>,
    path: PathBuf,
    lease: Duration,
    /// Shared by every handle on the same file in this process.
    signals: DecisionSignals,
    /// The check for decisions written by other processes, while anyone watches.
    feed: FeedSlot,
}

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

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS reins_runs (
    run_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    format INTEGER NOT NULL,
    status TEXT NOT NULL,
    state TEXT NOT NULL,
    lease_owner TEXT,
    lease_token TEXT,
    lease_until INTEGER NOT NULL DEFAULT 0,
    updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS reins_runs_status ON reins_runs (status);
CREATE TABLE IF NOT EXISTS reins_journal (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    effect_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS reins_decisions (
    run_id TEXT NOT NULL,
    internal_call_id TEXT NOT NULL,
    decision TEXT NOT NULL,
    decided_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, internal_call_id)
);
CREATE TABLE IF NOT EXISTS reins_decision_log (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    internal_call_id TEXT NOT NULL,
    record TEXT NOT NULL,
    decided_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS reins_checkpoints (
    run_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    status TEXT NOT NULL,
    format INTEGER NOT NULL,
    state TEXT NOT NULL,
    journal_len INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, version)
);
";

/// Keeps the state just written at `version` as a checkpoint, with the journal's length.
const SNAPSHOT: &str = "INSERT INTO reins_checkpoints (run_id, version, status, format, state, journal_len, created_at)
     SELECT ?1, ?2, ?3, ?4, ?5, (SELECT COUNT(*) FROM reins_journal WHERE run_id = ?1), ?6";

fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

impl SqliteStore {
    /// Opens (or creates) the store in the file at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let connection = Connection::open(&path)
            .map_err(|error| StoreError::Backend(format!("{}: {error}", path.display())))?;
        Self::prepare(connection, path)
    }

    /// A store in memory (lost when dropped), e.g. for tests.
    pub fn in_memory() -> Result<Self, StoreError> {
        Self::prepare(
            Connection::open_in_memory().map_err(backend)?,
            PathBuf::from(":memory:"),
        )
    }

    fn prepare(mut connection: Connection, path: PathBuf) -> Result<Self, StoreError> {
        // WAL lets readers work while a writer commits; the busy timeout makes concurrent
        // writers from other processes wait for the lock instead of failing.
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(backend)?;
        connection
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(backend)?;
        connection
            .busy_timeout(Duration::from_secs(10))
            .map_err(backend)?;
        connection.execute_batch(SCHEMA).map_err(backend)?;
        add_lease_token(&mut connection)?;
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
        Ok(SqliteStore {
            connection: Arc::new(Mutex::new(connection)),
            path,
            lease: DEFAULT_LEASE,
            signals,
            feed,
        })
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

    /// The file the store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `work` on the connection on a blocking thread.
    async fn with<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
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

/// Starts checking the file at `path` for decisions written by other processes, every
/// [`SqliteStore::CROSS_PROCESS_CHECK`], on a connection of its own. It reads where the
/// decision log ends before it returns, so no decision after that is missed.
async fn check_other_processes(
    path: PathBuf,
    signals: DecisionSignals,
) -> Result<Feed, StoreError> {
    let (connection, mut seen) = tokio::task::spawn_blocking(move || {
        let connection = Connection::open(&path).map_err(backend)?;
        connection
            .busy_timeout(Duration::from_secs(10))
            .map_err(backend)?;
        let seen = LogPosition::read(&connection)?;
        Ok::<_, StoreError>((Arc::new(Mutex::new(connection)), seen))
    })
    .await
    .map_err(backend)??;
    let task = tokio::spawn(async move {
        let mut interval = tokio::time::interval(SqliteStore::CROSS_PROCESS_CHECK);
        loop {
            interval.tick().await;
            let connection = Arc::clone(&connection);
            let checked = tokio::task::spawn_blocking(move || {
                let connection = connection.lock().unwrap_or_else(PoisonError::into_inner);
                seen.advance(&connection).map(|decided| (seen, decided))
            })
            .await;
            match checked {
                Ok(Ok((position, decided))) => {
                    seen = position;
                    for run_id in decided {
                        signals.recorded(&run_id);
                    }
                }
                Ok(Err(error)) => {
                    // Whatever was missed, the watches look at the store; the next check
                    // tries again.
                    tracing::warn!(%error, "checking the run store for other processes' decisions failed");
                    signals.recheck();
                }
                Err(_) => return,
            }
        }
    });
    Ok(Feed::new(task.abort_handle()))
}

/// How far the decision log has been read: the file's `data_version` and the last row.
#[derive(Clone, Copy)]
struct LogPosition {
    data_version: i64,
    rowid: i64,
}

impl LogPosition {
    fn read(connection: &Connection) -> Result<Self, StoreError> {
        Ok(LogPosition {
            data_version: connection
                .query_row("PRAGMA data_version", [], |row| row.get(0))
                .map_err(backend)?,
            rowid: connection
                .query_row(
                    "SELECT COALESCE(MAX(rowid), 0) FROM reins_decision_log",
                    [],
                    |row| row.get(0),
                )
                .map_err(backend)?,
        })
    }

    /// The runs of the decisions logged since the last read, if the file changed at all.
    fn advance(&mut self, connection: &Connection) -> Result<Vec<String>, StoreError> {
        let data_version: i64 = connection
            .query_row("PRAGMA data_version", [], |row| row.get(0))
            .map_err(backend)?;
        if data_version == self.data_version {
            return Ok(Vec::new());
        }
        self.data_version = data_version;
        let mut statement = connection
            .prepare("SELECT rowid, run_id FROM reins_decision_log WHERE rowid > ?1 ORDER BY rowid")
            .map_err(backend)?;
        let rows = statement
            .query_map(params![self.rowid], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(backend)?;
        let mut decided = Vec::new();
        for row in rows {
            let (rowid, run_id) = row.map_err(backend)?;
            self.rowid = rowid;
            decided.push(run_id);
        }
        Ok(decided)
    }
}

/// Adds the `lease_token` column to a table created before leases had tokens. In one
/// `IMMEDIATE` transaction, so processes opening the file together do not both add it.
fn add_lease_token(connection: &mut Connection) -> Result<(), StoreError> {
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let present: i64 = transaction
        .query_row(
            "SELECT COUNT(*) FROM pragma_table_info('reins_runs') WHERE name = 'lease_token'",
            [],
            |row| row.get(0),
        )
        .map_err(backend)?;
    if present == 0 {
        transaction
            .execute_batch("ALTER TABLE reins_runs ADD COLUMN lease_token TEXT")
            .map_err(backend)?;
    }
    transaction.commit().map_err(backend)
}

/// The stored row of one run.
struct Row {
    version: i64,
    format: i64,
    state: String,
    owner: Option<String>,
    lease_until: i64,
}

fn read_row(connection: &Connection, run_id: &str) -> Result<Option<Row>, StoreError> {
    connection
        .query_row(
            "SELECT version, format, state, lease_owner, lease_until FROM reins_runs WHERE run_id = ?1",
            params![run_id],
            |row| {
                Ok(Row {
                    version: row.get(0)?,
                    format: row.get(1)?,
                    state: row.get(2)?,
                    owner: row.get(3)?,
                    lease_until: row.get(4)?,
                })
            },
        )
        .optional()
        .map_err(backend)
}

fn read_decisions(
    connection: &Connection,
    run_id: &str,
) -> Result<Vec<RecordedDecision>, StoreError> {
    read_decision_rows(
        connection,
        "SELECT internal_call_id, decision, decided_at FROM reins_decisions WHERE run_id = ?1 ORDER BY decided_at",
        run_id,
    )
}

/// Deletes a run and everything kept about it, inside the caller's transaction.
fn delete_run(connection: &Connection, run_id: &str) -> Result<(), StoreError> {
    for table in [
        "reins_journal",
        "reins_decisions",
        "reins_decision_log",
        "reins_checkpoints",
        "reins_runs",
    ] {
        connection
            .execute(
                &format!("DELETE FROM {table} WHERE run_id = ?1"),
                params![run_id],
            )
            .map_err(backend)?;
    }
    Ok(())
}

/// Reads `(internal_call_id, decision JSON, decided_at)` rows of `run_id` with `query`.
fn read_decision_rows(
    connection: &Connection,
    query: &str,
    run_id: &str,
) -> Result<Vec<RecordedDecision>, StoreError> {
    let mut statement = connection.prepare(query).map_err(backend)?;
    let rows = statement
        .query_map(params![run_id], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, i64>(2)?,
            ))
        })
        .map_err(backend)?;
    let mut decisions = Vec::new();
    for row in rows {
        let (call_id, json, decided_at) = row.map_err(backend)?;
        decisions.push(decode_decision(run_id, &call_id, decided_at, &json)?);
    }
    Ok(decisions)
}

impl RunStore for SqliteStore {
    async fn create(&self, state: &RunState, owner: &str) -> Result<Lease, StoreError> {
        let encoded = encode_state(state)?;
        let (run_id, owner, token) = (state.run_id.clone(), owner.to_owned(), new_token());
        let status = status_name(state.status);
        let lease = self.lease_millis();
        self.with(move |connection| {
            let now = now_millis();
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let inserted = transaction
                .execute(
                    "INSERT INTO reins_runs (run_id, version, format, status, state, lease_owner, lease_token, lease_until, updated_at)
                     VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (run_id) DO NOTHING",
                    params![run_id, FORMAT_VERSION, status, encoded, owner, token, now + lease, now],
                )
                .map_err(backend)?;
            if inserted == 0 {
                return Err(StoreError::AlreadyExists(run_id));
            }
            transaction
                .execute(SNAPSHOT, params![run_id, 1, status, FORMAT_VERSION, encoded, now])
                .map_err(backend)?;
            transaction.commit().map_err(backend)?;
            Ok(Lease {
                run_id,
                token,
                owner,
                version: 1,
            })
        })
        .await
    }

    async fn claim(&self, run_id: &str, owner: &str) -> Result<ClaimedRun, StoreError> {
        let (run_id, owner) = (run_id.to_owned(), owner.to_owned());
        let lease = self.lease_millis();
        self.with(move |connection| {
            // IMMEDIATE takes the write lock first, so two claims cannot both read the old
            // version and both succeed.
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let row = read_row(&transaction, &run_id)?
                .ok_or_else(|| StoreError::NotFound(run_id.clone()))?;
            let state = decode_state(&run_id, row.format, &row.state)?;
            let now = now_millis();
            check_claimable(&run_id, &state, row.owner.as_deref(), row.lease_until, now)?;
            let (version, token) = (row.version + 1, new_token());
            transaction
                .execute(
                    "UPDATE reins_runs SET version = ?2, lease_owner = ?3, lease_token = ?4,
                     lease_until = ?5, updated_at = ?6 WHERE run_id = ?1",
                    params![run_id, version, owner, token, now + lease, now],
                )
                .map_err(backend)?;
            let decisions = read_decisions(&transaction, &run_id)?;
            transaction.commit().map_err(backend)?;
            Ok(ClaimedRun {
                state,
                decisions,
                lease: Lease {
                    run_id,
                    token,
                    owner,
                    version,
                },
            })
        })
        .await
    }

    async fn checkpoint(
        &self,
        lease: &Lease,
        state: &RunState,
        journal: &[JournalEntry],
        release: bool,
    ) -> Result<Lease, StoreError> {
        let lease = lease.clone();
        let journal = journal.to_vec();
        let lease_millis = self.lease_millis();
        let encoded = encode_state(state)?;
        let status = status_name(state.status);
        self.with(move |connection| {
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let now = now_millis();
            let until = if release { 0 } else { now + lease_millis };
            // Releasing clears the lease's holder; otherwise it stays with this claim. The
            // state is written in this release's format, whichever it was read from.
            let updated = transaction
                .execute(
                    "UPDATE reins_runs SET version = version + 1, status = ?4, state = ?5,
                     lease_owner = CASE WHEN ?6 THEN NULL ELSE lease_owner END,
                     lease_token = CASE WHEN ?6 THEN NULL ELSE lease_token END,
                     lease_until = ?7, updated_at = ?8, format = ?9
                     WHERE run_id = ?1 AND version = ?2 AND lease_token = ?3",
                    params![
                        lease.run_id,
                        lease.version,
                        lease.token,
                        status,
                        encoded,
                        release,
                        until,
                        now,
                        FORMAT_VERSION
                    ],
                )
                .map_err(backend)?;
            if updated == 0 {
                return Err(StoreError::Conflict {
                    run_id: lease.run_id,
                    expected: lease.version,
                });
            }
            if !journal.is_empty() {
                let next: i64 = transaction
                    .query_row(
                        "SELECT COALESCE(MAX(seq), 0) + 1 FROM reins_journal WHERE run_id = ?1",
                        params![lease.run_id],
                        |row| row.get(0),
                    )
                    .map_err(backend)?;
                let mut insert = transaction
                    .prepare(
                        "INSERT INTO reins_journal (run_id, seq, effect_id, kind, payload)
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                    )
                    .map_err(backend)?;
                for (offset, entry) in journal.iter().enumerate() {
                    insert
                        .execute(params![
                            lease.run_id,
                            next + offset as i64,
                            entry.effect_id,
                            entry.kind,
                            entry.payload.to_string()
                        ])
                        .map_err(backend)?;
                }
            }
            transaction
                .execute(
                    SNAPSHOT,
                    params![
                        lease.run_id,
                        lease.version + 1,
                        status,
                        FORMAT_VERSION,
                        encoded,
                        now
                    ],
                )
                .map_err(backend)?;
            transaction.commit().map_err(backend)?;
            Ok(Lease {
                version: lease.version + 1,
                ..lease
            })
        })
        .await
    }

    async fn load(&self, run_id: &str) -> Result<RunState, StoreError> {
        let run_id = run_id.to_owned();
        self.with(move |connection| {
            let row = read_row(connection, &run_id)?
                .ok_or_else(|| StoreError::NotFound(run_id.clone()))?;
            decode_state(&run_id, row.format, &row.state)
        })
        .await
    }

    async fn journal(&self, run_id: &str) -> Result<Vec<JournalEntry>, StoreError> {
        let run_id = run_id.to_owned();
        self.with(move |connection| {
            let mut statement = connection
                .prepare(
                    "SELECT effect_id, kind, payload FROM reins_journal WHERE run_id = ?1 ORDER BY seq",
                )
                .map_err(backend)?;
            let rows = statement
                .query_map(params![run_id], |row| {
                    Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?))
                })
                .map_err(backend)?;
            let mut entries = Vec::new();
            for row in rows {
                let (effect_id, kind, payload) = row.map_err(backend)?;
                let payload = serde_json::from_str(&payload).map_err(|error| StoreError::Corrupt {
                    run_id: run_id.clone(),
                    message: format!("journal entry `{effect_id}`: {error}"),
                })?;
                entries.push(JournalEntry {
                    effect_id,
                    kind,
                    payload,
                });
            }
            Ok(entries)
        }).await
    }

    async fn decide(
        &self,
        run_id: &str,
        decision: &Decision,
    ) -> Result<RecordedDecision, StoreError> {
        let signalled = run_id;
        let (run_id, decision) = (run_id.to_owned(), decision.clone());
        let recorded = self.with(move |connection| {
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let row = read_row(&transaction, &run_id)?
                .ok_or_else(|| StoreError::NotFound(run_id.clone()))?;
            let state = decode_state(&run_id, row.format, &row.state)?;
            check_decision(&state, &decision)?;
            let recorded = RecordedDecision {
                run_id: run_id.clone(),
                decision,
                decided_at_ms: now_millis(),
            };
            let json = encode_decision(&recorded)?;
            let call_id = &recorded.decision.internal_call_id;
            transaction
                .execute(
                    "INSERT INTO reins_decisions (run_id, internal_call_id, decision, decided_at)
                     VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (run_id, internal_call_id) DO UPDATE SET decision = ?3, decided_at = ?4",
                    params![run_id, call_id, json, recorded.decided_at_ms],
                )
                .map_err(backend)?;
            transaction
                .execute(
                    "INSERT INTO reins_decision_log (run_id, seq, internal_call_id, record, decided_at)
                     SELECT ?1, COALESCE(MAX(seq), 0) + 1, ?2, ?3, ?4 FROM reins_decision_log WHERE run_id = ?1",
                    params![run_id, call_id, json, recorded.decided_at_ms],
                )
                .map_err(backend)?;
            transaction.commit().map_err(backend)?;
            Ok(recorded)
        });
        let recorded = recorded.await?;
        self.signals.recorded(signalled);
        Ok(recorded)
    }

    async fn decisions(&self, run_id: &str) -> Result<Vec<RecordedDecision>, StoreError> {
        let run_id = run_id.to_owned();
        self.with(move |connection| {
            if read_row(connection, &run_id)?.is_none() {
                return Err(StoreError::NotFound(run_id));
            }
            read_decision_rows(
                connection,
                "SELECT internal_call_id, record, decided_at FROM reins_decision_log WHERE run_id = ?1 ORDER BY seq",
                &run_id,
            )
        }).await
    }

    async fn checkpoints(&self, run_id: &str) -> Result<Vec<Checkpoint>, StoreError> {
        let run_id = run_id.to_owned();
        self.with(move |connection| {
            if read_row(connection, &run_id)?.is_none() {
                return Err(StoreError::NotFound(run_id));
            }
            let mut statement = connection
                .prepare(
                    "SELECT version, status, journal_len, created_at FROM reins_checkpoints
                     WHERE run_id = ?1 ORDER BY version",
                )
                .map_err(backend)?;
            let rows = statement
                .query_map(params![run_id], |row| {
                    Ok(Checkpoint {
                        version: row.get(0)?,
                        status: status_from_name(&row.get::<_, String>(1)?),
                        journal_len: usize::try_from(row.get::<_, i64>(2)?).unwrap_or(0),
                        created_at_ms: row.get(3)?,
                    })
                })
                .map_err(backend)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(backend)
        })
        .await
    }

    async fn load_checkpoint(&self, run_id: &str, version: i64) -> Result<RunState, StoreError> {
        let run_id = run_id.to_owned();
        self.with(move |connection| {
            let row: Option<(i64, String)> = connection
                .query_row(
                    "SELECT format, state FROM reins_checkpoints WHERE run_id = ?1 AND version = ?2",
                    params![run_id, version],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()
                .map_err(backend)?;
            match row {
                Some((format, json)) => decode_state(&run_id, format, &json),
                None => Err(StoreError::NoSuchCheckpoint { run_id, version }),
            }
        }).await
    }

    async fn list(&self) -> Result<Vec<RunSummary>, StoreError> {
        self.with(|connection| {
            let mut statement = connection
                .prepare(
                    "SELECT run_id, status, version FROM reins_runs ORDER BY updated_at, run_id",
                )
                .map_err(backend)?;
            let rows = statement
                .query_map([], |row| {
                    Ok(RunSummary {
                        run_id: row.get(0)?,
                        status: status_from_name(&row.get::<_, String>(1)?),
                        version: row.get(2)?,
                    })
                })
                .map_err(backend)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(backend)
        })
        .await
    }

    async fn pending_approvals(&self) -> Result<PendingApprovals, StoreError> {
        self.with(|connection| {
            let mut statement = connection
                .prepare("SELECT run_id, format, state FROM reins_runs WHERE status = 'suspended' ORDER BY updated_at, run_id")
                .map_err(backend)?;
            let rows = statement
                .query_map([], |row| {
                    // SQLite does not enforce column types: a record of the wrong type is
                    // that run's problem, not the listing's.
                    let record = row
                        .get::<_, i64>(1)
                        .and_then(|format| Ok((format, row.get::<_, String>(2)?)));
                    Ok((row.get::<_, String>(0)?, record))
                })
                .map_err(backend)?;
            let mut listing = PendingApprovals::default();
            for row in rows {
                let (run_id, record) = row.map_err(backend)?;
                // One unreadable run neither hides the other approvals nor disappears.
                let read = record
                    .map_err(|error| StoreError::Corrupt {
                        run_id: run_id.clone(),
                        message: error.to_string(),
                    })
                    .and_then(|(format, json)| decode_state(&run_id, format, &json))
                    .and_then(|state| Ok((state, read_decisions(connection, &run_id)?)));
                collect_pending(&mut listing, &run_id, read)?;
            }
            Ok(listing)
        }).await
    }

    async fn list_runs(&self, query: &RunQuery) -> Result<RunPage, StoreError> {
        let query = query.clone();
        self.with(move |connection| {
            // Ids compare as bytes (SQLite's BINARY collation), as in the other stores.
            let mut statement = connection
                .prepare(
                    "SELECT run_id, status, version, format FROM reins_runs
                     WHERE (?1 IS NULL OR status = ?1) AND (?2 IS NULL OR run_id > ?2)
                     ORDER BY run_id LIMIT ?3",
                )
                .map_err(backend)?;
            let limit = i64::try_from(query.limit() + 1).unwrap_or(i64::MAX);
            let rows = statement
                .query_map(
                    params![query.status.map(status_name), query.after_id(), limit],
                    |row| {
                        // SQLite does not enforce column types: a column of the wrong type is
                        // that run's problem, not the page's.
                        let fields = row.get::<_, String>(1).and_then(|status| {
                            Ok((status, row.get::<_, i64>(2)?, row.get::<_, i64>(3)?))
                        });
                        Ok((row.get::<_, String>(0)?, fields))
                    },
                )
                .map_err(backend)?;
            let mut runs = Vec::new();
            for row in rows {
                let (run_id, fields) = row.map_err(backend)?;
                runs.push(match fields {
                    Ok((status, version, format)) => listed(
                        RunSummary {
                            run_id,
                            status: status_from_name(&status),
                            version,
                        },
                        format,
                    ),
                    Err(error) => Err(UnreadableRun {
                        error: StoreError::Corrupt {
                            run_id: run_id.clone(),
                            message: error.to_string(),
                        },
                        run_id,
                    }),
                });
            }
            Ok(page_of(runs, &query))
        })
        .await
    }

    async fn delete(&self, run_id: &str) -> Result<(), StoreError> {
        let run_id = run_id.to_owned();
        self.with(move |connection| {
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let record: Option<(i64, String)> = transaction
                .query_row(
                    "SELECT format, status FROM reins_runs WHERE run_id = ?1",
                    params![run_id],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()
                .map_err(backend)?;
            let (format, status) = record.ok_or_else(|| StoreError::NotFound(run_id.clone()))?;
            check_deletable(&run_id, format, &status)?;
            delete_run(&transaction, &run_id)?;
            transaction.commit().map_err(backend)
        })
        .await
    }

    async fn expire(&self, older_than: Duration) -> Result<u64, StoreError> {
        let cutoff = expiry_cutoff(older_than);
        self.with(move |connection| {
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let expired = {
                let mut statement = transaction
                    .prepare(
                        // A record this release cannot read is another release's to expire.
                        "SELECT run_id FROM reins_runs
                         WHERE status IN (?1, ?2) AND updated_at <= ?3 AND format BETWEEN ?4 AND ?5",
                    )
                    .map_err(backend)?;
                let readable = (oldest_readable(), FORMAT_VERSION);
                let rows = statement
                    .query_map(
                        params![FINISHED[0], FINISHED[1], cutoff, readable.0, readable.1],
                        |row| row.get::<_, String>(0),
                    )
                    .map_err(backend)?;
                rows.collect::<Result<Vec<_>, _>>().map_err(backend)?
            };
            for run_id in &expired {
                delete_run(&transaction, run_id)?;
            }
            transaction.commit().map_err(backend)?;
            Ok(u64::try_from(expired.len()).unwrap_or(u64::MAX))
        }).await
    }

    async fn watch_decisions(&self) -> Result<DecisionWatch, StoreError> {
        if self.path.as_os_str() == ":memory:" {
            return Ok(DecisionWatch::new(&self.signals, None));
        }
        // Subscribed before the check starts: nothing between the two is missed.
        let feed = self.feed.get_or_start(check_other_processes(
            self.path.clone(),
            self.signals.clone(),
        ));
        let watch = DecisionWatch::new(&self.signals, None);
        Ok(watch.with_feed(feed.await?))
    }
}
