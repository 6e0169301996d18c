//! The supervisor as the program's descendants' last parent (Linux): a process that left the
//! program's group (`setsid prog &`, `setsid -f`, a daemon's double fork) escapes the group's
//! kill, and before this kept running after its call ended, was cut off, or reins was
//! killed (and held the call's output open to its timeout when it kept the program's
//! stdout).
//!
//! [`adopt_orphans`] makes the supervisor a child subreaper before the program starts: a
//! descendant whose parent dies is then the supervisor's child, not init's, whatever group
//! or session it moved to. [`end_children`] kills every child of the supervisor and reaps
//! it, again and again as their own children are handed to it, until none is left: once the
//! program ended (its leftovers end with the call, as the group's do) and when reins's end of
//! the socket closed. A descendant can still get away by being started by another process
//! (a service manager, `at`), or by making itself a subreaper and outliving the supervisor.

use rustix::io::Errno;
use rustix::process::{Pid, Signal, WaitOptions};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Held while children are ended: the watch on reins's socket and the main thread (once the
/// program ended) may both end them, and one must not signal a pid the other just reaped
/// (which the system may give again).
static ENDING: Mutex<()> = Mutex::new(());

/// How long [`end_children`] waits for killed children to end. SIGKILL ends a process at
/// once unless it is stuck in the kernel (a hung network file system); such a one is left to
/// die when it can (init reaps it once the supervisor exited), so that neither the program's
/// report nor the supervisor's end waits on it.
const PATIENCE: Duration = Duration::from_secs(2);

/// Between looks at children killed but not yet ended.
const POLL: Duration = Duration::from_millis(2);

/// Makes this process the parent of every orphaned descendant (`PR_SET_CHILD_SUBREAPER`);
/// not inherited by the program. Where the kernel refuses (before Linux 3.4), orphans go to
/// init as before, and only the group's kill reaches them.
pub(super) fn adopt_orphans() {
    // Any pid turns the attribute on (`None` turns it off).
    let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
}

/// Kills every child of this process (the program if it runs, and what was handed to this
/// process as its subreaper) and reaps it, until none is left or [`PATIENCE`] ran out.
pub(super) fn end_children() {
    let _ending = ENDING.lock().unwrap_or_else(PoisonError::into_inner);
    let deadline = Instant::now() + PATIENCE;
    loop {
        // The kernel's word on whether any child is left (zombies included): the list in
        // /proc can miss a child handed over while it is read. Any child, whatever its group
        // (`waitpid(None, ..)` would wait for this process's group only).
        match rustix::process::wait(WaitOptions::NOHANG) {
            Err(Errno::CHILD) => return,
            Ok(Some(_)) | Err(Errno::INTR) => continue,
            Ok(None) => {}
            Err(_) => return,
        }
        if Instant::now() >= deadline {
            return;
        }
        for child in children() {
            // Gone already, or reaped by the main thread's wait for the program: nothing to do.
            let _ = rustix::process::kill_process(child, Signal::KILL);
        }
        std::thread::sleep(POLL);
    }
}

/// The processes whose parent is this process, found in /proc: each thread's list of the
/// children it has, or where the kernel keeps none (built without `CONFIG_PROC_CHILDREN`) the
/// processes whose status names this one as their parent. Empty without /proc.
pub(super) fn children() -> Vec<Pid> {
    listed_children().unwrap_or_else(scanned_children)
}

/// The children in `/proc/self/task/*/children` (a child belongs to the thread that forked
/// it, or that it was handed to); `None` where a thread has no such file.
fn listed_children() -> Option<Vec<Pid>> {
    let mut children = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let listed = std::fs::read_to_string(task.ok()?.path().join("children")).ok()?;
        children.extend(listed.split_whitespace().filter_map(pid));
    }
    Some(children)
}

/// The processes whose `/proc/<pid>/stat` names this process as their parent.
fn scanned_children() -> Vec<Pid> {
    let me = rustix::process::getpid().as_raw_pid();
    let Ok(processes) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    processes
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let child = pid(entry.file_name().to_str()?)?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            (parent_in_stat(&stat)? == me).then_some(child)
        })
        .collect()
}

/// A pid written in decimal.
fn pid(text: &str) -> Option<Pid> {
    Pid::from_raw(text.parse().ok()?)
}

/// The parent pid in the text of `/proc/<pid>/stat`: `pid (name) state ppid ...`, the name
/// being anything the process chose (spaces and parentheses too), so fields are counted from
/// its last `)`.
fn parent_in_stat(stat: &str) -> Option<i32> {
    let (_, fields) = stat.rsplit_once(')')?;
    fields.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_is_read_after_the_last_parenthesis_of_the_name() {
        assert_eq!(parent_in_stat("42 (sleep) S 7 42 42 0 -1"), Some(7));
        assert_eq!(parent_in_stat("42 (a) b (c) R 9 42 42 0"), Some(9));
        assert_eq!(parent_in_stat("42 (x) 1 Z 3) S 11 1"), Some(11));
        assert_eq!(parent_in_stat("42 (sleep"), None);
    }

    /// Both ways of listing find a child this process started (the harness's other tests
    /// may have children of their own: only this one is looked for, and only it is ended).
    #[test]
    fn a_started_child_is_listed_and_scanned() {
        let mut sleeper = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .expect("start sleep");
        let started = i32::try_from(sleeper.id())
            .ok()
            .and_then(Pid::from_raw)
            .expect("a pid");
        let listed = listed_children();
        let scanned = scanned_children();
        let found = children();
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        if let Some(listed) = listed {
            assert!(listed.contains(&started), "{listed:?} lacks {started:?}");
        }
        assert!(scanned.contains(&started), "{scanned:?} lacks {started:?}");
        assert!(found.contains(&started), "{found:?} lacks {started:?}");
    }
}
