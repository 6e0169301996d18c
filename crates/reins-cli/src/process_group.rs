//! A shell tool's program runs in a process group of its own, killed whole when its call is cut
//! off.
//!
//! In the terminal's group, a Ctrl-C would reach the program as well as reins: the program
//! could die of it before reins stopped the run, and its death be recorded as the call's
//! result (a failed call the model then retries) instead of leaving the call in doubt for a
//! person. And killing only the program leaves its children running (`sh -c "...; sleep"`)
//! after reins said the run stopped.

use tokio::process::{Child, Command};

/// Makes the program `command` starts the leader of a new process group (Unix; elsewhere the
/// program stays in reins's group).
pub fn own_group(command: &mut Command) {
    #[cfg(unix)]
    command.process_group(0);
    #[cfg(not(unix))]
    let _ = command;
}

/// The process group a started program leads; killed with every process in it when this is
/// dropped before [`finished`](GroupGuard::finished) (the call was cancelled or timed out).
#[derive(Debug)]
pub struct GroupGuard {
    #[cfg(unix)]
    leader: Option<rustix::process::Pid>,
}

impl GroupGuard {
    /// Guards the group `child` leads (started with [`own_group`]).
    pub fn of(child: &Child) -> Self {
        #[cfg(unix)]
        let guard = GroupGuard {
            leader: child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .and_then(rustix::process::Pid::from_raw),
        };
        #[cfg(not(unix))]
        let guard = {
            let _ = child;
            GroupGuard {}
        };
        guard
    }

    /// The program ended on its own: what it left running is its business.
    pub fn finished(mut self) {
        #[cfg(unix)]
        {
            self.leader = None;
        }
        #[cfg(not(unix))]
        let _ = &mut self;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(leader) = self.leader.take() {
            // The group may be gone already (everything in it exited): nothing to do then.
            let _ = rustix::process::kill_process_group(leader, rustix::process::Signal::KILL);
        }
    }
}
