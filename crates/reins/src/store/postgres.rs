//! The PostgreSQL run store.
//!
//! Over 500 lines because it is one implementation of the `RunStore` trait whose methods (each
//! one transaction) share the schema and the row readers. The seam to split next is the
//! decision and checkpoint methods (with their readers) into a submodule.

use super::DecisionWatch;
use super::notify::{DecisionSignals, FeedSlot};
use super::pg_listen;
use super::{
    Checkpoint, ClaimedRun, DEFAULT_LEASE, Decision, FINISHED, FORMAT_VERSION, JournalEntry, Lease,
    PendingApprovals, RecordedDecision, RunPage, RunQuery, RunStore, RunSummary, StoreError,
    check_claimable, check_decision, check_deletable, collect_pending, decode_decision,
    decode_state, encode_decision, encode_state, expiry_cutoff, listed, new_token, now_millis,
    oldest_readable, page_of, status_from_name, status_name,
};
use crate::run::RunState;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use std::time::Duration;
use tokio_postgres::{GenericClient, NoTls, Row};

/// How many connections a [`PostgresStore`] opens at most, unless
/// [`with_pool_size`](PostgresStore::with_pool_size) says otherwise: each operation takes one
/// for its transaction, so up to this many worker tasks of a process talk to the database at
/// once, and the others wait for a free connection. Keep the sum over every process below the
/// server's `max_connections` (100 by default).
pub const DEFAULT_POOL_SIZE: usize = 16;

/// The [`RunStore`] for many workers on many machines: runs, their journals and decisions in
/// PostgreSQL. Cheap to clone; clones share one pool of connections
/// ([`DEFAULT_POOL_SIZE`]), opened as they are needed.
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    lease: Duration,
    /// For the decision listener's own connection (boxed: the store stays small to move).
    config: std::sync::Arc<tokio_postgres::Config>,
    signals: DecisionSignals,
    feed: FeedSlot,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The connection string may hold a password: never show it.
        f.debug_struct("PostgresStore").finish_non_exhaustive()
    }
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS reins_runs (
    run_id TEXT PRIMARY KEY,
    version BIGINT NOT NULL,
    format BIGINT NOT NULL,
    status TEXT NOT NULL,
    state TEXT NOT NULL,
    lease_owner TEXT,
    lease_token TEXT,
    lease_until BIGINT NOT NULL DEFAULT 0,
    updated_at BIGINT NOT NULL
);
-- Tables created before leases had tokens (checked first: ALTER TABLE would lock the table).
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
                   AND table_name = 'reins_runs' AND column_name = 'lease_token') THEN
        ALTER TABLE reins_runs ADD COLUMN lease_token TEXT;
    END IF;
END $$;
CREATE INDEX IF NOT EXISTS reins_runs_status ON reins_runs (status);
CREATE TABLE IF NOT EXISTS reins_journal (
    run_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    effect_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS reins_decisions (
    run_id TEXT NOT NULL,
    internal_call_id TEXT NOT NULL,
    decision TEXT NOT NULL,
    decided_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, internal_call_id)
);
CREATE TABLE IF NOT EXISTS reins_decision_log (
    run_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    internal_call_id TEXT NOT NULL,
    record TEXT NOT NULL,
    decided_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS reins_checkpoints (
    run_id TEXT NOT NULL,
    version BIGINT NOT NULL,
    status TEXT NOT NULL,
    format BIGINT NOT NULL,
    state TEXT NOT NULL,
    journal_len BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, version)
);
";

fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

fn column<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a Row,
    index: usize,
) -> Result<T, StoreError> {
    row.try_get(index).map_err(backend)
}

