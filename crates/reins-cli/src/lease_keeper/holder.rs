//! Who holds a run's lease: the name a `reins` process claims runs under ([`worker_name`]),
//! read back ([`parse_worker_name`]), and whether the process it names is gone
//! ([`holder_is_gone`]). Written and read here only, so the two cannot drift apart.
//!
//! A process id means a process only in the pid namespace it was given in, and only until
//! the machine restarts; a host name does not say either (containers given the host's name,
//! or sharing its network, share it too). So the name also carries the [`PidSpace`]: the pid
//! namespace and the boot the pid belongs to, and only a holder of ours can be found gone.

use std::fmt;
use std::sync::OnceLock;

/// The name this process claims runs under
/// ([`PromptRequest::worker`](reins::agent::PromptRequest::worker)): the command, its process
/// id, the machine and, where the system says so, the pid namespace and boot that pid belongs
/// to, e.g. `reins run, pid 4242 on build-7 (pid ns 4026531836, boot 5f490e276066)`, so
/// `reins runs list`, `runs show` and a resume refused as busy say who holds a run, and where
/// to look for it.
pub fn worker_name(command: &str) -> String {
    let host = host();
    WorkerName {
        command,
        pid: std::process::id(),
        host: &host,
        pid_space: this_pid_space(),
    }
    .to_string()
}

/// A worker of this program, read back from the name [`worker_name`] gave it.
#[derive(Debug, PartialEq, Eq)]
pub struct WorkerName<'a> {
    /// The command (`run`, `runs resume`, `ui`).
    pub command: &'a str,
    /// Its process id, in `pid_space` on `host`.
    pub pid: u32,
    /// The machine it ran on.
    pub host: &'a str,
    /// Where `pid` names a process; `None` when the name does not say (a name of an earlier
    /// `reins`, or of a system that does not tell), and then nobody can tell which process
    /// it named.
    pub pid_space: Option<PidSpace>,
}

/// Where a process id names a process: a pid namespace of one boot of one kernel. Containers
/// on a machine share its boot but each has a pid namespace of its own (unless run with the
/// host's); another machine, or the same one restarted, has another boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PidSpace {
    /// The pid namespace's inode (`/proc/self/ns/pid` reads `pid:[4026531836]`). Unique
    /// among the namespaces of one boot that exist; one reused was left by processes that
    /// all ended with their namespace.
    pub namespace: u64,
    /// The first 12 hex digits (48 random bits) of the kernel's boot id
    /// (`/proc/sys/kernel/random/boot_id`): they tell machines, and boots, apart, while the
    /// namespace's inode does not (every machine's first pid namespace has the same one).
    pub boot: u64,
}

/// How many hex digits of the boot id a name keeps.
const BOOT_DIGITS: usize = 12;

impl fmt::Display for WorkerName<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let WorkerName {
            command,
            pid,
            host,
            pid_space,
        } = self;
        write!(formatter, "reins {command}, pid {pid} on {host}")?;
        match pid_space {
            Some(PidSpace { namespace, boot }) => write!(
                formatter,
                " (pid ns {namespace}, boot {boot:0width$x})",
                width = BOOT_DIGITS
            ),
            None => Ok(()),
        }
    }
}

/// The parts of a name [`worker_name`] made, by this `reins` or an earlier one (without its
/// [`PidSpace`]); `None` for any other name (another program's worker, a name a person
/// chose).
pub fn parse_worker_name(name: &str) -> Option<WorkerName<'_>> {
    let rest = name.strip_prefix("reins ")?;
    let (command, rest) = rest.split_once(", pid ")?;
    // The pid is digits, so the first ` on ` ends it, whatever the host is called.
    let (pid, place) = rest.split_once(" on ")?;
    let pid = digits(pid)?;
    // The pid space is last and holds no ` (`, so the last one starts it, whatever the host.
    let spaced = place.rsplit_once(" (").and_then(|(host, space)| {
        let space = parse_pid_space(space.strip_suffix(')')?)?;
        Some((host, space))
    });
    let (host, pid_space) = match spaced {
        Some((host, space)) => (host, Some(space)),
        None => (place, None),
    };
    Some(WorkerName {
        command,
        pid,
        host,
        pid_space,
    })
}

