//! Connecting to PostgreSQL: over TLS to a server that allows nothing else (as managed
//! services do), checking its certificate; and what a connection that fails says about why.
//!
//! `scripts/with-postgres.sh` starts the server: `REINS_POSTGRES_TLS_URL` names a user
//! allowed over TLS only (with a password), `REINS_POSTGRES_ROOT_CERT` the root certificate
//! that signed the server's.

use super::{approval_round_trip, postgres_client, uuid_like};
use reins::store::{PostgresStore, RunStore, StoreError};

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} must be set for the postgres tests; scripts/with-postgres.sh sets it")
    })
}

/// The TLS user's password, which no error may show.
const PASSWORD: &str = "reins-tls-password";

/// A fresh database, and the connection string of the TLS-only user for it.
async fn tls_database() -> (String, String) {
    let admin = postgres_client(&env("REINS_POSTGRES_URL")).await;
    let database = format!("reins_tls_{}", uuid_like().replace('-', "_"));
    admin
        .batch_execute(&format!("CREATE DATABASE {database}"))
        .await
        .unwrap();
    let url = format!("{} dbname={database}", env("REINS_POSTGRES_TLS_URL"));
    assert!(
        url.contains(PASSWORD),
        "the TLS user logs in with a password"
    );
    (database, url)
}

fn backend_message(result: Result<PostgresStore, StoreError>) -> String {
    match result {
        Ok(_) => panic!("the store connected"),
        Err(StoreError::Backend(message)) => message,
        Err(other) => panic!("expected a backend error, got {other:?}"),
    }
}

/// Whether every connection of `database` is encrypted, and how many there are.
async fn encrypted_connections(database: &str) -> (bool, i64) {
    let admin = postgres_client(&env("REINS_POSTGRES_URL")).await;
    let row = admin
        .query_one(
            "SELECT coalesce(bool_and(s.ssl), false), count(*) FROM pg_stat_ssl s
                 JOIN pg_stat_activity a USING (pid) WHERE a.datname = $1",
            &[&database],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

#[tokio::test]
async fn a_store_requiring_tls_trusts_the_named_root_and_runs_over_it() {
    let (database, url) = tls_database().await;
    let root = env("REINS_POSTGRES_ROOT_CERT");
    let store = PostgresStore::connect(&format!("{url} sslmode=require sslrootcert={root}"))
        .await
        .unwrap();
    approval_round_trip(store.clone()).await;
    // The decision listener has a connection of its own.
    let _watch = store.watch_decisions().await.unwrap();
    let (encrypted, connections) = encrypted_connections(&database).await;
    assert!(
        connections >= 2,
        "the pool's and the listener's: {connections}"
    );
    assert!(encrypted, "every connection of the store uses TLS");

    // The URL form names the root the same way.
    let url = format!(
        "postgresql://reins_tls:{PASSWORD}@127.0.0.1:{}/{database}?sslmode=require&sslrootcert={}",
        port(&env("REINS_POSTGRES_URL")),
        root.replace('/', "%2F"),
    );
    let again = PostgresStore::connect(&url).await.unwrap();
    assert_eq!(again.list().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_server_certificate_no_trusted_root_signed_is_refused() {
    let (_, url) = tls_database().await;
    let message = backend_message(PostgresStore::connect(&format!("{url} sslmode=require")).await);
    assert!(message.contains("not trusted"), "{message}");
    assert!(
        message.contains("sslrootcert"),
        "says what to do: {message}"
    );
    assert!(!message.contains(PASSWORD), "{message}");
    // Named, the platform's roots alone do not sign it either.
    let message = backend_message(
        PostgresStore::connect(&format!("{url} sslmode=prefer sslrootcert=system")).await,
    );
    assert!(message.contains("not trusted"), "{message}");
}

/// `prefer`, the default, encrypts when the server offers TLS (without checking its
/// certificate, as libpq's `prefer`); `disable` does not, and the server's refusal says why.
#[tokio::test]
async fn the_default_encrypts_and_disable_is_refused_by_a_tls_only_server_with_its_reason() {
    let (database, url) = tls_database().await;
    let store = PostgresStore::connect(&url).await.unwrap();
    assert!(store.list().await.unwrap().is_empty());
    assert_eq!(encrypted_connections(&database).await, (true, 1));

    let message = backend_message(PostgresStore::connect(&format!("{url} sslmode=disable")).await);
    assert!(message.contains("no pg_hba.conf entry"), "{message}");
    assert!(message.contains("no encryption"), "{message}");
    assert!(message.contains("28000"), "the SQLSTATE: {message}");
    assert!(!message.contains(PASSWORD), "{message}");
}

/// A connection that fails says why: the server's error with its code, or the refused
/// connection with the address tried; never the password.
#[tokio::test]
async fn a_failed_connection_says_why_without_the_password() {
    let missing = format!(
        "{} dbname=reins_missing_{}",
        env("REINS_POSTGRES_URL"),
        uuid_like()
    )
    .replace('-', "_");
    let message = backend_message(PostgresStore::connect(&missing).await);
    assert!(message.contains("does not exist"), "{message}");
    assert!(message.contains("3D000"), "the SQLSTATE: {message}");

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let message = backend_message(
        PostgresStore::connect(&format!(
            "host=127.0.0.1 port={port} user=reins password={PASSWORD} dbname=postgres"
        ))
        .await,
    );
    assert!(message.to_lowercase().contains("refused"), "{message}");
    assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");
    assert!(!message.contains(PASSWORD), "{message}");
}

/// The `port=` of a key/value connection string.
fn port(url: &str) -> &str {
    url.split_whitespace()
        .find_map(|pair| pair.strip_prefix("port="))
        .unwrap_or("5432")
}
