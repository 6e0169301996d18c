//! A durable run in PostgreSQL over TLS, as a managed service requires it.
//!
//! The connection string names the TLS: `sslmode=require` (TLS or no connection, the server's
//! certificate checked) and `sslrootcert=<PEM file>`, the root certificate that signed the
//! server's (the service's CA certificate) if the platform does not trust it already.
//!
//! ```text
//! cargo run -p reins --features postgres --example postgres_tls -- \
//!   "host=db.example.com user=reins password=… dbname=reins sslmode=require sslrootcert=ca.pem"
//! ```
//!
//! Against the throwaway server of the tests (TLS only for its `reins_tls` user):
//!
//! ```text
//! scripts/with-postgres.sh sh -c 'cargo run -p reins --features postgres --example postgres_tls \
//!   -- "$REINS_POSTGRES_TLS_URL sslmode=require sslrootcert=$REINS_POSTGRES_ROOT_CERT"'
//! ```
//!
//! Runs offline: the model is a `ScriptedModel` script.

use reins::agent::AgentBuilder;
use reins::store::{PostgresStore, RunStore};
use reins::testing::{ScriptedModel, Turn};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(connection) = std::env::args().nth(1) else {
        return Err("usage: postgres_tls \"<connection string>\"".into());
    };
    // An untrusted certificate, or a server without TLS, fails here: never clear text.
    let store = PostgresStore::connect(&connection).await?;
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("Stored over TLS.")])).build();
    let answer = agent.prompt("Say hello.").durable(store.clone()).await?;
    println!("{answer} ({} runs stored)", store.list().await?.len());
    Ok(())
}