impl PostgresStore {
    /// Connects with a libpq-style connection string (`host=… user=… dbname=…` or a
    /// `postgresql://` URL) and creates the tables if they do not exist. The store keeps a
    /// pool of up to [`DEFAULT_POOL_SIZE`] connections; this opens the first one.
    pub async fn connect(config: &str) -> Result<Self, StoreError> {
        let config: tokio_postgres::Config = config.parse().map_err(|error| {
            StoreError::Backend(format!("reading the PostgreSQL connection string: {error}"))
        })?;
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(DEFAULT_POOL_SIZE)
            .build()
            .map_err(backend)?;
        let store = PostgresStore {
            pool,
            lease: DEFAULT_LEASE,
            config: std::sync::Arc::new(config),
            signals: DecisionSignals::new(),
            feed: FeedSlot::default(),
        };
        let client = store.client().await?;
        // Workers starting together may race to create the schema; the advisory lock makes
        // them take turns.
        client
            .batch_execute(&format!(
                "SELECT pg_advisory_lock(7351); {SCHEMA} SELECT pg_advisory_unlock(7351);"
            ))
            .await
            .map_err(backend)?;
        drop(client);
        Ok(store)
    }

    /// Sets how many connections the store (and its clones) opens at most (default
    /// [`DEFAULT_POOL_SIZE`], at least 1). Connections beyond a smaller size are closed as
    /// they are returned.
    pub fn with_pool_size(self, size: usize) -> Self {
        self.pool.resize(size.max(1));
        self
    }

    /// A connection from the pool, waiting for one to be free.
    async fn client(&self) -> Result<deadpool_postgres::Client, StoreError> {
        self.pool
            .get()
            .await
            .map_err(|error| StoreError::Backend(format!("connecting to PostgreSQL: {error}")))
    }

    /// Sets how long a claim lasts without a checkpoint (default [`DEFAULT_LEASE`]).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    fn lease_millis(&self) -> i64 {
        i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX)
    }
}

/// Advances a run's version, writes its state and appends its journal entries, in one
/// statement; returns how many runs it updated (0 when the lease is no longer current).
/// Releasing (`$6`) clears the lease's holder; otherwise it stays with this claim. The state
/// is written in this release's format (`$12`), whichever it was read from, and also kept as
/// the checkpoint of the new version.
const CHECKPOINT: &str = "
WITH updated AS (
    UPDATE reins_runs SET version = version + 1, status = $4, state = $5,
        lease_owner = CASE WHEN $6 THEN NULL ELSE lease_owner END,
        lease_token = CASE WHEN $6 THEN NULL ELSE lease_token END,
        lease_until = $7, updated_at = $8, format = $12
    WHERE run_id = $1 AND version = $2 AND lease_token = $3
    RETURNING run_id
), base AS (
    SELECT COALESCE(MAX(seq), 0) AS seq FROM reins_journal WHERE run_id = $1
), appended AS (
    INSERT INTO reins_journal (run_id, seq, effect_id, kind, payload)
    SELECT updated.run_id, base.seq + entry.ord, entry.effect_id, entry.kind, entry.payload
    FROM updated, base,
        unnest($9::text[], $10::text[], $11::text[]) WITH ORDINALITY
            AS entry(effect_id, kind, payload, ord)
), snapshot AS (
    INSERT INTO reins_checkpoints (run_id, version, status, format, state, journal_len, created_at)
    SELECT updated.run_id, $2 + 1, $4, $12, $5, base.seq + cardinality($9::text[]), $8
    FROM updated, base
)
SELECT count(*) FROM updated";

/// The stored row of one run.
struct RunRow {
    version: i64,
    format: i64,
    state: String,
    owner: Option<String>,
    lease_until: i64,
}

async fn read_run(
    client: &impl GenericClient,
    run_id: &str,
    for_update: bool,
) -> Result<Option<RunRow>, StoreError> {
    let query = if for_update {
        "SELECT version, format, state, lease_owner, lease_until FROM reins_runs WHERE run_id = $1 FOR UPDATE"
    } else {
        "SELECT version, format, state, lease_owner, lease_until FROM reins_runs WHERE run_id = $1"
    };
    let row = client.query_opt(query, &[&run_id]).await.map_err(backend)?;
    row.map(|row| {
        Ok(RunRow {
            version: column(&row, 0)?,
            format: column(&row, 1)?,
            state: column(&row, 2)?,
            owner: column(&row, 3)?,
            lease_until: column(&row, 4)?,
        })
    })
    .transpose()
}

