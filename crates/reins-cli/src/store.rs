//! The run store an agent file names: SQLite (the default) or PostgreSQL, behind one type.

use crate::config::LoadedAgent;
use futures::future::BoxFuture;
use reins::agent::RunState;
use reins::store::{
    Checkpoint, ClaimedRun, Decision, DecisionWatch, JournalEntry, Lease, PendingApprovals,
    RecordedDecision, RunPage, RunQuery, RunStore, RunSummary, SqliteStore, StoreError,
};

/// Where the SQLite store is when the agent file names none (beside the agent file).
pub const DEFAULT_SQLITE: &str = ".reins/runs.sqlite";

/// The agent's store. Cheap to clone.
#[derive(Clone, Debug)]
pub enum AnyStore {
    /// One SQLite file.
    Sqlite(SqliteStore),
    /// A PostgreSQL database.
    #[cfg(feature = "postgres")]
    Postgres(reins::store::PostgresStore),
}

/// Opens the store of a checked agent file.
pub async fn open(agent: &LoadedAgent) -> Result<AnyStore, String> {
    let default = crate::config::StoreConfig::default();
    let config = agent.file.store.as_ref().map_or(&default, |s| s.get_ref());
    #[cfg(feature = "postgres")]
    if let Some(variable) = &config.postgres_url_env {
        let url = std::env::var(variable.get_ref())
            .map_err(|_| format!("{} is not set", variable.get_ref()))?;
        // The connection string may hold a password: the error names the variable only.
        return reins::store::PostgresStore::connect(&url)
            .await
            .map(AnyStore::Postgres)
            .map_err(|error| {
                format!(
                    "cannot open the PostgreSQL store ({}): {error}",
                    variable.get_ref()
                )
            });
    }
    let path = agent.resolve(config.sqlite.as_deref().unwrap_or(DEFAULT_SQLITE));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|error| format!("cannot create {}: {error}", parent.display()))?;
    }
    SqliteStore::open(&path)
        .map(AnyStore::Sqlite)
        .map_err(|error| format!("cannot open the run store {}: {error}", path.display()))
}

macro_rules! delegate {
    ($self:ident, $store:ident => $call:expr) => {
        match $self {
            AnyStore::Sqlite($store) => $call,
            #[cfg(feature = "postgres")]
            AnyStore::Postgres($store) => $call,
        }
    };
}

impl RunStore for AnyStore {
    fn create<'a>(
        &'a self,
        state: &'a RunState,
        owner: &'a str,
    ) -> BoxFuture<'a, Result<Lease, StoreError>> {
        delegate!(self, store => store.create(state, owner))
    }

    fn claim<'a>(
        &'a self,
        run_id: &'a str,
        owner: &'a str,
    ) -> BoxFuture<'a, Result<ClaimedRun, StoreError>> {
        delegate!(self, store => store.claim(run_id, owner))
    }

    fn checkpoint<'a>(
        &'a self,
        lease: &'a Lease,
        state: &'a RunState,
        journal: &'a [JournalEntry],
        release: bool,
    ) -> BoxFuture<'a, Result<Lease, StoreError>> {
        delegate!(self, store => store.checkpoint(lease, state, journal, release))
    }

    fn load<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<RunState, StoreError>> {
        delegate!(self, store => store.load(run_id))
    }

    fn journal<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<JournalEntry>, StoreError>> {
        delegate!(self, store => store.journal(run_id))
    }

    fn decide<'a>(
        &'a self,
        run_id: &'a str,
        decision: &'a Decision,
    ) -> BoxFuture<'a, Result<RecordedDecision, StoreError>> {
        delegate!(self, store => store.decide(run_id, decision))
    }

    fn decisions<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<RecordedDecision>, StoreError>> {
        delegate!(self, store => store.decisions(run_id))
    }

    fn checkpoints<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Checkpoint>, StoreError>> {
        delegate!(self, store => store.checkpoints(run_id))
    }

    fn load_checkpoint<'a>(
        &'a self,
        run_id: &'a str,
        version: i64,
    ) -> BoxFuture<'a, Result<RunState, StoreError>> {
        delegate!(self, store => store.load_checkpoint(run_id, version))
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<RunSummary>, StoreError>> {
        delegate!(self, store => store.list())
    }

    fn list_runs<'a>(&'a self, query: &'a RunQuery) -> BoxFuture<'a, Result<RunPage, StoreError>> {
        delegate!(self, store => store.list_runs(query))
    }

    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        delegate!(self, store => store.delete(run_id))
    }

    fn expire(&self, older_than: std::time::Duration) -> BoxFuture<'_, Result<u64, StoreError>> {
        delegate!(self, store => store.expire(older_than))
    }

    fn watch_decisions(&self) -> BoxFuture<'_, Result<DecisionWatch, StoreError>> {
        delegate!(self, store => store.watch_decisions())
    }

    fn pending_approvals(&self) -> BoxFuture<'_, Result<PendingApprovals, StoreError>> {
        delegate!(self, store => store.pending_approvals())
    }
}
