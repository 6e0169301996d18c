//! The PostgreSQL run store: [`PostgresStore`], its pool of connections and its
//! [`RunStore`] methods, each one transaction written in a submodule: the tables in
//! `schema`, what the methods share (errors, columns, the run's row) in `rows`, the writes of
//! a run in `writes`, its reads in `reads`, the listings across runs in `listings` and the
//! deletions in `deletion`, all on the database server's clock (`clock`), each write waiting
//! for another session's lock at most the store's lock timeout (`locks`). The decision
//! listener's connection is `pg_listen`'s.

mod clock;
mod conninfo;
mod deletion;
mod listings;
mod locks;
mod reads;
mod rows;
mod schema;
#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
mod tests;
mod tls;
mod writes;

use super::DecisionWatch;
use super::notify::{DecisionSignals, FeedSlot};
use super::pg_listen;
use super::{
    Checkpoint, CheckpointWithJournal, ClaimedRun, DEFAULT_LEASE, Decision, JournalEntry, Lease,
    PendingApprovals, RecentRuns, RecordedDecision, RunPage, RunQuery, RunStore, RunSummary,
    StoreError,
};
use crate::run::{RunState, RunStatus};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use rows::backend;
use std::time::Duration;

/// How many connections a [`PostgresStore`] opens at most, unless
/// [`with_pool_size`](PostgresStore::with_pool_size) says otherwise: each operation takes one
/// for its transaction, so up to this many worker tasks of a process talk to the database at
/// once, and the others wait for a free connection. Keep the sum over every process below the
/// server's `max_connections` (100 by default).
pub const DEFAULT_POOL_SIZE: usize = 16;

