//! A shell tool's program runs in a process group of its own, killed whole when its call is cut
//! off or its program exits.
//!
//! In the terminal's group, a Ctrl-C would reach the program as well as reins: the program
//! could die of it before reins stopped the run, and its death be recorded as the call's
//! result (a failed call the model then retries) instead of leaving the call in doubt for a
//! person. And killing only the program leaves its children running (`sh -c "...; sleep"`)
//! after reins said the run stopped. A child the program leaves in the background when it
//! exits would hold its output open and keep the call waiting: it ends with the call too.
//!
//! A process that left the group (`setsid`) is beyond its kill: the program's supervisor,
//! the group's leader, ends those on Linux (tool_supervisor.rs), and a call cut off is
//! therefore left to it, not killed here, where there is one.

use tokio::process::{Child, Command};

/// Makes the program `command` starts the leader of a new process group (Unix; elsewhere the
/// program stays in reins's group).
pub fn own_group(command: &mut Command) {
    #[cfg(unix)]
    command.process_group(0);
    #[cfg(not(unix))]
    let _ = command;
}

/// The process group a started program leads; killed with every process in it when the
/// program has exited ([`end_rest`](GroupGuard::end_rest)), or when this is dropped before
/// (the call was cancelled or timed out) unless a supervisor leads it.
#[derive(Debug)]
pub struct GroupGuard {
    #[cfg(unix)]
    leader: Option<rustix::process::Pid>,
    /// Whether a drop before [`end_rest`](GroupGuard::end_rest) kills the group.
    #[cfg(unix)]
    kill_when_dropped: bool,
}

impl GroupGuard {
    /// Guards the group `child` leads (started with [`own_group`]). When `child` is the
    /// program's supervisor (`supervised`), a call cut off is left to it: it ends the group
    /// itself once the call's lifeline is dropped, and first the processes that left the
    /// group (see tool_supervisor.rs), which killing it with its group here would leave
    /// running.
    pub fn of(child: &Child, supervised: bool) -> Self {
        #[cfg(unix)]
        let guard = GroupGuard {
            leader: child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .and_then(rustix::process::Pid::from_raw),
            kill_when_dropped: !supervised,
        };
        #[cfg(not(unix))]
        let guard = {
            let _ = (child, supervised);
            GroupGuard {}
        };
        guard
    }

    /// The program exited (and was waited for): every process it left in its group is
    /// killed, its call over. (While the group has a process, its id is not given to another
    /// process, so no other program's group is reached; an empty group is gone, and the
    /// signal reaches no one, unless ids wrapped round to a new group's in the moment since
    /// the program was waited for.)
    pub fn end_rest(mut self) {
        self.kill();
    }

    /// Kills the group, once.
    fn kill(&mut self) {
        #[cfg(unix)]
        if let Some(leader) = self.leader.take() {
            // The group may be gone already (everything in it exited): nothing to do then.
            let _ = rustix::process::kill_process_group(leader, rustix::process::Signal::KILL);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if self.kill_when_dropped {
            self.kill();
        }
    }
}
