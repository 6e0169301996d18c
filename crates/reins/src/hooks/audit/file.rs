//! The file an [`AuditLog::append_to`](super::AuditLog::append_to) log appends to, opened
//! again when it was rotated away.
//!
//! Log rotation by renaming (logrotate's default) moves the file and leaves the writer's open
//! handle on the moved file: every later line would go to the old log. Before each line the
//! path is looked up, and when it no longer names the open file (moved, or deleted) the file
//! is opened again at the path. One `stat` a line: a line is already a `write` and a flush.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// An append-only file at a path, reopened after rotation.
pub(super) struct LogFile {
    path: PathBuf,
    file: File,
}

impl LogFile {
    /// Opens (creating if missing) the file at `path` for appending.
    pub fn open(path: &Path) -> io::Result<Self> {
        Ok(LogFile {
            path: path.to_owned(),
            file: open_append(path)?,
        })
    }

    /// Opens the path again if it no longer names the open file. When that fails the line
    /// goes to the open file, so nothing is lost.
    fn follow_rotation(&mut self) {
        if self.still_current() {
            return;
        }
        match open_append(&self.path) {
            Ok(file) => self.file = file,
            Err(error) => tracing::warn!(
                %error,
                path = %self.path.display(),
                "the audit log was moved and could not be opened again; writing to the moved file"
            ),
        }
    }

    #[cfg(unix)]
    fn still_current(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(&self.path), self.file.metadata()) {
            (Ok(at_path), Ok(open)) => at_path.dev() == open.dev() && at_path.ino() == open.ino(),
            // A path that names nothing any more: the file was moved or deleted.
            (Err(_), _) => false,
            // The open file cannot be asked: keep it.
            (_, Err(_)) => true,
        }
    }

    #[cfg(not(unix))]
    fn still_current(&self) -> bool {
        // Elsewhere an open file cannot be renamed, so it cannot have been rotated away.
        self.path.exists()
    }
}

fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

impl Write for LogFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.file.write(bytes)
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        // The log writes each line with one `write_all`: the check runs once a line.
        self.follow_rotation();
        self.file.write_all(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}