/// The [`RunStore`] for many workers on many machines: runs, their journals and decisions in
/// PostgreSQL. Cheap to clone; clones share one pool of connections
/// ([`DEFAULT_POOL_SIZE`]), opened as they are needed.
///
/// Its clock is the database server's, not the workers': a lease runs for
/// [`with_lease`](Self::with_lease) from when the server wrote it and is judged live by the
/// server's clock, so workers whose clocks disagree (one running minutes ahead) still never
/// take a run another holds, nor hold one longer than the lease. The times a listing shows
/// (when runs were created and last written, when a lease runs out), when a decision was
/// recorded, and the age [`expire`](RunStore::expire) measures are the server's too.
///
/// ```no_run
/// use reins::agent::{AgentBuilder, PromptError};
/// use reins::store::PostgresStore;
/// use reins::testing::{ScriptedModel, Turn};
/// use std::time::Duration;
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // Every worker process connects to the same database.
/// let store = PostgresStore::connect("host=localhost user=reins dbname=reins")
///     .await?
///     .with_pool_size(8)
///     // A worker that stops renewing its claim loses the run to another after this long.
///     .with_lease(Duration::from_secs(30));
///
/// let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("Done.")])).build();
/// match agent.prompt("Tidy the inbox.").durable(store.clone()).await {
///     Ok(answer) => println!("{answer}"),
///     // The run waits in the database for a decision; any worker can resume it.
///     Err(PromptError::Suspended { run }) => println!("{} waits", run.run_id()),
///     Err(error) => return Err(error.into()),
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    lease: Duration,
    /// How many checkpoints of a run are kept (`None`: all).
    keep_checkpoints: Option<usize>,
    /// For the decision listener's own connection (boxed: the store stays small to move).
    config: std::sync::Arc<tokio_postgres::Config>,
    /// The TLS of every connection, the listener's too.
    tls: tls::MakeRustlsConnect,
    /// The servers connected to (`host:port`, no credentials), for connection errors.
    servers: std::sync::Arc<str>,
    signals: DecisionSignals,
    feed: FeedSlot,
    /// How often the decision listener checks its connection.
    listener_check: Duration,
    /// How long a write of a run waits for another session's lock (`locks`).
    lock_wait: Duration,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The connection string may hold a password: never show it.
        f.debug_struct("PostgresStore").finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects with a libpq-style connection string (`host=… user=… dbname=…` or a
    /// `postgresql://` URL) and creates the tables if they do not exist. The store keeps a
    /// pool of up to [`DEFAULT_POOL_SIZE`] connections; this opens the first one.
    ///
    /// Tables a newer release set up, in a layout this one cannot use, are refused with
    /// [`StoreError::UnsupportedSchema`] and left as they are. Connecting to tables set up
    /// already changes nothing in them, and waits for no write to the runs under way.
    ///
    /// TLS follows the string's `sslmode`: `disable`, `prefer` (the default: TLS when the
    /// server offers it, its certificate not checked) or `require` (TLS or no connection, the
    /// server's certificate checked against the platform's roots and those of the PEM file
    /// named by libpq's `sslrootcert=<path>`, and valid for the host). A named `sslrootcert`
    /// has the certificate checked under `prefer` too; `sslrootcert=system` names the
    /// platform's roots only.
    ///
    /// ```no_run
    /// # async fn tls() -> Result<(), reins::store::StoreError> {
    /// use reins::store::PostgresStore;
    ///
    /// let store = PostgresStore::connect(
    ///     "host=db.example.com user=reins dbname=reins sslmode=require \
    ///      sslrootcert=/etc/reins/db-ca.pem",
    /// )
    /// .await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(config: &str) -> Result<Self, StoreError> {
        let conninfo::ConnectionString { config, root_cert } = conninfo::parse(config)?;
        let tls = tls::MakeRustlsConnect::new(config.get_ssl_mode(), root_cert.as_deref())?;
        let manager = Manager::from_config(
            config.clone(),
            tls.clone(),
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
            keep_checkpoints: None,
            servers: servers_of(&config).into(),
            config: std::sync::Arc::new(config),
            tls,
            signals: DecisionSignals::new(),
            feed: FeedSlot::default(),
            listener_check: Self::LISTENER_CHECK,
            lock_wait: Self::LOCK_WAIT,
        };
        // Named for a refusal of its tables: the database and its servers, no credentials.
        let database = match store.config.get_dbname() {
            Some(name) => format!("the PostgreSQL database `{name}` at {}", store.servers),
            None => format!("the PostgreSQL database at {}", store.servers),
        };
        schema::set_up(&mut store.client().await?, &database).await?;
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
        self.pool.get().await.map_err(|error| {
            let why = match &error {
                deadpool_postgres::PoolError::Backend(error) => {
                    super::error::describe_postgres(error)
                }
                other => other.to_string(),
            };
            StoreError::Backend(format!(
                "connecting to PostgreSQL at {}: {why}",
                self.servers
            ))
        })
    }

    /// How often, unless [`with_listener_check`](Self::with_listener_check) says otherwise,
    /// the connection that listens for decisions ([`watch_decisions`](RunStore::watch_decisions))
    /// is checked: a query that must be answered before the next check.
    pub const LISTENER_CHECK: Duration = Duration::from_secs(30);

    /// Sets how often the decision listener checks that its connection answers (default
    /// [`LISTENER_CHECK`](Self::LISTENER_CHECK)). A connection that died without closing
    /// (the server's host gone, a network path or a NAT entry dropped: TCP itself would
    /// notice after two hours idle) is noticed within about twice this time, replaced, and
    /// every watch told to look at the store again; until then, decisions made by other
    /// workers are not signalled. Shorter costs one small query per check. Set it before
    /// the first watch (the listener of a store and its clones starts with it).
    pub fn with_listener_check(mut self, every: Duration) -> Self {
        self.listener_check = every;
        self
    }

    /// How long, unless [`with_lock_timeout`](Self::with_lock_timeout) says otherwise, a
    /// write of a run waits for a lock another session of the database holds.
    pub const LOCK_WAIT: Duration = Duration::from_secs(10);

    /// Sets how long every write of a run waits for a lock another session of the database
    /// holds on it (default [`LOCK_WAIT`](Self::LOCK_WAIT), at least 1 ms; the server's
    /// `lock_timeout`, set for that write's transaction only): a claim
    /// ([`claim`](RunStore::claim), [`claim_from`](RunStore::claim_from)), a decision
    /// ([`decide`](RunStore::decide), [`log_decision`](RunStore::log_decision)), a
    /// [`checkpoint`](RunStore::checkpoint) (and the pruning of older ones), a
    /// [`renew`](RunStore::renew)al, a [`create`](RunStore::create) and a
    /// [`delete`](RunStore::delete). Another write holds a run's row a moment; a session that
    /// holds it longer (a transaction left open by a person or a stuck program) would make
    /// them wait for ever: past this they fail with [`StoreError::Locked`], writing nothing.
    /// [`expire`](RunStore::expire) does not wait for such a run at all: it leaves it for the
    /// next expiry.
    pub fn with_lock_timeout(mut self, wait: Duration) -> Self {
        self.lock_wait = wait;
        self
    }

    /// Sets how long a claim lasts without a checkpoint (default [`DEFAULT_LEASE`]).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Keeps only the newest `newest` checkpoints of each run (at least one): older ones are
    /// deleted as new ones are written (a statement of its own after the checkpoint's), so a
    /// long run's record grows with its state, not with its state times its turns.
    /// [`checkpoints`](RunStore::checkpoints) and forks reach back that far only. By default
    /// every checkpoint is kept.
    pub fn keep_checkpoints(mut self, newest: usize) -> Self {
        self.keep_checkpoints = Some(newest.max(1));
        self
    }

    fn lease_millis(&self) -> i64 {
        i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX)
    }
}

