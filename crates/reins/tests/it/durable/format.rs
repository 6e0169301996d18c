//! Records that outlive releases: a suspended run stored by the release before in-doubt
//! calls, bound decisions and checkpoints (format 1, `fixtures/suspended_run_format_1.json`,
//! as that release wrote it) is listed, decided and resumed by this one on every store; a
//! record written by a newer release (format [`FORMAT_VERSION`] + 1) is refused, reported and
//! never changed or deleted by any store. How a stored record is put in each store
//! ([`StoredRecord`]) is shared with [`format_kinds`](super::format_kinds).

use super::per_store::per_store;
use super::{RunStateBuilder, Seen, agent, decide, uuid_like};
use reins::agent::*;
use reins::store::{
    FORMAT_VERSION, MemoryStore, RunQuery, RunStore, SqliteStore, StoreError, UnreadableRun,
    call_binding,
};
use reins::testing::{ScriptedModel, Turn};
use serde_json::json;
use std::future::Future;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[cfg(feature = "postgres")]
use super::{postgres_client, postgres_database};

/// A run's record as the format-1 release stored it: the run's id, the status it is listed
/// under and its state, as that release wrote it (`fixtures/`). [`format_kinds`] reads the
/// other kinds of record.
///
/// [`format_kinds`]: super::format_kinds
pub(super) struct StoredRecord {
    pub(super) run_id: &'static str,
    pub(super) status: &'static str,
    pub(super) state: &'static str,
}

/// A run suspended for an approval, with one call of its turn done and one waiting.
const SUSPENDED: StoredRecord = StoredRecord {
    run_id: "fixture-format-1",
    status: "suspended",
    state: include_str!("fixtures/suspended_run_format_1.json"),
};

/// The insert of a record as the format-1 release's stores wrote it (parameters: run id,
/// status, state), its lease long expired.
const INSERT: &str = "INSERT INTO reins_runs (run_id, version, format, status, state, lease_owner, lease_token, lease_until, updated_at)
     VALUES ($1, 3, 1, $2, $3, NULL, NULL, 0, 0)";

impl StoredRecord {
    /// A memory store holding the record.
    pub(super) fn in_memory(&self) -> MemoryStore {
        let store = MemoryStore::new();
        store.put_raw(self.run_id, 1, self.state);
        store.put_raw_status(self.run_id, self.status);
        store
    }

    /// An SQLite store in a new file in `dir` holding the record.
    pub(super) fn in_sqlite(&self, dir: &Path) -> SqliteStore {
        let path = dir.join(format!("{}-{}.sqlite", self.run_id, uuid_like()));
        let store = SqliteStore::open(&path).unwrap();
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute(
                &INSERT.replace('$', "?"),
                [self.run_id, self.status, self.state],
            )
            .unwrap();
        store
    }

    /// A PostgreSQL store in a fresh database holding the record.
    #[cfg(feature = "postgres")]
    pub(super) async fn in_postgres(&self) -> reins::store::PostgresStore {
        let url = postgres_database().await;
        let store = reins::store::PostgresStore::connect(&url).await.unwrap();
        postgres_client(&url)
            .await
            .execute(INSERT, &[&self.run_id, &self.status, &self.state])
            .await
            .unwrap();
        store
    }
}

