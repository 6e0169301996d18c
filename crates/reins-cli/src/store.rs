//! The run store an agent file names: SQLite (the default) or PostgreSQL, as one
//! [`BoxedStore`].

use crate::config::LoadedAgent;
use reins::store::{BoxedStore, SqliteStore};

/// Where the SQLite store is when the agent file names none (beside the agent file).
pub const DEFAULT_SQLITE: &str = ".reins/runs.sqlite";

/// Opens the store of a checked agent file.
pub async fn open(agent: &LoadedAgent) -> Result<BoxedStore, String> {
    let default = crate::config::StoreConfig::default();
    let config = agent.file.store.as_ref().map_or(&default, |s| s.get_ref());
    #[cfg(feature = "postgres")]
    if let Some(variable) = &config.postgres_url_env {
        let url = std::env::var(variable.get_ref())
            .map_err(|_| format!("{} is not set", variable.get_ref()))?;
        // The connection string may hold a password: the error names the variable only.
        return reins::store::PostgresStore::connect(&url)
            .await
            .map(BoxedStore::new)
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
        .map(BoxedStore::new)
        .map_err(|error| format!("cannot open the run store {}: {error}", path.display()))
}