/// The servers `config` names, as `host:port` (or a socket directory), for messages.
fn servers_of(config: &tokio_postgres::Config) -> String {
    let ports = config.get_ports();
    config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(index, host)| {
            let host = match host {
                tokio_postgres::config::Host::Tcp(name) => name.clone(),
                #[cfg(unix)]
                tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
            };
            // One port for every host, or one each; 5432 when none is given.
            let port = ports.get(index).or(ports.first()).copied().unwrap_or(5432);
            format!("{host}:{port}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl RunStore for PostgresStore {
    async fn create(&self, state: &RunState, owner: &str) -> Result<Lease, StoreError> {
        // `writes` awaits the connection once the state is encoded.
        let lease = (owner, self.lease_millis());
        writes::create(self.client(), state, lease, self.lock_wait).await
    }

    async fn create_forked(
        &self,
        state: &RunState,
        journal: &[JournalEntry],
    ) -> Result<(), StoreError> {
        writes::insert(self.client(), state, None, journal, self.lock_wait).await
    }

    async fn claim(&self, run_id: &str, owner: &str) -> Result<ClaimedRun, StoreError> {
        let mut client = self.client().await?;
        writes::claim(
            &mut client,
            run_id,
            owner,
            self.lease_millis(),
            None,
            self.lock_wait,
        )
        .await
    }

    async fn claim_from(
        &self,
        run_id: &str,
        owner: &str,
        holder: &str,
    ) -> Result<ClaimedRun, StoreError> {
        let mut client = self.client().await?;
        let lease = self.lease_millis();
        writes::claim(
            &mut client,
            run_id,
            owner,
            lease,
            Some(holder),
            self.lock_wait,
        )
        .await
    }

    async fn checkpoint(
        &self,
        lease: &Lease,
        state: &RunState,
        journal: &[JournalEntry],
        release: bool,
    ) -> Result<Lease, StoreError> {
        // `writes` awaits the connection once the state is encoded.
        let connection = self.client();
        let policy = writes::CheckpointPolicy {
            lease_millis: self.lease_millis(),
            keep_checkpoints: self.keep_checkpoints,
            lock_wait: self.lock_wait,
        };
        writes::checkpoint(connection, (lease, state, journal), release, policy).await
    }

    async fn load(&self, run_id: &str) -> Result<RunState, StoreError> {
        let client = self.client().await?;
        reads::load(&client, run_id).await
    }

    async fn journal(&self, run_id: &str) -> Result<Vec<JournalEntry>, StoreError> {
        let client = self.client().await?;
        reads::journal(&client, run_id).await
    }

    async fn decide(
        &self,
        run_id: &str,
        decision: &Decision,
    ) -> Result<RecordedDecision, StoreError> {
        let mut client = self.client().await?;
        writes::decide(&mut client, run_id, decision, self.lock_wait).await
    }

    async fn log_decision(
        &self,
        lease: &Lease,
        decision: &Decision,
    ) -> Result<RecordedDecision, StoreError> {
        let mut client = self.client().await?;
        writes::log_decision(&mut client, lease, decision, self.lock_wait).await
    }

    async fn decisions(&self, run_id: &str) -> Result<Vec<RecordedDecision>, StoreError> {
        let mut client = self.client().await?;
        reads::decisions(&mut client, run_id).await
    }

    async fn checkpoints(&self, run_id: &str) -> Result<Vec<Checkpoint>, StoreError> {
        let mut client = self.client().await?;
        reads::checkpoints(&mut client, run_id).await
    }

    async fn load_checkpoint(&self, run_id: &str, version: i64) -> Result<RunState, StoreError> {
        let client = self.client().await?;
        reads::load_checkpoint(&client, run_id, version).await
    }

    async fn checkpoint_with_journal(
        &self,
        run_id: &str,
        version: i64,
    ) -> Result<CheckpointWithJournal, StoreError> {
        let mut client = self.client().await?;
        reads::checkpoint_with_journal(&mut client, run_id, version).await
    }

    async fn list(&self) -> Result<Vec<RunSummary>, StoreError> {
        let client = self.client().await?;
        listings::list(&client).await
    }

    async fn pending_approvals(&self) -> Result<PendingApprovals, StoreError> {
        let mut client = self.client().await?;
        listings::pending_approvals(&mut client).await
    }

    fn lease_duration(&self) -> Duration {
        self.lease
    }

    async fn renew(&self, lease: &Lease) -> Result<Lease, StoreError> {
        let client = self.client().await?;
        writes::renew(&client, lease, self.lease_millis(), self.lock_wait).await
    }

    async fn list_runs(&self, query: &RunQuery) -> Result<RunPage, StoreError> {
        let client = self.client().await?;
        listings::list_runs(&client, query).await
    }

    async fn recent_runs(
        &self,
        status: Option<RunStatus>,
        limit: usize,
    ) -> Result<RecentRuns, StoreError> {
        let client = self.client().await?;
        listings::recent_runs(&client, status, limit).await
    }

    async fn delete(&self, run_id: &str) -> Result<(), StoreError> {
        let mut client = self.client().await?;
        deletion::delete(&mut client, run_id, self.lock_wait).await
    }

    async fn expire(&self, older_than: Duration) -> Result<u64, StoreError> {
        let older_than = i64::try_from(older_than.as_millis()).unwrap_or(i64::MAX);
        let mut client = self.client().await?;
        deletion::expire(&mut client, older_than, self.lock_wait).await
    }

    async fn watch_decisions(&self) -> Result<DecisionWatch, StoreError> {
        // Subscribed before the listener starts: nothing between the two is missed.
        let watch = DecisionWatch::new(&self.signals, None);
        let feed = self
            .feed
            .get_or_start(pg_listen::start(
                (*self.config).clone(),
                self.tls.clone(),
                self.signals.clone(),
                self.listener_check,
            ))
            .await?;
        Ok(watch.with_feed(feed))
    }
}