async fn a_format_1_record_is_resumed(store: impl RunStore + Clone) {
    let listing = store.pending_approvals().await.unwrap();
    assert!(listing.unreadable.is_empty(), "{:?}", listing.unreadable);
    assert_eq!(listing.approvals.len(), 1);
    let pending = &listing.approvals[0];
    assert_eq!(pending.internal_call_id, "t1c1");
    assert_eq!(pending.arguments, json!({"text": "pay 100"}));
    assert!(!pending.in_doubt);
    assert_eq!(
        pending.binding,
        call_binding(SUSPENDED.run_id, "t1c1", "pay", &json!({"text": "pay 100"}))
    );

    decide(&store, SUSPENDED.run_id, "t1c1", ToolDecision::approve())
        .await
        .unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::resumable([
        Turn::tool_calls([
            ("lookup", json!({"text": "balance"})),
            ("pay", json!({"text": "pay 100"})),
        ]),
        Turn::text("Paid 100."),
    ]);
    let answer = agent(model, log.clone(), Seen::default())
        .resume_stored(store.clone(), SUSPENDED.run_id)
        .await
        .unwrap();
    assert_eq!(answer, "Paid 100.");
    assert_eq!(*log.lock().unwrap(), vec!["pay 100"], "the lookup was done");
    let finished = store.load(SUSPENDED.run_id).await.unwrap();
    assert_eq!(finished.status, RunStatus::Completed);
    assert!(
        !store
            .checkpoints(SUSPENDED.run_id)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_format_1_record_is_resumed_in_memory() {
    a_format_1_record_is_resumed(SUSPENDED.in_memory()).await;
}

#[tokio::test]
async fn a_format_1_record_is_resumed_in_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    a_format_1_record_is_resumed(SUSPENDED.in_sqlite(dir.path())).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_format_1_record_is_resumed_in_postgres() {
    a_format_1_record_is_resumed(SUSPENDED.in_postgres().await).await;
}

/// The run a newer release stored, finished long ago.
const NEWER_ID: &str = "from-a-newer-release";
/// Its state, in a shape this release does not know.
const NEWER_STATE: &str =
    r#"{"version":2,"run_id":"from-a-newer-release","status":"completed","plan":["a","b"]}"#;
/// A finished run of this release, listed and expired next to it.
const READABLE_ID: &str = "a-readable-run";

fn newer_format() -> i64 {
    i64::from(FORMAT_VERSION) + 1
}

/// The insert of the newer release's record (parameters: run id, format, state): finished,
/// last written at the epoch, so old enough for any expiry.
const INSERT_NEWER: &str = "INSERT INTO reins_runs (run_id, version, format, status, state, lease_owner, lease_token, lease_until, updated_at)
     VALUES ($1, 4, $2, 'completed', $3, NULL, NULL, 0, 0)";

/// The stored record of a run, as its columns hold it: version, format, status, state.
type Raw = (i64, i64, String, String);

const SELECT_RAW: &str = "SELECT version, format, status, state FROM reins_runs WHERE run_id = $1";

fn unsupported() -> StoreError {
    StoreError::UnsupportedFormat {
        run_id: NEWER_ID.to_owned(),
        found: newer_format(),
        supported: FORMAT_VERSION,
    }
}

/// A record of a newer release, put in the store by `insert`, is refused by every read and
/// every write, reported by the listing, survives delete and expiry, and stays byte for byte
/// what it was (`raw` reads it).
async fn a_newer_record_is_left_untouched<I, IFut, R, RFut>(
    store: impl RunStore + Clone,
    insert: I,
    raw: R,
) where
    I: FnOnce() -> IFut,
    IFut: Future<Output = ()>,
    R: Fn() -> RFut,
    RFut: Future<Output = Option<Raw>>,
{
    let mut readable = RunStateBuilder::suspended_example();
    readable.run_id = READABLE_ID.to_owned();
    readable.status = RunStatus::Completed;
    store.create(&readable, "w").await.unwrap();
    insert().await;
    let before = raw().await.expect("the record was inserted");
    assert_eq!(before.1, newer_format());

    assert_eq!(store.load(NEWER_ID).await.unwrap_err(), unsupported());
    assert_eq!(store.claim(NEWER_ID, "w").await.unwrap_err(), unsupported());
    let message = unsupported().to_string();
    assert!(message.contains("newer release"), "{message}");
    let agent = AgentBuilder::new(ScriptedModel::new([])).build();
    let error = agent
        .resume_stored(store.clone(), NEWER_ID)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, PromptError::Store { source, .. } if *source == unsupported()),
        "{error:?}"
    );
    let refused = decide(&store, NEWER_ID, "t1c1", ToolDecision::approve()).await;
    assert_eq!(refused.unwrap_err(), unsupported());
    assert_eq!(store.delete(NEWER_ID).await.unwrap_err(), unsupported());

    // Listed by id with the reason, whatever the status asked for, and paged like the others.
    let reported = vec![UnreadableRun {
        run_id: NEWER_ID.to_owned(),
        error: unsupported(),
    }];
    for query in [
        RunQuery::new(),
        RunQuery::new().status(RunStatus::Completed),
    ] {
        let page = store.list_runs(&query).await.unwrap();
        let listed: Vec<&str> = page.runs.iter().map(|run| run.run_id.as_str()).collect();
        assert_eq!(listed, vec![READABLE_ID]);
        assert_eq!(page.unreadable, reported);
        assert!(page.next.is_none());
    }
    let first = store
        .list_runs(&RunQuery::new().page_size(1))
        .await
        .unwrap();
    assert_eq!(first.runs.len(), 1);
    assert!(first.unreadable.is_empty());
    let next = first.next.expect("a second page");
    let second = store
        .list_runs(&RunQuery::new().page_size(1).after(next))
        .await
        .unwrap();
    assert!(second.runs.is_empty());
    assert_eq!(second.unreadable, reported);
    assert!(second.next.is_none());
    let suspended = store
        .list_runs(&RunQuery::new().status(RunStatus::Suspended))
        .await
        .unwrap();
    assert!(suspended.runs.is_empty() && suspended.unreadable.is_empty());

    // Expiry takes this release's finished run and leaves the newer one.
    assert_eq!(store.expire(Duration::ZERO).await.unwrap(), 1);
    assert_eq!(
        store.load(READABLE_ID).await.unwrap_err(),
        StoreError::NotFound(READABLE_ID.to_owned())
    );
    assert_eq!(store.load(NEWER_ID).await.unwrap_err(), unsupported());

    assert_eq!(
        raw().await,
        Some(before),
        "the record is byte for byte as it was"
    );
    assert!(store.journal(NEWER_ID).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_newer_record_is_left_untouched_in_memory() {
    let store = MemoryStore::new();
    let (writer, reader) = (store.clone(), store.clone());
    a_newer_record_is_left_untouched(
        store,
        || async move {
            // Stored as this release would, then made the newer release's record.
            let mut state = RunStateBuilder::suspended_example();
            state.run_id = NEWER_ID.to_owned();
            state.status = RunStatus::Completed;
            writer.create(&state, "newer").await.unwrap();
            writer.put_raw_format(NEWER_ID, newer_format());
            writer.put_raw_state(NEWER_ID, NEWER_STATE);
        },
        move || {
            let reader = reader.clone();
            async move { reader.raw_record(NEWER_ID) }
        },
    )
    .await;
}

#[tokio::test]
async fn a_newer_record_is_left_untouched_in_sqlite() {
    // Removed with its -wal and -shm files when the test ends, however it ends.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("newer.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    let sqlite = |sql: &str| sql.replace('$', "?");
    let (file, read) = (path.clone(), path.clone());
    a_newer_record_is_left_untouched(
        store,
        || async move {
            rusqlite::Connection::open(&file)
                .unwrap()
                .execute(
                    &sqlite(INSERT_NEWER),
                    rusqlite::params![NEWER_ID, newer_format(), NEWER_STATE],
                )
                .unwrap();
        },
        move || {
            let connection = rusqlite::Connection::open(&read).unwrap();
            let row = connection.query_row(&sqlite(SELECT_RAW), [NEWER_ID], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
            });
            async move { row.ok() }
        },
    )
    .await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_newer_record_is_left_untouched_in_postgres() {
    let url = postgres_database().await;
    let store = reins::store::PostgresStore::connect(&url).await.unwrap();
    let client = Arc::new(postgres_client(&url).await);
    let (writer, reader) = (Arc::clone(&client), client);
    a_newer_record_is_left_untouched(
        store,
        || async move {
            writer
                .execute(INSERT_NEWER, &[&NEWER_ID, &newer_format(), &NEWER_STATE])
                .await
                .unwrap();
        },
        move || {
            let reader = Arc::clone(&reader);
            async move {
                let row = reader.query_opt(SELECT_RAW, &[&NEWER_ID]).await.unwrap()?;
                Some((row.get(0), row.get(1), row.get(2), row.get(3)))
            }
        },
    )
    .await;
}

/// The journal of a run no store has is empty on every store, not an error.
async fn the_journal_of_an_unknown_run_is_empty(store: impl RunStore) {
    assert!(store.journal("nobody").await.unwrap().is_empty());
}

per_store!(the_journal_of_an_unknown_run_is_empty);
