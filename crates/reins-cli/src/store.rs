//! The run store an agent file names: SQLite (the default) or PostgreSQL, as one
//! [`BoxedStore`] (a Restate agent's runs are reached through [`crate::restate`] instead).

use crate::config::LoadedAgent;
use reins::store::{BoxedStore, DEFAULT_LEASE, MemoryStore, SqliteStore, StoreError};
use std::time::Duration;

/// Where the SQLite store is when the agent file names none (beside the agent file).
pub const DEFAULT_SQLITE: &str = ".reins/runs.sqlite";

/// Opens the store of a checked agent file for a command that only reads it (`runs list`,
/// `runs show`, `runs checkpoints`): a SQLite file that is a store this release reads as it
/// is opens read-only, writing nothing, so a user who may read the file but not write it (or
/// its directory) can; one that is not there yet, or whose tables need setting up, is opened
/// as [`open`] opens it. One not there at all holds no runs, and reading it creates nothing:
/// an empty store stands in for it (no `.reins` directory made where a command only looked).
pub async fn open_for_reading(agent: &LoadedAgent) -> Result<BoxedStore, String> {
    let default = crate::config::StoreConfig::default();
    let config = agent.file.store.as_ref().map_or(&default, |s| s.get_ref());
    if config.restate.is_none() && config.postgres_url_env.is_none() {
        let path = sqlite_path(agent, config);
        // `symlink_metadata`: a dangling link is there, and opening it says what is wrong.
        if std::fs::symlink_metadata(&path)
            .is_err_and(|error| error.kind() == std::io::ErrorKind::NotFound)
        {
            return Ok(BoxedStore::new(MemoryStore::new()));
        }
        if path.is_file()
            && let Ok(store) = SqliteStore::open_read_only(&path)
        {
            return Ok(BoxedStore::new(store));
        }
    }
    open(agent).await
}

/// The SQLite file of the store `config` of `agent`.
fn sqlite_path(agent: &LoadedAgent, config: &crate::config::StoreConfig) -> std::path::PathBuf {
    let named = config.sqlite.as_ref().map(|file| file.get_ref().as_str());
    agent.resolve(named.unwrap_or(DEFAULT_SQLITE))
}

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
    let path = sqlite_path(agent, config);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|error| {
            format!(
                "cannot create {}, the run store's directory: {error}{ELSEWHERE}",
                parent.display()
            )
        })?;
    }
    SqliteStore::open(&path)
        .map(|store| match keep {
            Some(newest) => BoxedStore::new(store.with_lease(lease).keep_checkpoints(newest)),
            None => BoxedStore::new(store.with_lease(lease)),
        })
        .map_err(|error| unopened(&path, error))
}

/// Said after a store that cannot be made or written where the file says: what else to do.
const ELSEWHERE: &str = " (or keep the runs elsewhere: `[store] sqlite = \"PATH\"` in the \
                         agent file)";

/// Why the SQLite store at `path` did not open, naming the file once: the store's own
/// message names it already, before what went wrong.
fn unopened(path: &std::path::Path, error: StoreError) -> String {
    let shown = path.display().to_string();
    let message = match error {
        StoreError::Backend(message) => message,
        other => other.to_string(),
    };
    let reason = message
        .strip_prefix(&shown)
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(&message);
    let permission = reason.contains("ermission denied") || reason.contains("may not write");
    format!(
        "cannot open the run store {shown}: {reason}{}",
        if permission { ELSEWHERE } else { "" }
    )
}
