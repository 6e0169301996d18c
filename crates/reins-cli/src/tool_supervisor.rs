//! A shell tool's program is started by a supervisor that ends it when reins is gone: reins
//! itself, run again in this mode (the variable [`SUPERVISE`] set), leading the program's
//! process group.
//!
//! Why: a reins killed with SIGKILL (the OOM killer, `kill -9`, a container stopped hard) runs
//! no destructor, so [`GroupGuard`](crate::process_group::GroupGuard) never kills the group,
//! and the program went on running with nobody to read its result: a booking could then be
//! made after the resumed run reported its call in doubt, while a person decided whether to
//! make it again. The supervisor holds one end of a socket pair whose other end only reins
//! holds; when reins is gone, however it went, the socket reads end of file and the
//! supervisor kills the group, itself with it. (Linux's parent-death signal would need code
//! run between `fork` and `exec`, which safe Rust cannot give a child.)
//!
//! A call cut off (Ctrl-C, a timeout) is ended the same way: reins drops its end of the
//! socket, and leaves the group to the supervisor rather than killing it, supervisor and
//! all, before the supervisor could end what follows.
//!
//! A descendant that moved to a group or session of its own (`setsid prog &`, a daemon's
//! double fork) is out of the group's reach: it kept running after its call ended, was cut
//! off or reins was killed (a booking made after the run reported the call in doubt), and
//! one holding the program's output kept the call waiting to its timeout. On Linux the
//! supervisor is a child subreaper (`tool_supervisor/reaper.rs`): such a descendant is its
//! child once its parent died, and the supervisor kills every child it has, and those
//! handed to it in turn, before it ends the group, and once the program ended before it
//! reports: what escaped ends with the call, as what stayed in the group does. On other
//! Unix systems it escapes as before.
//!
//! Over the same socket the supervisor tells reins why the program could not start, or how
//! it ended, so a call's result reads as when reins started the program itself.
//!
//! Unix only; elsewhere, and in this crate's unit tests (whose executable is the test
//! harness, not reins), reins starts the program itself.

#[cfg(target_os = "linux")]
mod reaper;

use std::ffi::OsStr;
use std::process::ExitCode;

/// The variable that makes `reins` a tool's supervisor: its arguments are then the program
/// and the program's arguments, and its standard input the socket to reins.
pub const SUPERVISE: &str = "REINS_INTERNAL_SUPERVISE_TOOL";

/// What the supervisor reports, one line each: the program could not start (with why), or
/// the raw wait status it ended with.
const CANNOT_START: &str = "cannot-start ";
const ENDED: &str = "ended ";

/// The most bytes of reports reins reads (a start failure's text is short).
const MOST_REPORTED: u64 = 4096;

/// Supervises the program named by this process's arguments when reins was started as a
/// supervisor ([`SUPERVISE`] set), and the exit code to end with; `None` for any other start.
/// Called first in `main`, before the async runtime starts.
pub fn supervise_if_asked() -> Option<ExitCode> {
    std::env::var_os(SUPERVISE)?;
    #[cfg(unix)]
    return Some(unix::supervise());
    #[cfg(not(unix))]
    return Some(ExitCode::FAILURE);
}

/// How a supervised start went: the command to spawn, and the socket to keep until it ended.
pub struct Supervised {
    /// The command that starts the supervisor (or the program itself when it cannot be
    /// supervised).
    pub command: tokio::process::Command,
    #[cfg(unix)]
    lifeline: Option<std::os::unix::net::UnixStream>,
}

/// A command starting `program` with `args` under a supervisor where there can be one, the
/// program itself otherwise. The caller sets the rest (output pipes, directory,
/// environment, group) as for the program, and must [`Supervised::started`] once spawned.
pub fn command(program: &OsStr, args: &[impl AsRef<OsStr>]) -> Supervised {
    #[cfg(all(unix, not(test)))]
    if let Some(supervised) = unix::supervised(program, args) {
        return supervised;
    }
    let mut command = tokio::process::Command::new(program);
    command.args(args).stdin(std::process::Stdio::null());
    Supervised {
        command,
        #[cfg(unix)]
        lifeline: None,
    }
}

impl Supervised {
    /// Whether the command starts a supervisor (not the program itself): a call cut off is
    /// then ended by it, once the [`Lifeline`] is dropped.
    pub fn supervises(&self) -> bool {
        #[cfg(unix)]
        return self.lifeline.is_some();
        #[cfg(not(unix))]
        return false;
    }

    /// The command was spawned: the supervisor's end of the socket is closed here (it lives
    /// on in the supervisor only), and the watch on reins's end begins.
    pub fn started(self) -> Lifeline {
        drop(self.command);
        Lifeline {
            #[cfg(unix)]
            socket: self.lifeline,
        }
    }
}