/// `pid ns 4026531836, boot 5f490e276066`, as [`WorkerName`]'s `Display` writes it.
fn parse_pid_space(text: &str) -> Option<PidSpace> {
    let (namespace, boot) = text.strip_prefix("pid ns ")?.split_once(", boot ")?;
    Some(PidSpace {
        namespace: digits(namespace)?,
        boot: boot_digits(boot)?,
    })
}

/// A number written in decimal digits only (`parse` would also take a sign).
fn digits<N: std::str::FromStr>(text: &str) -> Option<N> {
    if text.is_empty() || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Exactly [`BOOT_DIGITS`] hex digits.
fn boot_digits(text: &str) -> Option<u64> {
    if text.len() != BOOT_DIGITS || !text.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(text, 16).ok()
}

/// Whether `holder` (a lease's owner) names a worker of this program whose process no longer
/// runs, and whose pid this process can ask about: its lease then holds the run for nobody,
/// and a resume takes the run over ([`RunStore::claim_from`](reins::store::RunStore::claim_from))
/// instead of waiting for the lease to run out.
///
/// Conservative: only a holder of this host, pid namespace and boot can be gone. A name of
/// another form, of another host, namespace (a container with the host's name) or boot, or
/// one that does not say its namespace and boot (an earlier `reins`'s, or any where this
/// system does not tell them: without `/proc`), is not; nor is a process that runs (or may:
/// one of another user, or one that cannot be asked). Another boot is not a sign the holder
/// ended: another machine of the same name has another boot too, so a run left by a machine
/// that restarted waits its lease out. A process id the system gave again to a new process
/// counts as running, so such a lease is waited out as well.
pub fn holder_is_gone(holder: &str) -> bool {
    let Some(here) = this_pid_space() else {
        return false;
    };
    parse_worker_name(holder).is_some_and(|worker| {
        worker.pid_space == Some(here) && worker.host == host() && !process_runs(worker.pid)
    })
}

/// Where this process's id names it, read once (neither changes while it runs).
fn this_pid_space() -> Option<PidSpace> {
    static THIS: OnceLock<Option<PidSpace>> = OnceLock::new();
    *THIS.get_or_init(read_pid_space)
}

/// This process's pid namespace and boot, as Linux tells them; `None` when it does not (no
/// `/proc`, or not as expected).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn read_pid_space() -> Option<PidSpace> {
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let namespace = digits(link.to_str()?.strip_prefix("pid:[")?.strip_suffix(']')?)?;
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let boot: String = boot_id
        .trim()
        .chars()
        .filter(|char| *char != '-')
        .take(BOOT_DIGITS)
        .collect();
    Some(PidSpace {
        namespace,
        boot: boot_digits(&boot)?,
    })
}

/// Elsewhere nothing says which pid namespace and boot a process id belongs to.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn read_pid_space() -> Option<PidSpace> {
    None
}

/// Whether process `pid` runs on this machine: `false` only when the system says there is
/// no such process (a zombie, killed and not yet reaped by its parent, still runs here).
#[cfg(unix)]
fn process_runs(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        // Not a process id this system gives (0, or out of range): nothing to ask.
        return true;
    };
    // Signal 0 checks without sending anything; EPERM means it runs as another user.
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

/// Whether process `pid` runs: without a way to ask, it may.
#[cfg(not(unix))]
fn process_runs(_pid: u32) -> bool {
    true
}

/// This machine's name.
#[cfg(unix)]
fn host() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// This machine's name.
#[cfg(not(unix))]
fn host() -> String {
    std::env::var("COMPUTERNAME").unwrap_or_else(|_| "this machine".to_owned())
}

#[cfg(test)]
mod tests;
