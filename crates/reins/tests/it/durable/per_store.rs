//! [`per_store!`]: one test body run on every store, each store a test of its own.
//!
//! `per_store!(racing_workers);` next to `async fn racing_workers(store: impl RunStore)`
//! makes the module `racing_workers` with the tests `in_memory` (a [`MemoryStore`]),
//! `in_sqlite` (a [`SqliteStore`] in memory) and, with the `postgres` feature, `in_postgres`
//! (a fresh database on the server `scripts/with-postgres.sh` starts). The names keep the
//! store's name, so `--skip postgres` leaves the PostgreSQL ones out.
//!
//! - `per_store!(name, sqlite file);` gives the SQLite test a store in a file of a fresh
//!   temporary directory (removed when the test ends, failed or not) instead: the store users
//!   run, with its write-ahead log and locks on disk. The bodies get one handle (its clones
//!   share one connection), so none *needs* the file; the tests that race workers, cut runs
//!   off mid-write or hold runs across slow steps take it to run as a deployed store does.
//!   Tests that open a second handle on the file or write to it behind the store's back stay
//!   hand-written.
//! - `per_store!(name, each .with_lease(LEASE));` (after `sqlite file` if both) calls the
//!   methods after `each` on every store before handing it to the body; the names they use
//!   are those of the module the macro is called in.
//!
//! [`MemoryStore`]: reins::store::MemoryStore
//! [`SqliteStore`]: reins::store::SqliteStore

macro_rules! per_store {
    ($body:ident $(, each $($adapt:tt)+)?) => {
        $crate::durable::per_store::per_store!(@tests $body, in_memory, [$($($adapt)+)?]);
    };
    ($body:ident, sqlite file $(, each $($adapt:tt)+)?) => {
        $crate::durable::per_store::per_store!(@tests $body, file, [$($($adapt)+)?]);
    };
    (@tests $body:ident, $sqlite:ident, [$($adapt:tt)*]) => {
        mod $body {
            #[allow(unused_imports)]
            use super::*;

            #[tokio::test]
            async fn in_memory() {
                super::$body(reins::store::MemoryStore::new() $($adapt)*).await;
            }

            #[tokio::test]
            async fn in_sqlite() {
                $crate::durable::per_store::per_store!(@in_sqlite $body, $sqlite, [$($adapt)*]);
            }

            #[cfg(feature = "postgres")]
            #[tokio::test]
            async fn in_postgres() {
                super::$body(crate::durable::postgres_store().await $($adapt)*).await;
            }
        }
    };
    (@in_sqlite $body:ident, in_memory, [$($adapt:tt)*]) => {
        super::$body(reins::store::SqliteStore::in_memory().unwrap() $($adapt)*).await;
    };
    (@in_sqlite $body:ident, file, [$($adapt:tt)*]) => {
        let dir = tempfile::tempdir().unwrap();
        let store = reins::store::SqliteStore::open(dir.path().join("runs.sqlite")).unwrap();
        super::$body(store $($adapt)*).await;
    };
}

pub(super) use per_store;
