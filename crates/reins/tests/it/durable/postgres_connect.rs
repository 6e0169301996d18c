//! Connecting to PostgreSQL: what a connection that fails says about why.

use super::uuid_like;
use reins::store::{PostgresStore, StoreError};

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} must be set for the postgres tests; scripts/with-postgres.sh sets it")
    })
}

/// A password, which no error may show.
const PASSWORD: &str = "reins-tls-password";

fn backend_message(result: Result<PostgresStore, StoreError>) -> String {
    match result {
        Ok(_) => panic!("the store connected"),
        Err(StoreError::Backend(message)) => message,
        Err(other) => panic!("expected a backend error, got {other:?}"),
    }
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
