//! A stdio server's process, and every process it started, ended together.
//!
//! A server is often started through a wrapper (`sh -c`, `npx`, `uvx`): the process reins
//! starts is the wrapper, and the server is its child. Killing only the wrapper would leave
//! the server running after the client closed, was dropped, failed to connect or started
//! the server again. The process is started as the leader of a process group of its own
//! (`connect.rs`), and on Unix the whole group is ended: asked first (`SIGTERM`, after a
//! moment for a server that exits when its input closes), then killed (`SIGKILL`) when
//! anything is left after a short grace. A runtime that ends (the end of `main`) may never
//! run that to its end: a client dropped asks the group to end at once, and an ending cut
//! short kills what is left.

use std::time::Duration;
use tokio::process::Child;

/// How long the server has to exit on its own once its standard input is closed.
const EXIT_ON_EOF_GRACE: Duration = Duration::from_secs(1);

/// How long the processes of the group have to exit once asked (`SIGTERM`) before they are
/// killed.
const EXIT_ON_TERM_GRACE: Duration = Duration::from_secs(2);

/// How often the group is looked at while it is given time to exit.
const EXIT_POLL: Duration = Duration::from_millis(50);

/// The server's process (started with `kill_on_drop`, leading a process group of its own);
/// its whole group is ended by [`end`](ServerProcess::end), or when this is dropped.
pub(crate) struct ServerProcess {
    child: Option<Child>,
}

impl ServerProcess {
    pub(crate) fn new(child: Child) -> Self {
        ServerProcess { child: Some(child) }
    }

    /// The process's id, while it runs.
    pub(crate) fn id(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// Ends the process and every process of its group, waiting until they are gone (a few
    /// seconds at most).
    pub(crate) async fn end(&mut self) {
        if let Some(child) = self.child.take() {
            end_group(child).await;
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let Some(child) = self.child.take() else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                // Asked at once, not only from the task: a runtime that is ending (the end of
                // `main`) may never run it, and the wrapper alone is killed with the leader.
                #[cfg(unix)]
                if let Some(group) = group_of(&child) {
                    signal_group(group, rustix::process::Signal::TERM);
                }
                runtime.spawn(end_group(child));
            }
            // No runtime to wait in: killed at once (the leader by `kill_on_drop`).
            Err(_) =>
            {
                #[cfg(unix)]
                if let Some(group) = group_of(&child) {
                    signal_group(group, rustix::process::Signal::KILL);
                }
            }
        }
    }
}

/// Lets the leader exit on its own for a moment, then asks the group to end, then kills
/// what is left of it.
async fn end_group(mut child: Child) {
    // Taken first: once the leader is reaped, its id is no longer known.
    #[cfg(unix)]
    let group = group_of(&child);
    // An ending cut short (its task dropped as the runtime shuts down, at the end of `main`)
    // kills the group rather than leave it running.
    #[cfg(unix)]
    let mut cut_short = KillOnDrop(group);
    let _ = tokio::time::timeout(EXIT_ON_EOF_GRACE, child.wait()).await;
    // The group's id stays taken (it names no other process) while any process of the
    // group is left, so signalling it after the leader exited reaches only what it left.
    #[cfg(unix)]
    if let Some(group) = group {
        use rustix::process::Signal;
        signal_group(group, Signal::TERM);
        let mut waited = Duration::ZERO;
        loop {
            // The leader is reaped as it exits: a group of only its zombie is gone.
            let _ = child.try_wait();
            if !group_is_alive(group) {
                break;
            }
            if waited >= EXIT_ON_TERM_GRACE {
                signal_group(group, Signal::KILL);
                break;
            }
            tokio::time::sleep(EXIT_POLL).await;
            waited += EXIT_POLL;
        }
    }
    let _ = child.start_kill();
    let _ = child.wait().await;
    #[cfg(unix)]
    {
        cut_short.0 = None;
    }
}

/// Kills a process group when dropped, unless let go (`.0 = None`) first.
#[cfg(unix)]
struct KillOnDrop(Option<rustix::process::Pid>);

#[cfg(unix)]
impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(group) = self.0 {
            signal_group(group, rustix::process::Signal::KILL);
        }
    }
}

/// The group `child` leads, unless it was reaped already.
#[cfg(unix)]
fn group_of(child: &Child) -> Option<rustix::process::Pid> {
    child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .and_then(rustix::process::Pid::from_raw)
}

#[cfg(unix)]
fn signal_group(group: rustix::process::Pid, signal: rustix::process::Signal) {
    // The group may be gone already (everything in it exited): nothing to do then.
    let _ = rustix::process::kill_process_group(group, signal);
}

#[cfg(unix)]
fn group_is_alive(group: rustix::process::Pid) -> bool {
    rustix::process::test_kill_process_group(group).is_ok()
}
