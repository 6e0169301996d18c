//! The file an [`AuditLog::append_to`](super::AuditLog::append_to) log appends to, opened
//! again when it was rotated away.
//!
//! Log rotation by renaming (logrotate's default) moves the file and leaves the writer's open
//! handle on the moved file: every later line would go to the old log. Before each line the
//! path is looked up, and when it no longer names the open file (moved, or deleted) the file
//! is opened again at the path. One `stat` a line: a line is already a `write` and a flush.
//! The check is made where a line starts (after a newline was written), so that a line a
//! failed write cut short is ended in the file that holds its start.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// An append-only file at a path, reopened after rotation.
pub(super) struct LogFile {
    path: PathBuf,
    file: File,
    /// The last byte written was not a newline: the next write goes on with its line.
    mid_line: bool,
}

impl LogFile {
    /// Opens (creating if missing) the file at `path` for appending.
    pub fn open(path: &Path) -> io::Result<Self> {
        Ok(LogFile {
            path: path.to_owned(),
            file: open_append(path)?,
            mid_line: false,
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
        // A line's first write checks for a rotation; the rest of it goes where it started.
        if !self.mid_line {
            self.follow_rotation();
        }
        let written = self.file.write(bytes)?;
        if let Some(last) = bytes.get(..written).and_then(<[u8]>::last) {
            self.mid_line = *last != b'\n';
        }
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}
