//! Opening a store's file: for reading only ([`SqliteStore::open_read_only`]), which writes
//! nothing, so that a person who may only read the file (and its directory) can list and show
//! runs; and why a file cannot be opened at all, said once and in words (SQLite says only
//! "unable to open database file").

use super::SqliteStore;
use crate::store::StoreError;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// Said of a file that a read-only handle cannot use as it is.
const NOT_SET_UP: &str = "the file is not set up as a run store by this release (it is empty, \
                          was set up by an earlier release, or lacks a table): open it once for \
                          writing (`SqliteStore::open`) to set it up";

/// Why a read-only connection cannot be used.
enum Unread {
    /// SQLite failed (its error, with its code).
    Sqlite(rusqlite::Error),
    /// The file is not a store this release can read as it is.
    Store(StoreError),
}

/// Opens the file at `path` read-only: see [`SqliteStore::open_read_only`].
pub(super) fn read_only(path: &Path) -> Result<Connection, StoreError> {
    let named = |message: String| StoreError::Backend(format!("{}: {message}", path.display()));
    let unread = |unread: Unread| match unread {
        Unread::Sqlite(error) => named(error.to_string()),
        Unread::Store(StoreError::Backend(message)) => named(message),
        Unread::Store(other) => other,
    };
    match std::fs::metadata(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(named(
                "no such file: no run has been stored there yet".to_owned(),
            ));
        }
        Ok(metadata) if metadata.is_dir() => {
            return Err(named("is a directory, not a run store's file".to_owned()));
        }
        Err(error) => return Err(named(error.to_string())),
        Ok(_) => {}
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let open = |name: &Path, flags: OpenFlags| {
        Connection::open_with_flags(name, flags)
            .map_err(Unread::Sqlite)
            .and_then(|connection| current(connection, path))
    };
    match open(path, flags) {
        Ok(connection) => Ok(connection),
        // A file in write-ahead-log mode is read through its shared-memory file beside it,
        // which a reader creates when no process has the file open: in a directory it may not
        // write, it cannot. With no log beside the file either, every commit is in the file
        // itself, and it can be read as it is (SQLite's `immutable`).
        Err(Unread::Sqlite(error)) if cannot_open(&error) && !log_of(path).exists() => {
            let uri = format!("file:{}?immutable=1", uri_path(path));
            open(Path::new(&uri), flags | OpenFlags::SQLITE_OPEN_URI).map_err(unread)
        }
        Err(error) => Err(unread(error)),
    }
}

/// The connection, once a read shows its file is a store whose tables this release can use
/// as they are; else why not.
fn current(mut connection: Connection, path: &Path) -> Result<Connection, Unread> {
    connection
        .busy_timeout(super::BUSY_TIMEOUT)
        .map_err(Unread::Sqlite)?;
    // The first read, which SQLite fails with its own code if it cannot read the file.
    connection
        .query_row("SELECT COUNT(*) FROM sqlite_schema", [], |row| {
            row.get::<_, i64>(0)
        })
        .map_err(Unread::Sqlite)?;
    match super::schema::is_current(&mut connection, &path.display().to_string()) {
        Ok(true) => Ok(connection),
        Ok(false) => Err(Unread::Store(StoreError::Backend(NOT_SET_UP.to_owned()))),
        Err(error) => Err(Unread::Store(error)),
    }
}

/// Whether SQLite could not open or set up a file the connection needs to read (its log or
/// its shared memory): a read-only connection's first read says so as `SQLITE_CANTOPEN`, or as
/// `SQLITE_READONLY` (`_CANTINIT`) where it may not create the shared memory.
fn cannot_open(error: &rusqlite::Error) -> bool {
    matches!(error, rusqlite::Error::SqliteFailure(failure, _)
    if matches!(
        failure.code,
        rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly
    ))
}

/// The write-ahead log beside the file at `path`.
fn log_of(path: &Path) -> std::path::PathBuf {
    let mut log = path.as_os_str().to_owned();
    log.push("-wal");
    log.into()
}

/// `path` as the path of a `file:` URI: the characters a URI gives a meaning escaped.
fn uri_path(path: &Path) -> String {
    let mut escaped = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => escaped.push_str("%25"),
            '?' => escaped.push_str("%3f"),
            '#' => escaped.push_str("%23"),
            c => escaped.push(c),
        }
    }
    escaped
}

/// Why the file at `path` cannot be opened for writing, in words, when SQLite said only that
/// it could not open it: a directory, a directory missing, or one this user may not write.
pub(super) fn why_unopenable(path: &Path) -> Option<String> {
    if path.is_dir() {
        return Some("is a directory: name a file (in it, say)".to_owned());
    }
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    match std::fs::metadata(parent) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Some(format!(
                "no such directory {}: create it first",
                parent.display()
            ));
        }
        Ok(metadata) if !metadata.is_dir() => {
            return Some(format!("{} is not a directory", parent.display()));
        }
        _ => {}
    }
    if path.exists()
        && let Err(error) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
    {
        return Some(format!("{error}: this user may not write the file"));
    }
    #[cfg(unix)]
    if rustix::fs::access(
        parent,
        rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK,
    )
    .is_err()
    {
        return Some(format!(
            "permission denied: this user may not write in the directory {}, where the file \
             and its write-ahead log are kept",
            parent.display()
        ));
    }
    None
}

impl SqliteStore {
    /// Refuses a write through a handle opened with
    /// [`open_read_only`](SqliteStore::open_read_only), before SQLite is asked.
    pub(super) fn writable(&self) -> Result<(), StoreError> {
        if self.read_only {
            return Err(StoreError::Backend(format!(
                "{}: the store was opened read-only: nothing can be written through it",
                self.path.display()
            )));
        }
        Ok(())
    }
}
