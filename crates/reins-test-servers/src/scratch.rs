//! A test's own temporary directory, removed when dropped: where a server it starts keeps its
//! data and log, and its temporary files (the directory is the server's `TMPDIR`), so that
//! nothing is left in the system's temporary directory after the test, passed or failed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A fresh directory under the system's temporary directory, removed with all it holds when
/// dropped — also while a failing test unwinds.
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// Makes `reins-LABEL-PID-N` (the first such name no directory has) under the system's
    /// temporary directory. Short: a server's socket in it must fit a socket's path limit.
    pub fn new(label: &str) -> ScratchDir {
        static MADE: AtomicU32 = AtomicU32::new(0);
        loop {
            let path = std::env::temp_dir().join(format!(
                "reins-{label}-{}-{}",
                std::process::id(),
                MADE.fetch_add(1, Ordering::Relaxed)
            ));
            // `create_dir`, not `create_dir_all`: a directory left by a process that had
            // the same id is never shared.
            match std::fs::create_dir(&path) {
                Ok(()) => return ScratchDir { path },
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(error) => panic!("cannot make {} ({error})", path.display()),
            }
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // A server killed a moment ago may have children still closing files (a browser's
        // helper processes): removing races with their last writes, so it is tried again.
        for _attempt in 0..50 {
            match std::fs::remove_dir_all(&self.path) {
                Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                    std::thread::sleep(Duration::from_millis(100));
                }
                _ => return,
            }
        }
    }
}

/// The last `lines` lines of the file at `path` (empty when it cannot be read): what a
/// server printed, for a failing test to show before its directory goes.
pub fn last_lines(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let last: Vec<&str> = text.lines().rev().take(lines).collect();
    last.into_iter().rev().collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::ScratchDir;

    #[test]
    fn the_directory_and_what_it_holds_go_when_dropped() {
        let scratch = ScratchDir::new("scratch-drop");
        let path = scratch.path().to_owned();
        std::fs::create_dir_all(path.join("nested")).unwrap();
        std::fs::write(path.join("nested/file"), "x").unwrap();
        drop(scratch);
        assert!(!path.exists());
    }

    #[test]
    fn the_directory_goes_when_the_test_owning_it_panics() {
        let mut made = None;
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let scratch = ScratchDir::new("scratch-panic");
            made = Some(scratch.path().to_owned());
            panic!("the test fails");
        }));
        assert!(failed.is_err());
        assert!(!made.expect("made").exists());
    }

    #[test]
    fn two_directories_made_at_once_are_distinct() {
        let (first, second) = (ScratchDir::new("twice"), ScratchDir::new("twice"));
        assert_ne!(first.path(), second.path());
    }
}