/// Reins's end of the supervisor's socket: while it is held the program may run; dropped
/// (the call cut off, or reins gone), the supervisor ends the program's group.
pub struct Lifeline {
    #[cfg(unix)]
    socket: Option<std::os::unix::net::UnixStream>,
}

impl Lifeline {
    /// How the program ended, from the supervisor's report, given how the started process
    /// (the supervisor, or the program itself) ended: `Err` with why the program could not
    /// start.
    pub fn outcome(
        self,
        status: std::process::ExitStatus,
    ) -> Result<std::process::ExitStatus, String> {
        #[cfg(unix)]
        if let Some(socket) = self.socket {
            return unix::reported(socket, status);
        }
        Ok(status)
    }
}

#[cfg(unix)]
mod unix {
    use super::{CANNOT_START, ENDED, MOST_REPORTED, SUPERVISE, Supervised};
    use std::ffi::OsStr;
    use std::io::{Read, Write};
    use std::os::fd::AsFd;
    use std::os::unix::net::UnixStream;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{ExitCode, ExitStatus, Stdio};

    /// The supervisor's command for `program`, or `None` when reins cannot run itself (its
    /// executable is unknown, or no socket can be made).
    #[cfg_attr(test, allow(dead_code))]
    pub(super) fn supervised(program: &OsStr, args: &[impl AsRef<OsStr>]) -> Option<Supervised> {
        let reins = std::env::current_exe().ok()?;
        let (ours, theirs) = UnixStream::pair().ok()?;
        let mut command = tokio::process::Command::new(reins);
        command
            .arg(program)
            .args(args)
            .env(SUPERVISE, "1")
            .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs)));
        Some(Supervised {
            command,
            lifeline: Some(ours),
        })
    }

    /// Reads the supervisor's report once it ended (`status`).
    pub(super) fn reported(socket: UnixStream, status: ExitStatus) -> Result<ExitStatus, String> {
        let mut report = String::new();
        // The supervisor has exited, and nothing else holds its end: this reads to its end
        // at once. A supervisor killed before it reported leaves its own status.
        let _ = socket.take(MOST_REPORTED).read_to_string(&mut report);
        for line in report.lines() {
            if let Some(why) = line.strip_prefix(CANNOT_START) {
                return Err(why.to_owned());
            }
            if let Some(raw) = line.strip_prefix(ENDED).and_then(|raw| raw.parse().ok()) {
                return Ok(ExitStatus::from_raw(raw));
            }
        }
        Ok(status)
    }

    /// The supervisor's work: start the program in this process's group, end the group when
    /// reins's end of the socket (standard input) closes, report how the program ended.
    pub(super) fn supervise() -> ExitCode {
        let Some(socket) = std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .map(UnixStream::from)
        else {
            return ExitCode::FAILURE;
        };
        let mut arguments = std::env::args_os().skip(1);
        let Some(program) = arguments.next() else {
            return ExitCode::FAILURE;
        };
        let mut report = &socket;
        // Before the program starts, so that no descendant of it is ever init's.
        #[cfg(target_os = "linux")]
        super::reaper::adopt_orphans();
        let mut child = match std::process::Command::new(&program)
            .args(arguments)
            .env_remove(SUPERVISE)
            .stdin(Stdio::null())
            .spawn()
        {
            Ok(child) => child,
            Err(error) => {
                let _ = writeln!(report, "{CANNOT_START}{error}");
                return ExitCode::FAILURE;
            }
        };
        if let Ok(watched) = socket.try_clone() {
            std::thread::spawn(move || end_group_when_closed(watched));
        }
        let ended = child.wait();
        // What the program left running ends before the call does: here what escaped its
        // group too (reins kills the group once this process exited).
        #[cfg(target_os = "linux")]
        super::reaper::end_children();
        match ended {
            Ok(status) => {
                let _ = writeln!(report, "{ENDED}{}", status.into_raw());
                ExitCode::SUCCESS
            }
            Err(_) => ExitCode::FAILURE,
        }
    }

    /// Waits for reins's end of `socket` to close (reins never writes to it), then kills this
    /// process's group, the program and everything it started with it: reins is gone, or
    /// gave the call up. Only a group this process leads, as reins starts it: never reins's.
    /// On Linux every descendant that left the group is killed first (the group's kill ends
    /// this process too).
    fn end_group_when_closed(mut socket: UnixStream) {
        let mut byte = [0; 1];
        loop {
            match socket.read(&mut byte) {
                Ok(0) => break,
                Ok(_) => {}
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        #[cfg(target_os = "linux")]
        super::reaper::end_children();
        if rustix::process::getpgrp() == rustix::process::getpid() {
            let _ = rustix::process::kill_current_process_group(rustix::process::Signal::KILL);
        }
    }
}