async fn read_decisions(
    client: &impl GenericClient,
    run_id: &str,
) -> Result<Vec<RecordedDecision>, StoreError> {
    read_decision_rows(
        client,
        "SELECT internal_call_id, decision, decided_at FROM reins_decisions WHERE run_id = $1 ORDER BY decided_at",
        run_id,
    )
    .await
}

/// Deletes the runs `run_ids` and everything kept about them, inside the caller's
/// transaction.
async fn delete_runs(client: &impl GenericClient, run_ids: &[String]) -> Result<(), StoreError> {
    for table in [
        "reins_journal",
        "reins_decisions",
        "reins_decision_log",
        "reins_checkpoints",
        "reins_runs",
    ] {
        client
            .execute(
                &format!("DELETE FROM {table} WHERE run_id = ANY($1)"),
                &[&run_ids],
            )
            .await
            .map_err(backend)?;
    }
    Ok(())
}

/// Reads `(internal_call_id, decision JSON, decided_at)` rows of `run_id` with `query`.
async fn read_decision_rows(
    client: &impl GenericClient,
    query: &str,
    run_id: &str,
) -> Result<Vec<RecordedDecision>, StoreError> {
    let rows = client.query(query, &[&run_id]).await.map_err(backend)?;
    rows.iter()
        .map(|row| {
            let call_id: String = column(row, 0)?;
            let json: String = column(row, 1)?;
            decode_decision(run_id, &call_id, column(row, 2)?, &json)
        })
        .collect()
}

