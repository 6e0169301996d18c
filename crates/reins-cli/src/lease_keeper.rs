//! [`LeaseKeeper`]: the store a run of `reins run`, `reins chat` or `reins runs resume`
//! writes through, keeping the lease the run holds, so that a run stopped by Ctrl-C gives its
//! lease back at once ([`LeaseKeeper::release`]) instead of keeping the run busy until the
//! lease expires.
//!
//! A run a dead `reins` process of this machine left leased is taken over at once
//! ([`holder_is_gone`]), not waited for.
//!
//! The run's writes (`create`, `claim`, `checkpoint`, and the lease's `renew`) each finish in their own task: a run
//! interrupted while a write is in flight drops its future, but the write still completes
//! and its lease is kept, so the release that follows writes after it with the lease it
//! returned, never with a stale one.

use reins::agent::RunState;
use reins::store::{
    BoxedStore, ClaimedRun, Decision, JournalEntry, Lease, RunStore, StoreError, StoreWrapper,
};
use std::sync::Arc;
use tokio::sync::Mutex;

/// The name this process claims runs under
/// ([`PromptRequest::worker`](reins::agent::PromptRequest::worker)): the command, its process
/// id and the machine, e.g. `reins run, pid 4242 on build-7`, so `reins runs list`, `runs
/// show` and a resume refused as busy say who holds a run, and where to look for it.
pub fn worker_name(command: &str) -> String {
    format!("reins {command}, pid {} on {}", std::process::id(), host())
}

/// A worker of this program, read back from the name [`worker_name`] gave it.
#[derive(Debug, PartialEq, Eq)]
pub struct WorkerName<'a> {
    /// The command (`run`, `runs resume`, `ui`).
    pub command: &'a str,
    /// Its process id, on `host`.
    pub pid: u32,
    /// The machine it ran on.
    pub host: &'a str,
}

/// The parts of a name [`worker_name`] made; `None` for any other name (another program's
/// worker, a name a person chose).
pub fn parse_worker_name(name: &str) -> Option<WorkerName<'_>> {
    let rest = name.strip_prefix("reins ")?;
    let (command, rest) = rest.split_once(", pid ")?;
    // The pid is digits, so the first ` on ` ends it, whatever the host is called.
    let (pid, host) = rest.split_once(" on ")?;
    // Digits only: `parse` would also take a sign.
    if !pid.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let pid = pid.parse().ok()?;
    Some(WorkerName { command, pid, host })
}

