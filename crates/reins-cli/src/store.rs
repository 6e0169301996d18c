//! The run store an agent file names: SQLite (the default) or PostgreSQL, as one
//! [`BoxedStore`] (a Restate agent's runs are reached through [`crate::restate`] instead).

use crate::config::LoadedAgent;
use reins::store::{BoxedStore, DEFAULT_LEASE, SqliteStore};
use std::time::Duration;

/// Where the SQLite store is when the agent file names none (beside the agent file).
pub const DEFAULT_SQLITE: &str = ".reins/runs.sqlite";

/// Opens the store of a checked agent file.
pub async fn open(agent: &LoadedAgent) -> Result<BoxedStore, String> {
    let default = crate::config::StoreConfig::default();
    let config = agent.file.store.as_ref().map_or(&default, |s| s.get_ref());
    let keep = config.keep_checkpoints.as_ref().map(|keep| *keep.get_ref());
    let lease = config
        .lease_secs
        .as_ref()
        .map_or(DEFAULT_LEASE, |secs| Duration::from_secs(*secs.get_ref()));
    if config.restate.is_some() {
        // The commands route Restate agents to the ingress first; never fall back to SQLite.
        return Err(format!(
            "{} keeps its runs on Restate, not in a store this command can open",
            agent.path.display()
        ));
    }
    #[cfg(feature = "postgres")]
    if let Some(variable) = &config.postgres_url_env {
        let url = std::env::var(variable.get_ref())
            .map_err(|_| format!("{} is not set", variable.get_ref()))?;
        // The connection string may hold a password: the error names the variable only.
        return reins::store::PostgresStore::connect(&url)
            .await
            .map(|store| match keep {
                Some(newest) => BoxedStore::new(store.with_lease(lease).keep_checkpoints(newest)),
                None => BoxedStore::new(store.with_lease(lease)),
            })
            .map_err(|error| {
                format!(
                    "cannot open the PostgreSQL store ({}): {error}",
                    variable.get_ref()
                )
            });
    }
    let named = config.sqlite.as_ref().map(|file| file.get_ref().as_str());
    let path = agent.resolve(named.unwrap_or(DEFAULT_SQLITE));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|error| format!("cannot create {}: {error}", parent.display()))?;
    }
    SqliteStore::open(&path)
        .map(|store| match keep {
            Some(newest) => BoxedStore::new(store.with_lease(lease).keep_checkpoints(newest)),
            None => BoxedStore::new(store.with_lease(lease)),
        })
        .map_err(|error| format!("cannot open the run store {}: {error}", path.display()))
}