impl RunStore for PostgresStore {
    async fn create(&self, state: &RunState, owner: &str) -> Result<Lease, StoreError> {
        let encoded = encode_state(state)?;
        let token = new_token();
        let now = now_millis();
        let mut client = self.client().await?;
        let transaction = client.transaction().await.map_err(backend)?;
        let inserted = transaction
            .execute(
                "INSERT INTO reins_runs (run_id, version, format, status, state, lease_owner, lease_token, lease_until, updated_at)
                 VALUES ($1, 1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (run_id) DO NOTHING",
                &[
                    &state.run_id,
                    &i64::from(FORMAT_VERSION),
                    &status_name(state.status),
                    &encoded,
                    &owner,
                    &token,
                    &(now + self.lease_millis()),
                    &now,
                ],
            )
            .await
            .map_err(backend)?;
        if inserted == 0 {
            return Err(StoreError::AlreadyExists(state.run_id.clone()));
        }
        transaction
            .execute(
                "INSERT INTO reins_checkpoints (run_id, version, status, format, state, journal_len, created_at)
                 VALUES ($1, 1, $2, $3, $4, 0, $5)",
                &[
                    &state.run_id,
                    &status_name(state.status),
                    &i64::from(FORMAT_VERSION),
                    &encoded,
                    &now,
                ],
            )
            .await
            .map_err(backend)?;
        transaction.commit().await.map_err(backend)?;
        Ok(Lease {
            run_id: state.run_id.clone(),
            token,
            owner: owner.to_owned(),
            version: 1,
        })
    }

    async fn claim(&self, run_id: &str, owner: &str) -> Result<ClaimedRun, StoreError> {
        let mut client = self.client().await?;
        let transaction = client.transaction().await.map_err(backend)?;
        // FOR UPDATE makes a concurrent claim wait for this one, then see its lease.
        let row = read_run(&*transaction, run_id, true)
            .await?
            .ok_or_else(|| StoreError::NotFound(run_id.to_owned()))?;
        let state = decode_state(run_id, row.format, &row.state)?;
        let now = now_millis();
        check_claimable(run_id, &state, row.owner.as_deref(), row.lease_until, now)?;
        let (version, token) = (row.version + 1, new_token());
        transaction
            .execute(
                "UPDATE reins_runs SET version = $2, lease_owner = $3, lease_token = $4,
                 lease_until = $5, updated_at = $6 WHERE run_id = $1",
                &[
                    &run_id,
                    &version,
                    &owner,
                    &token,
                    &(now + self.lease_millis()),
                    &now,
                ],
            )
            .await
            .map_err(backend)?;
        let decisions = read_decisions(&*transaction, run_id).await?;
        transaction.commit().await.map_err(backend)?;
        Ok(ClaimedRun {
            state,
            decisions,
            lease: Lease {
                run_id: run_id.to_owned(),
                token,
                owner: owner.to_owned(),
                version,
            },
        })
    }

    async fn checkpoint(
        &self,
        lease: &Lease,
        state: &RunState,
        journal: &[JournalEntry],
        release: bool,
    ) -> Result<Lease, StoreError> {
        let encoded = encode_state(state)?;
        let now = now_millis();
        let until = if release {
            0
        } else {
            now + self.lease_millis()
        };
        let effect_ids: Vec<&str> = journal.iter().map(|e| e.effect_id.as_str()).collect();
        let kinds: Vec<&str> = journal.iter().map(|e| e.kind.as_str()).collect();
        let payloads: Vec<String> = journal.iter().map(|e| e.payload.to_string()).collect();
        let client = self.client().await?;
        let statement = client.prepare_cached(CHECKPOINT).await.map_err(backend)?;
        // One statement, so one round trip and one implicit transaction: the state is
        // written and the journal appended together, or neither when the version moved.
        let row = client
            .query_one(
                &statement,
                &[
                    &lease.run_id,
                    &lease.version,
                    &lease.token,
                    &status_name(state.status),
                    &encoded,
                    &release,
                    &until,
                    &now,
                    &effect_ids,
                    &kinds,
                    &payloads,
                    &i64::from(FORMAT_VERSION),
                ],
            )
            .await
            .map_err(backend)?;
        let updated: i64 = column(&row, 0)?;
        if updated == 0 {
            return Err(StoreError::Conflict {
                run_id: lease.run_id.clone(),
                expected: lease.version,
            });
        }
        Ok(Lease {
            version: lease.version + 1,
            ..lease.clone()
        })
    }

    async fn load(&self, run_id: &str) -> Result<RunState, StoreError> {
        let client = self.client().await?;
        let row = read_run(&**client, run_id, false)
            .await?
            .ok_or_else(|| StoreError::NotFound(run_id.to_owned()))?;
        decode_state(run_id, row.format, &row.state)
    }

    async fn journal(&self, run_id: &str) -> Result<Vec<JournalEntry>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT effect_id, kind, payload FROM reins_journal WHERE run_id = $1 ORDER BY seq",
                &[&run_id],
            )
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|row| {
                let effect_id: String = column(row, 0)?;
                let payload: String = column(row, 2)?;
                let payload =
                    serde_json::from_str(&payload).map_err(|error| StoreError::Corrupt {
                        run_id: run_id.to_owned(),
                        message: format!("journal entry `{effect_id}`: {error}"),
                    })?;
                Ok(JournalEntry {
                    effect_id,
                    kind: column(row, 1)?,
                    payload,
                })
            })
            .collect()
    }

    async fn decide(
        &self,
        run_id: &str,
        decision: &Decision,
    ) -> Result<RecordedDecision, StoreError> {
        let mut client = self.client().await?;
        let transaction = client.transaction().await.map_err(backend)?;
        // The run's row stays locked until commit, so decisions of one run get their
        // audit sequence numbers one at a time.
        let row = read_run(&*transaction, run_id, true)
            .await?
            .ok_or_else(|| StoreError::NotFound(run_id.to_owned()))?;
        let state = decode_state(run_id, row.format, &row.state)?;
        check_decision(&state, decision)?;
        let recorded = RecordedDecision {
            run_id: run_id.to_owned(),
            decision: decision.clone(),
            decided_at_ms: now_millis(),
        };
        let json = encode_decision(&recorded)?;
        let call_id = &recorded.decision.internal_call_id;
        transaction
            .execute(
                "INSERT INTO reins_decisions (run_id, internal_call_id, decision, decided_at)
                 VALUES ($1, $2, $3, $4)
                 ON CONFLICT (run_id, internal_call_id) DO UPDATE SET decision = $3, decided_at = $4",
                &[&run_id, call_id, &json, &recorded.decided_at_ms],
            )
            .await
            .map_err(backend)?;
        transaction
            .execute(
                "INSERT INTO reins_decision_log (run_id, seq, internal_call_id, record, decided_at)
                 SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4 FROM reins_decision_log WHERE run_id = $1",
                &[&run_id, call_id, &json, &recorded.decided_at_ms],
            )
            .await
            .map_err(backend)?;
        // Delivered to every listener when the transaction commits.
        transaction
            .execute("SELECT pg_notify($1, $2)", &[&pg_listen::CHANNEL, &run_id])
            .await
            .map_err(backend)?;
        transaction.commit().await.map_err(backend)?;
        Ok(recorded)
    }

    async fn decisions(&self, run_id: &str) -> Result<Vec<RecordedDecision>, StoreError> {
        let client = self.client().await?;
        if read_run(&**client, run_id, false).await?.is_none() {
            return Err(StoreError::NotFound(run_id.to_owned()));
        }
        read_decision_rows(
            &**client,
            "SELECT internal_call_id, record, decided_at FROM reins_decision_log WHERE run_id = $1 ORDER BY seq",
            run_id,
        )
        .await
    }

    async fn checkpoints(&self, run_id: &str) -> Result<Vec<Checkpoint>, StoreError> {
        let client = self.client().await?;
        if read_run(&**client, run_id, false).await?.is_none() {
            return Err(StoreError::NotFound(run_id.to_owned()));
        }
        let rows = client
            .query(
                "SELECT version, status, journal_len, created_at FROM reins_checkpoints
                 WHERE run_id = $1 ORDER BY version",
                &[&run_id],
            )
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|row| {
                Ok(Checkpoint {
                    version: column(row, 0)?,
                    status: status_from_name(&column::<String>(row, 1)?),
                    journal_len: usize::try_from(column::<i64>(row, 2)?).unwrap_or(0),
                    created_at_ms: column(row, 3)?,
                })
            })
            .collect()
    }

    async fn load_checkpoint(&self, run_id: &str, version: i64) -> Result<RunState, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT format, state FROM reins_checkpoints WHERE run_id = $1 AND version = $2",
                &[&run_id, &version],
            )
            .await
            .map_err(backend)?;
        match row {
            Some(row) => decode_state(run_id, column(&row, 0)?, &column::<String>(&row, 1)?),
            None => Err(StoreError::NoSuchCheckpoint {
                run_id: run_id.to_owned(),
                version,
            }),
        }
    }

    async fn list(&self) -> Result<Vec<RunSummary>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT run_id, status, version FROM reins_runs ORDER BY updated_at, run_id",
                &[],
            )
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|row| {
                let status: String = column(row, 1)?;
                Ok(RunSummary {
                    run_id: column(row, 0)?,
                    status: status_from_name(&status),
                    version: column(row, 2)?,
                })
            })
            .collect()
    }

    async fn pending_approvals(&self) -> Result<PendingApprovals, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT run_id, format, state FROM reins_runs WHERE status = 'suspended'
                 ORDER BY updated_at, run_id",
                &[],
            )
            .await
            .map_err(backend)?;
        let mut listing = PendingApprovals::default();
        for row in &rows {
            let run_id: String = column(row, 0)?;
            let format: i64 = column(row, 1)?;
            let json: String = column(row, 2)?;
            // One unreadable run neither hides the other approvals nor disappears.
            let read = match decode_state(&run_id, format, &json) {
                Ok(state) => read_decisions(&**client, &run_id)
                    .await
                    .map(|decided| (state, decided)),
                Err(error) => Err(error),
            };
            collect_pending(&mut listing, &run_id, read)?;
        }
        Ok(listing)
    }

    async fn list_runs(&self, query: &RunQuery) -> Result<RunPage, StoreError> {
        let client = self.client().await?;
        let limit = i64::try_from(query.limit() + 1).unwrap_or(i64::MAX);
        // COLLATE "C" compares ids as bytes, as the other stores do, whatever the
        // database's collation.
        let rows = client
            .query(
                r#"SELECT run_id, status, version, format FROM reins_runs
                   WHERE ($1::text IS NULL OR status = $1)
                     AND ($2::text IS NULL OR run_id COLLATE "C" > $2)
                   ORDER BY run_id COLLATE "C" LIMIT $3"#,
                &[&query.status.map(status_name), &query.after_id(), &limit],
            )
            .await
            .map_err(backend)?;
        let runs = rows
            .iter()
            .map(|row| {
                let summary = RunSummary {
                    run_id: column(row, 0)?,
                    status: status_from_name(&column::<String>(row, 1)?),
                    version: column(row, 2)?,
                };
                Ok(listed(summary, column(row, 3)?))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(page_of(runs, query))
    }

    async fn delete(&self, run_id: &str) -> Result<(), StoreError> {
        let mut client = self.client().await?;
        let transaction = client.transaction().await.map_err(backend)?;
        let row = transaction
            .query_opt(
                "SELECT format, status FROM reins_runs WHERE run_id = $1 FOR UPDATE",
                &[&run_id],
            )
            .await
            .map_err(backend)?
            .ok_or_else(|| StoreError::NotFound(run_id.to_owned()))?;
        check_deletable(run_id, column(&row, 0)?, &column::<String>(&row, 1)?)?;
        delete_runs(&*transaction, &[run_id.to_owned()]).await?;
        transaction.commit().await.map_err(backend)
    }

    async fn expire(&self, older_than: Duration) -> Result<u64, StoreError> {
        let cutoff = expiry_cutoff(older_than);
        let mut client = self.client().await?;
        let transaction = client.transaction().await.map_err(backend)?;
        // FOR UPDATE: a concurrent `delete` or `expire` of the same runs waits for this one.
        // A record this release cannot read is another release's to expire.
        let rows = transaction
            .query(
                "SELECT run_id FROM reins_runs WHERE status = ANY($1) AND updated_at <= $2
                 AND format BETWEEN $3 AND $4 FOR UPDATE",
                &[
                    &FINISHED.as_slice(),
                    &cutoff,
                    &i64::from(oldest_readable()),
                    &i64::from(FORMAT_VERSION),
                ],
            )
            .await
            .map_err(backend)?;
        let expired = rows
            .iter()
            .map(|row| column::<String>(row, 0))
            .collect::<Result<Vec<_>, _>>()?;
        delete_runs(&*transaction, &expired).await?;
        transaction.commit().await.map_err(backend)?;
        Ok(u64::try_from(expired.len()).unwrap_or(u64::MAX))
    }

    async fn watch_decisions(&self) -> Result<DecisionWatch, StoreError> {
        // Subscribed before the listener starts: nothing between the two is missed.
        let watch = DecisionWatch::new(&self.signals, None);
        let feed = self
            .feed
            .get_or_start(pg_listen::start(
                (*self.config).clone(),
                self.signals.clone(),
            ))
            .await?;
        Ok(watch.with_feed(feed))
    }
}