/// Whether `holder` (a lease's owner) names a worker of this program on this machine whose
/// process no longer runs: its lease then holds the run for nobody, and a resume takes the
/// run over ([`RunStore::claim_from`]) instead of waiting for the lease to run out.
///
/// Conservative: a name of another form, of another machine, or of a process that runs (or
/// may: one of another user, or one that cannot be asked) is not gone. A process id the
/// system gave again to a new process counts as running, so such a lease is waited out as
/// before. Processes that share a host name but not their process ids (containers given the
/// host's name) must not share a store: one would take the other's live runs over.
pub fn holder_is_gone(holder: &str) -> bool {
    parse_worker_name(holder)
        .is_some_and(|worker| worker.host == host() && !process_runs(worker.pid))
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

/// A store that remembers the lease of the run written through it. Clones share it.
#[derive(Clone)]
pub struct LeaseKeeper {
    inner: BoxedStore,
    /// The lease the run holds now; `None` before it is created or claimed and once its last
    /// checkpoint released it. Locked by every write for as long as the write takes.
    held: Arc<Mutex<Option<Lease>>>,
}

impl LeaseKeeper {
    /// Keeps the leases taken in `inner`.
    pub fn new(inner: BoxedStore) -> Self {
        LeaseKeeper {
            inner,
            held: Arc::new(Mutex::new(None)),
        }
    }

    /// Gives the run's lease back, after the write in flight (if any) has finished: the run's
    /// state is written again as the store holds it (nothing the run recorded is lost, nothing
    /// it did not record is added), released, so any process may resume it right away.
    /// Returns whether a lease was held.
    pub async fn release(&self) -> Result<bool, StoreError> {
        let mut held = self.held.lock().await;
        let Some(lease) = held.take() else {
            return Ok(false);
        };
        let stored = self.inner.load(&lease.run_id).await?;
        self.inner.checkpoint(&lease, &stored, &[], true).await?;
        Ok(true)
    }

    /// Logs in the trail of `run_id`, under the lease the run holds, a decision its own
    /// decider made while it goes on ([`RunStore::log_decision`]); nothing while this keeper
    /// holds no lease on that run.
    pub async fn log_decision(&self, run_id: &str, decision: &Decision) -> Result<(), StoreError> {
        // Held for the write, as every write holds it: the lease does not move meanwhile.
        let held = self.held.lock().await;
        match held.as_ref() {
            Some(lease) if lease.run_id == run_id => {
                self.inner.log_decision(lease, decision).await.map(drop)
            }
            _ => Ok(()),
        }
    }

    /// Claims `run_id` for `owner` ([`RunStore::claim`]), or takes it over from `holder`
    /// ([`RunStore::claim_from`]), keeping the lease.
    async fn claim_taking_over(
        &self,
        run_id: &str,
        owner: &str,
        holder: Option<String>,
    ) -> Result<ClaimedRun, StoreError> {
        let (inner, run_id, owner) = (self.inner.clone(), run_id.to_owned(), owner.to_owned());
        let claim = async move {
            match holder {
                Some(holder) => inner.claim_from(&run_id, &owner, &holder).await,
                None => inner.claim(&run_id, &owner).await,
            }
        };
        self.write(claim, |claimed| &claimed.lease, false).await
    }

    /// Runs `write` in a task of its own, holding the lock until it is done, and keeps the
    /// lease it returns (`None` when `release`d).
    async fn write<T, W>(
        &self,
        write: W,
        lease_of: fn(&T) -> &Lease,
        release: bool,
    ) -> Result<T, StoreError>
    where
        T: Send + 'static,
        W: std::future::Future<Output = Result<T, StoreError>> + Send + 'static,
    {
        let mut held = Arc::clone(&self.held).lock_owned().await;
        let task = tokio::spawn(async move {
            let written = write.await;
            if let Ok(value) = &written {
                *held = (!release).then(|| lease_of(value).clone());
            }
            written
        });
        task.await
            .map_err(|error| StoreError::Panicked(error.to_string()))?
    }
}

// Every call it does not change is the inner store's, the lease's length included.
impl StoreWrapper for LeaseKeeper {
    type Inner = BoxedStore;

    fn inner(&self) -> &BoxedStore {
        &self.inner
    }

    async fn create(&self, state: &RunState, owner: &str) -> Result<Lease, StoreError> {
        let (inner, state, owner) = (self.inner.clone(), state.clone(), owner.to_owned());
        self.write(
            async move { inner.create(&state, &owner).await },
            |lease| lease,
            false,
        )
        .await
    }

    /// A run whose lease a dead process of this program on this machine holds
    /// ([`holder_is_gone`]) is taken over at once, saying so on stderr; any other holder's
    /// lease refuses the claim as busy.
    async fn claim(&self, run_id: &str, owner: &str) -> Result<ClaimedRun, StoreError> {
        let holder = match self.claim_taking_over(run_id, owner, None).await {
            Err(StoreError::Busy { owner: holder, .. }) if holder_is_gone(&holder) => holder,
            claimed => return claimed,
        };
        // Refused as busy, naming the claim that replaced it, if another resume was first.
        let claimed = self
            .claim_taking_over(run_id, owner, Some(holder.clone()))
            .await?;
        errln!(
            "reins: took over run {run_id} from {holder}, which is no longer running",
            holder = reins::text::printable(&holder)
        );
        Ok(claimed)
    }

    async fn claim_from(
        &self,
        run_id: &str,
        owner: &str,
        holder: &str,
    ) -> Result<ClaimedRun, StoreError> {
        self.claim_taking_over(run_id, owner, Some(holder.to_owned()))
            .await
    }

    async fn checkpoint(
        &self,
        lease: &Lease,
        state: &RunState,
        journal: &[JournalEntry],
        release: bool,
    ) -> Result<Lease, StoreError> {
        // The copies are what a write of its own costs; a CLI run's state is small.
        let (inner, lease, state, journal) = (
            self.inner.clone(),
            lease.clone(),
            state.clone(),
            journal.to_vec(),
        );
        self.write(
            async move { inner.checkpoint(&lease, &state, &journal, release).await },
            |lease| lease,
            release,
        )
        .await
    }

    /// A renewal moves the lease on like any write (the inner store's may add a version).
    async fn renew(&self, lease: &Lease) -> Result<Lease, StoreError> {
        let (inner, lease) = (self.inner.clone(), lease.clone());
        self.write(
            async move { inner.renew(&lease).await },
            |lease| lease,
            false,
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_name_reads_back_as_made() {
        let name = worker_name("runs resume");
        let worker = parse_worker_name(&name).expect("a worker's name");
        assert_eq!(worker.command, "runs resume");
        assert_eq!(worker.pid, std::process::id());
        assert_eq!(worker.host, host());
        let odd_host = parse_worker_name("reins run, pid 7 on a on b").expect("parsed");
        assert_eq!((odd_host.pid, odd_host.host), (7, "a on b"));
        for other in [
            "worker-a",
            "reins run, pid +7 on h",
            "reins run, pid  on h",
            "reins run, pid 7",
            "reins run pid 7 on h",
        ] {
            assert_eq!(parse_worker_name(other), None, "{other}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn only_a_process_of_this_machine_that_ended_is_gone() {
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("start true");
        let pid = child.id();
        child.wait().expect("reaped");
        let here = host();
        assert!(holder_is_gone(&format!("reins run, pid {pid} on {here}")));
        assert!(!holder_is_gone(&format!(
            "reins run, pid {pid} on not-{here}"
        )));
        assert!(!holder_is_gone(&worker_name("run")), "this process runs");
        // Process 1 runs, whoever it belongs to (EPERM counts as running).
        assert!(!holder_is_gone(&format!("reins run, pid 1 on {here}")));
        assert!(!holder_is_gone(&format!("reins run, pid 0 on {here}")));
        assert!(!holder_is_gone(&format!("other, pid {pid} on {here}")));
    }
}
