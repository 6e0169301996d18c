//! Opening a SQLite store's file: for reading only (`SqliteStore::open_read_only`), which reads
//! the runs and refuses every write, and a file that cannot be opened at all, said once with
//! why.

use super::RunStateBuilder;
use reins::store::{RunStore, SqliteStore};

#[tokio::test]
async fn a_store_opened_read_only_reads_runs_and_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.sqlite");
    let writer = SqliteStore::open(&path).unwrap();
    let state = RunStateBuilder::suspended_example();
    let lease = writer.create(&state, "worker").await.unwrap();
    writer.checkpoint(&lease, &state, &[], true).await.unwrap();
    drop(writer);

    let reader = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(
        reader.load(&state.run_id).await.unwrap().run_id,
        state.run_id
    );
    assert_eq!(reader.list().await.unwrap().len(), 1);
    assert!(!reader.checkpoints(&state.run_id).await.unwrap().is_empty());

    let mut other = RunStateBuilder::suspended_example();
    other.run_id = "r-other".to_owned();
    for refused in [
        reader.create(&other, "worker").await.map(drop),
        reader.claim(&state.run_id, "worker").await.map(drop),
        reader.delete(&state.run_id).await,
    ] {
        let message = refused.unwrap_err().to_string();
        assert!(
            message.contains("opened read-only") && message.contains(&path.display().to_string()),
            "{message}"
        );
    }
    assert_eq!(reader.list().await.unwrap().len(), 1, "nothing was written");
}

#[test]
fn a_read_only_open_of_a_file_that_is_not_a_store_yet_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("runs.sqlite");
    let message = SqliteStore::open_read_only(&missing)
        .unwrap_err()
        .to_string();
    assert!(message.contains("no such file"), "{message}");
    assert!(!missing.exists(), "not created");

    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, "").unwrap();
    let message = SqliteStore::open_read_only(&empty).unwrap_err().to_string();
    assert!(
        message.contains(&empty.display().to_string())
            && message.contains("not set up as a run store"),
        "{message}"
    );
    assert_eq!(std::fs::read(&empty).unwrap(), b"", "left as it was");
}

#[test]
fn a_file_that_cannot_be_opened_is_named_once_with_why() {
    let dir = tempfile::tempdir().unwrap();
    let in_missing = dir.path().join("no-such-dir").join("runs.sqlite");
    let message = SqliteStore::open(&in_missing).unwrap_err().to_string();
    let named = in_missing.display().to_string();
    assert_eq!(message.matches(&named).count(), 1, "{message}");
    assert!(message.contains("no such directory"), "{message}");

    let message = SqliteStore::open(dir.path()).unwrap_err().to_string();
    assert!(message.contains("is a directory"), "{message}");
}
