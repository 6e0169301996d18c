// Over 500 lines: this is the module's guide and the `RunStore` trait, whose method docs are
// the contract every store keeps (a store of one's own included); both are what a reader of
// `reins::store` opens first, and the trait's methods belong together.

//! Durable runs: where a run's state and its effect journal are kept, so a run can pause for a
//! person, survive a crash, and be resumed in another process without doing anything twice.
//!
//! The whole round trip — a call suspended ([`DispatchAction::suspend`], or an
//! [`ApprovalPolicy`](crate::hooks::approval::ApprovalPolicy)'s `Rule::suspend`), listed
//! ([`RunStore::pending_approvals`]), decided ([`RunStore::decide`] with a [`Decision`]) and
//! resumed by id ([`Agent::resume_stored`](crate::agent::Agent::resume_stored)) — is
//! [`MemoryStore`]'s example; `SqliteStore` and `PostgresStore` run it the same way
//! across processes (`examples/durable_approval.rs` does, one process per step).
//!
//! [`DispatchAction::suspend`]: crate::agent::DispatchAction::suspend
//!
//! # The guarantee
//!
//! A run attached to a [`RunStore`] (see
//! [`PromptRequest::durable`](crate::agent::PromptRequest::durable)) writes a checkpoint — its
//! whole [`RunState`] plus the journal entries of the effects completed since the last one, in
//! one transaction — after every model turn and after every tool call, before the run
//! advances. Resuming a run therefore never repeats a journaled effect: finished tool calls
//! are replayed from the state, not called again, and a journaled model turn is not requested
//! again.
//!
//! # Nothing in doubt is run again
//!
//! Before a tool executes, the run checkpoints that the call starts, with the arguments it
//! executes with (after every hook's rewrite and any decision; journal kind
//! `tool_call_started`). After a crash, a call that started and has no result is *in doubt*:
//! its side effect may or may not have happened. The resumed run then
//!
//! - executes it again, with the arguments it started with and without asking the dispatch
//!   hooks again, only when its tool declares that safe
//!   ([`Tool::retry_safety`](crate::tool::Tool::retry_safety):
//!   [`RetrySafety::Idempotent`](crate::tool::RetrySafety::Idempotent), or
//!   [`RetrySafety::DeduplicatesByEffectId`](crate::tool::RetrySafety::DeduplicatesByEffectId)
//!   for a tool that passes [`ToolCallContext::effect_id`](crate::tool::ToolCallContext::effect_id)
//!   — `<run id>/<internal call id>`, the same on every execution — to its service as an
//!   idempotency key);
//! - otherwise suspends with the call in doubt
//!   ([`PendingCall::is_in_doubt`](crate::agent::PendingCall::is_in_doubt),
//!   [`PendingApproval::in_doubt`]) and executes nothing until a decision says what to do:
//!   [`ToolDecision::Rerun`], [`ToolDecision::Skip`] (the model sees a message) or
//!   [`ToolDecision::SupplyResult`] (the model sees the result the call really had).
//!
//! A run cut off by a crash is still `Running` in the store: its calls in doubt are found, and
//! listed by [`RunStore::pending_approvals`], once a worker resumes it after the dead worker's
//! lease has expired, or takes the run over from the dead worker ([`RunStore::claim_from`]).
//!
//! So a tool that declares nothing runs at most once per call, crashes included; one that
//! declares itself safe to repeat runs at least once. A model turn that was received but not
//! yet checkpointed is requested again (model calls have no side effects). Each execution costs
//! one more checkpoint (its start) in a durable run.

//! # Concurrency
//!
//! Workers take a lease on a run before working on it ([`RunStore::claim`]). Every claim gets
//! its own random token ([`Lease::token`]); the token, not the worker's name, holds the lease.
//! A run whose lease is live cannot be claimed by any other claim — also not by a worker with
//! the same name ([`PromptRequest::worker`](crate::agent::PromptRequest::worker) is a label
//! for people, shown in [`StoreError::Busy`]) — and every checkpoint is a compare-and-swap on
//! the run's version and the claim's token. So of two workers racing to resume one run,
//! whatever their names, exactly one proceeds and the other gets [`StoreError::Busy`] before
//! it runs anything (or [`StoreError::Conflict`] if its lease expired and was taken over
//! mid-step). A decision recorded once a lease has run out ([`RunStore::decide`]) ends that
//! lease the same way, since its worker would never apply it. A crashed worker's lease
//! expires after the store's lease duration, also when it restarts under the same name; make
//! the lease longer than the longest single step (model call or tool call) of your runs. A
//! caller that knows the worker is dead need not wait: [`RunStore::claim_from`] takes the run
//! from the worker it names, atomically, only while that worker still holds it.
//!
//! Leases are timed by one clock per store: the process's for `MemoryStore` and `SqliteStore`
//! (one machine), the database server's for `PostgresStore`, so workers on machines whose
//! clocks disagree still agree on whose lease is live.
//!
//! # Runs cut off
//!
//! A run whose future is dropped before its end (a timeout, a `select!`, an aborted task)
//! gives its lease back at once, in a task spawned on the runtime it was dropped in: after
//! any write it had in flight, its first one included, under the lease that write returned,
//! so it never releases a lease another claim holds. Its record stays as last written, and
//! any worker may resume it right away.
//!
//! A run still going when its **runtime shuts down** cannot do that: the runtime drops its
//! tasks without running anything new, the give-back included (and a database connection
//! needs the runtime to write). Such a run keeps its lease until the lease expires, as after
//! a crash: a resume before then is refused with [`StoreError::Busy`]. So a program that ends while runs are under way (returning from `main`, dropping its
//! `Runtime`) leaves them busy for up to the store's lease duration (five minutes by default,
//! `with_lease` on each store). One that stops on purpose frees them sooner by stopping them
//! while its runtime still runs (abort their tasks and await them) and letting the runtime go
//! on while the give-backs write, a grace period before it ends as a server's shutdown has:
//! the give-backs are tasks of their own, with no handle to await.
//!
//! # Finished runs
//!
//! A run that completed or failed (a hook cancelled it, a model or tool error ended it, it hit
//! `max_turns`) is final: [`RunStore::claim`] refuses it with [`StoreError::Finished`] and
//! writes nothing, so
//! [`Agent::resume_stored`](crate::agent::Agent::resume_stored) on it ends with
//! [`PromptError::AlreadyFinished`](crate::agent::PromptError::AlreadyFinished) (which carries
//! a completed run's answer) instead of an answer: a caller cannot mistake "was already
//! finished" for "finished just now". The stored record, its version included, is unchanged.
//!
//! # Decisions bound to what runs
//!
//! Every call waiting for a decision is listed with a [`PendingApproval::binding`]: the
//! SHA-256 digest ([`call_binding`]) of the run id, the call's internal id, the tool's name and
//! the arguments the call executes with if approved ([`PendingCall::arguments`]: the model's
//! as hooks repaired them, or those a call in doubt started with). A [`Decision`] carries that
//! binding along with who decided and why; [`RunStore::decide`] records it with the time
//! ([`RecordedDecision`]) only if the stored call still has that binding, else it refuses with
//! [`StoreError::StaleDecision`]. A resumed run checks every recorded decision again: a stale
//! one is refused the same way (the claim is released, the record unchanged, nothing runs),
//! and the call is listed as waiting again, for a decision about what it is now. A decision
//! is never applied to another run, call, tool or arguments, and a call without a decision
//! never runs. A call is decided once: a second, different decision before the run resumes
//! is refused with [`StoreError::AlreadyDecided`] (how and by whom it was decided), unless it
//! names the decision it replaces ([`Decision::replacing`]), so nobody overrules a decision
//! unseen. [`ToolDecision::Skip`] and [`ToolDecision::SupplyResult`] answer a call in doubt
//! only: about a call that waits for approval, which never ran, they are refused with
//! [`StoreError::NotInDoubt`] (approve, edit or deny it). [`RunStore::decisions`] lists every decision of a run, replaced ones included:
//! the audit trail. A decision the run's own decider made while the run went on (a person at
//! the worker's terminal, a webhook) is applied at once; the worker adds it to the trail with
//! [`RunStore::log_decision`], under its lease, marked [`RecordedDecision::during_run`], and
//! it binds nothing afterwards. Decisions recorded by a release before bindings carry none
//! and bind nothing: such a call must be decided again.
//!
//! # Time travel
//!
//! Every write of a run's state is kept as a checkpoint: [`RunStore::checkpoints`] lists them,
//! [`RunStore::load_checkpoint`] reads one, and [`fork`] starts a new run from any of them,
//! optionally edited, with the parent's journal up to that point, read with the checkpoint in
//! one snapshot ([`RunStore::checkpoint_with_journal`]). Nothing the checkpoint holds is
//! executed again; the parent stays as it was.
//!
//! # Listing approvals
//!
//! [`RunStore::pending_approvals`] returns [`PendingApprovals`]: every waiting call of every
//! suspended run the store can read, and every suspended run it cannot read (a corrupt record,
//! an unknown format, an unreadable decision) by id with the reason, so no approval disappears
//! silently; so is a run whose stored status is none this release knows, as it may be
//! waiting. Only a failure of the store itself fails the whole listing.
//!
//! # Format
//!
//! Runs are stored as JSON documents of [`RunState`], each tagged with the number of the format
//! it was written in; this release writes [`FORMAT_VERSION`], and every write of a run's state
//! ([`RunStore::create`], [`RunStore::checkpoint`]) tags it so. Records outlive releases:
//!
//! - **Older records are upgraded when read.** A record of an older format is turned into the
//!   current one in memory, one version at a time, whenever it is loaded, claimed, listed for
//!   approval or decided about; the store keeps it as it was until the run's next checkpoint
//!   writes it in the current format. A record an upgrade step fails on is
//!   [`StoreError::Corrupt`] (naming the run), and left untouched.
//! - **Newer records are refused and left untouched.** A record written by a newer release (a
//!   format above [`FORMAT_VERSION`]) is never read, changed or deleted by this one:
//!   [`load`](RunStore::load), [`claim`](RunStore::claim) (so
//!   [`Agent::resume_stored`](crate::agent::Agent::resume_stored)) and
//!   [`decide`](RunStore::decide) refuse it with [`StoreError::UnsupportedFormat`], and so does
//!   [`delete`](RunStore::delete), which deletes nothing; [`expire`](RunStore::expire) skips it,
//!   however old. The same holds for an older format this release no longer upgrades.
//! - **Listings report them.** [`RunStore::list_runs`] lists such a record in
//!   [`RunPage::unreadable`] and [`RunStore::pending_approvals`] in
//!   [`PendingApprovals::unreadable`], by id with the reason, instead of failing or skipping it.
//!
//! A record that is not valid JSON of its format is [`StoreError::Corrupt`], also left
//! untouched; so is one whose stored status is none this release knows: it is not taken for
//! running (or anything else), listed as unreadable, and not deleted. Every store behaves
//! the same. The SQL stores' tables have a generation of their own ([`SCHEMA_GENERATION`]): a
//! database whose tables a newer release changed beyond this one's use is refused whole, on
//! opening, with [`StoreError::UnsupportedSchema`], and left as it is.

mod boxed;
mod decision;
mod erased;
mod error;
mod fork;
mod format;
mod generation;
#[cfg(all(test, any(feature = "sqlite", feature = "postgres")))]
mod interleaved;
mod journal;
mod lease;
mod listing;
mod memory;
mod notify;
mod pending;
#[cfg(feature = "postgres")]
mod pg_listen;
#[cfg(feature = "postgres")]
mod postgres;
mod recent;
#[cfg(feature = "sqlite")]
mod sqlite;
mod wrapper;

pub use boxed::BoxedStore;
pub use decision::{Decision, RecordedDecision, call_binding};
pub use error::{StandingDecision, StoreError};
pub use fork::{Checkpoint, CheckpointWithJournal, fork};
pub use format::FORMAT_VERSION;
pub use generation::SCHEMA_GENERATION;
pub use journal::JournalEntry;
pub use lease::{ClaimedRun, DEFAULT_LEASE, Lease};
pub use listing::{LeaseHolder, RunCursor, RunPage, RunQuery, RunSummary};
pub use memory::MemoryStore;
pub use notify::{DecisionSignal, DecisionWatch};
pub use pending::{PendingApproval, PendingApprovals, UnreadableRun};
#[cfg(feature = "postgres")]
pub use postgres::{DEFAULT_POOL_SIZE, PostgresStore};
pub use recent::RecentRuns;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
pub use wrapper::StoreWrapper;

#[cfg(doc)]
use crate::run::{PendingCall, ToolDecision};
use crate::run::{RunState, RunStatus};
pub(crate) use decision::{Recording, decided_during_run, record_decision};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use decision::{decode_decision, encode_decision};
pub(crate) use erased::{SharedStore, share};
pub(crate) use fork::short_journal;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use format::oldest_readable;
pub(crate) use format::{
    check_readable, decode_state, encode_state, status_from_name, status_name,
};
pub(crate) use lease::{check_claimable, check_unleased, expiry_cutoff, new_token, now_millis};
pub(crate) use listing::{
    FINISHED, Listed, StoredLease, StoredTimes, check_deletable, listed, page_of, summary,
};
pub(crate) use pending::collect_pending;
pub(crate) use recent::{newest_first, recent_of};
use std::future::Future;
use std::time::Duration;

/// Where durable runs live. Implementations: [`MemoryStore`] (tests, one process),
/// `SqliteStore` (feature `sqlite`, the embedded default: one file) and `PostgresStore`
/// (feature `postgres`: many workers on many machines).
///
/// Every method is one transaction.
///
/// A run that takes longer than a lease between two writes renews it
/// ([`renew`](RunStore::renew), every third of [`lease_duration`](RunStore::lease_duration));
/// a store that wraps another should pass both on to it, as it passes on the lease's length
/// ([`StoreWrapper`] does).
///
/// Your own store implements it with `async fn`, as [`Tool`](crate::tool::Tool) and
/// [`CompletionModel`](crate::completion::CompletionModel) are implemented; a run takes it
/// like any other ([`PromptRequest::durable`](crate::agent::PromptRequest::durable),
/// [`Agent::resume_stored`](crate::agent::Agent::resume_stored)), and [`BoxedStore`] holds it
/// when the store is chosen at run time. A store that wraps another and changes only some
/// of what it does (counts writes, injects faults) implements [`StoreWrapper`] instead, which
/// makes it a `RunStore` that passes every call it leaves out on to the inner store.
pub trait RunStore: Send + Sync + 'static {
    /// Stores a new run and leases it to a new claim by the worker named `owner`.
    fn create(
        &self,
        state: &RunState,
        owner: &str,
    ) -> impl Future<Output = Result<Lease, StoreError>> + Send;

    /// Stores a new run forked from another ([`fork`]): `state`, with `journal` as its whole
    /// journal, at version 1 (its first checkpoint), its lease held by nobody. Fails with
    /// [`StoreError::AlreadyExists`] when a run has that id.
    ///
    /// The built-in stores write it in one transaction, so a failed fork leaves nothing. The
    /// default, for a store of your own, [`create`](Self::create)s the run and then
    /// [`checkpoint`](Self::checkpoint)s it with the journal, releasing the lease: two writes,
    /// and should the second fail, the new run stays leased to the worker `fork` (until its
    /// lease runs out) without its journal.
    fn create_forked(
        &self,
        state: &RunState,
        journal: &[JournalEntry],
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        async move {
            let lease = self.create(state, "fork").await?;
            self.checkpoint(&lease, state, journal, true).await?;
            Ok(())
        }
    }

    /// Leases a stored run to a new claim (a fresh [`Lease::token`]) by the worker named
    /// `owner`, and returns it with the decisions recorded for it. Fails with
    /// [`StoreError::Busy`] while any other claim's lease is live, also one by a worker with
    /// the same name, and with [`StoreError::Finished`] for a run that completed or failed;
    /// a refused claim writes nothing. `PostgresStore` waits for the run's row a bounded time
    /// while another session of the database holds it locked, then fails with
    /// [`StoreError::Locked`] (so does [`decide`](Self::decide)).
    fn claim(
        &self,
        run_id: &str,
        owner: &str,
    ) -> impl Future<Output = Result<ClaimedRun, StoreError>> + Send;

    /// Claims a run as [`claim`](Self::claim) does, and also while its lease is live if the
    /// claim holding it is by the worker named `holder`: for a worker known to be dead (its
    /// process is gone), whose lease would keep the run busy until it expires. The holder is
    /// checked and replaced in one transaction, so a takeover never takes the run from a
    /// claim that replaced the dead one: naming a worker that no longer holds the run is
    /// refused with [`StoreError::Busy`] (naming the one that does). The old lease ends as
    /// after an expiry and a claim: its worker's writes fail with [`StoreError::Conflict`].
    ///
    /// Names are labels, not identities: take over only from a name that tells you its
    /// worker is dead (a process id on this machine that no longer runs), and keep names
    /// unique among workers alive at once. A finished run is refused as by `claim`.
    ///
    /// The built-in stores take over; the default, for a store of your own, claims as
    /// [`claim`](Self::claim) does, refusing a live lease with [`StoreError::Busy`].
    fn claim_from(
        &self,
        run_id: &str,
        owner: &str,
        holder: &str,
    ) -> impl Future<Output = Result<ClaimedRun, StoreError>> + Send {
        let _ = holder;
        self.claim(run_id, owner)
    }

    /// Writes the run's state and `journal` in one transaction, if `lease` is still current
    /// (the run's version and the claim's token both match, else [`StoreError::Conflict`]);
    /// returns the renewed lease. With `release`, the lease ends (the run finished or paused).
    /// The state is also kept as the checkpoint of the new version
    /// ([`checkpoints`](Self::checkpoints)), as [`create`](Self::create) keeps version 1.
    fn checkpoint(
        &self,
        lease: &Lease,
        state: &RunState,
        journal: &[JournalEntry],
        release: bool,
    ) -> impl Future<Output = Result<Lease, StoreError>> + Send;

    /// The stored state of a run, without leasing it.
    fn load(&self, run_id: &str) -> impl Future<Output = Result<RunState, StoreError>> + Send;

    /// The journal of a run, oldest first (empty for a run the store does not have).
    fn journal(
        &self,
        run_id: &str,
    ) -> impl Future<Output = Result<Vec<JournalEntry>, StoreError>> + Send;

    /// Records a decision about a waiting call, for the worker that resumes the run, and
    /// appends it to the run's audit trail. A call is decided once: a later decision about a
    /// call decided already (bound to it as it stands) is refused with
    /// [`StoreError::AlreadyDecided`], saying how and by whom it was decided, and nothing is
    /// recorded, so nobody silently overrules another (two processes deciding at once: one
    /// is recorded, the other refused). The very same decision sent again is answered with
    /// the one recorded, writing nothing. A decision that names the standing one as the one
    /// it replaces ([`Decision::replacing`]: a person changing their mind before the run
    /// resumes) replaces it. Refused with [`StoreError::NoSuchPendingCall`] when the call does not wait for a
    /// decision, and with [`StoreError::StaleDecision`] when the decision's binding is not the
    /// call's as it stands (its arguments changed since it was listed), and with
    /// [`StoreError::Busy`] while a worker holds the run's lease: a worker that took the run
    /// has read its decisions already, and would go on under the ones it read. For the same
    /// reason a lease that has run out without being given back ends with the decision: that
    /// worker's later writes are refused with [`StoreError::Conflict`], and the next claim
    /// applies the decision.
    fn decide(
        &self,
        run_id: &str,
        decision: &Decision,
    ) -> impl Future<Output = Result<RecordedDecision, StoreError>> + Send;

    /// Appends to the run's audit trail ([`decisions`](Self::decisions)) a decision made
    /// while `lease` holds the run, by the decider the run asked itself (a person at the
    /// worker's terminal, a webhook), stamped with the time and marked
    /// [`RecordedDecision::during_run`]. Nothing else changes: the run applied the decision
    /// already, and no claim applies it again. Refused with [`StoreError::Conflict`] unless
    /// `lease` is current (the run's version and the claim's token both match), so only
    /// the worker that holds the run writes to its trail this way.
    ///
    /// The built-in stores keep it; the default refuses with [`StoreError::Backend`], for a
    /// store that keeps no such log.
    fn log_decision(
        &self,
        lease: &Lease,
        decision: &Decision,
    ) -> impl Future<Output = Result<RecordedDecision, StoreError>> + Send {
        let _ = decision;
        let run_id = lease.run_id.clone();
        async move {
            Err(StoreError::Backend(format!(
                "this store keeps no log of decisions made while a run goes on (run `{run_id}`)"
            )))
        }
    }

    /// Every decision recorded about a run, oldest first: the audit trail (who decided what,
    /// when, why, and about which arguments), replaced decisions included, those made while
    /// the run went on ([`log_decision`](Self::log_decision)) among them.
    fn decisions(
        &self,
        run_id: &str,
    ) -> impl Future<Output = Result<Vec<RecordedDecision>, StoreError>> + Send;

    /// Every checkpoint of a run that the store keeps, oldest first: one per write of its
    /// state ([`create`](Self::create) and every [`checkpoint`](Self::checkpoint)).
    fn checkpoints(
        &self,
        run_id: &str,
    ) -> impl Future<Output = Result<Vec<Checkpoint>, StoreError>> + Send;

    /// The state of a run as the checkpoint `version` wrote it
    /// ([`StoreError::NoSuchCheckpoint`] when there is none).
    fn load_checkpoint(
        &self,
        run_id: &str,
        version: i64,
    ) -> impl Future<Output = Result<RunState, StoreError>> + Send;

    /// The checkpoint `version` of a run, the state it wrote and the run's journal up to it
    /// (its first [`Checkpoint::journal_len`] entries), as they were at one moment: what
    /// [`fork`] starts from. [`StoreError::NotFound`] for a run the store does not have,
    /// [`StoreError::NoSuchCheckpoint`] for a checkpoint it does not keep.
    ///
    /// A run written meanwhile (going on in another process, or deleted) is read as it was
    /// before the write or after it, never as a checkpoint with a journal shorter than it
    /// counts, or another run's. The built-in stores read one snapshot. The default, for a
    /// store of your own, calls [`checkpoints`](Self::checkpoints),
    /// [`load_checkpoint`](Self::load_checkpoint), [`journal`](Self::journal) and
    /// `checkpoints` again, and reads again (three times at most, then
    /// [`StoreError::Backend`]) unless the checkpoint was listed the same both times and the
    /// journal is long enough ([`StoreError::Corrupt`] if it stays short). It cannot see a run
    /// deleted and written again identically between its calls: override it with one read of
    /// a snapshot if your store has them.
    fn checkpoint_with_journal(
        &self,
        run_id: &str,
        version: i64,
    ) -> impl Future<Output = Result<CheckpointWithJournal, StoreError>> + Send {
        fork::checkpoint_with_journal_by_parts(self, run_id, version)
    }

    /// Every stored run. A run whose stored status this release does not know fails the
    /// listing with [`StoreError::Corrupt`] naming it, as the listing has no place for it
    /// ([`list_runs`](Self::list_runs) reports it among the unreadable runs).
    fn list(&self) -> impl Future<Output = Result<Vec<RunSummary>, StoreError>> + Send;

    /// One page of the stored runs that `query` selects (by status), in the byte order of
    /// their ids, and where the next page starts. A selected run whose record is in a format
    /// this release cannot read, or whose stored status it does not know, is reported in
    /// [`RunPage::unreadable`], not left out.
    fn list_runs(
        &self,
        query: &RunQuery,
    ) -> impl Future<Output = Result<RunPage, StoreError>> + Send;

    /// The `limit` runs written last (by [`RunSummary::updated_at_ms`]), of every status or
    /// only of `status`, the most recently written first; of runs written in the same
    /// millisecond, the last in the byte order of their ids first. A selected run whose
    /// record this release cannot read is in [`RecentRuns::unreadable`], counted towards
    /// `limit` at its place. For a screen of what happened lately, without reading every run.
    ///
    /// The built-in stores answer with one query over an index (SQLite, PostgreSQL) or one
    /// pass over their runs (memory). The default, for a store of your own, lists every
    /// selected run ([`list_runs`](Self::list_runs)) and sorts them: it reads every summary,
    /// so a store holding many runs should override it. A listing does not say when an
    /// unreadable run was written, so the default counts those as older than the others.
    ///
    /// ```
    /// use reins::agent::{AgentBuilder, RunStatus};
    /// use reins::store::{MemoryStore, RunStore};
    /// use reins::testing::{ScriptedModel, Turn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = MemoryStore::new();
    /// // Ids in byte order, so runs written in the same millisecond list the same way.
    /// for run_id in ["first", "second", "third"] {
    ///     let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("Done.")])).build();
    ///     agent.prompt("Go.").run_id(run_id).durable(store.clone()).await?;
    /// }
    /// let recent = store.recent_runs(None, 2).await?;
    /// let ids: Vec<&str> = recent.runs.iter().map(|run| run.run_id.as_str()).collect();
    /// assert_eq!(ids, ["third", "second"]);
    /// let waiting = store.recent_runs(Some(RunStatus::Suspended), 10).await?;
    /// assert!(waiting.runs.is_empty());
    /// # Ok(()) }
    /// ```
    fn recent_runs(
        &self,
        status: Option<RunStatus>,
        limit: usize,
    ) -> impl Future<Output = Result<RecentRuns, StoreError>> + Send {
        recent::by_listing(self, status, limit)
    }

    /// Deletes a finished run with its journal, checkpoints and decisions. Refused with
    /// [`StoreError::NotFinished`] for a run that is running or suspended, with
    /// [`StoreError::UnsupportedFormat`] for a record this release cannot read (e.g. written
    /// by a newer release), with [`StoreError::Corrupt`] for one whose stored status it does
    /// not know — nothing is deleted — and with [`StoreError::NotFound`] for an unknown run.
    fn delete(&self, run_id: &str) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Deletes every finished run (completed or failed) last written at least `older_than`
    /// ago, as [`delete`](Self::delete) does, and returns how many it deleted. Runs that have
    /// not finished, and records this release cannot read, are kept, however old.
    fn expire(&self, older_than: Duration) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Starts watching for decisions: the watch is told of every decision recorded from now
    /// on, by this process or another one, so a worker awaits it instead of polling (see
    /// [`DecisionWatch`]). [`MemoryStore`] signals the decisions of its clones;
    /// `SqliteStore` those of every handle on the same file in this process at once, and those
    /// of other processes within `SqliteStore::CROSS_PROCESS_CHECK`; `PostgresStore` every
    /// decision, through `LISTEN`/`NOTIFY`.
    fn watch_decisions(&self) -> impl Future<Output = Result<DecisionWatch, StoreError>> + Send;

    /// Every suspended call of every suspended run that has no decision yet, and every
    /// suspended run whose record cannot be read, or run whose stored status is unknown
    /// (reported by id, never skipped). Fails as a whole only when the store itself fails
    /// ([`StoreError::Backend`]).
    fn pending_approvals(
        &self,
    ) -> impl Future<Output = Result<PendingApprovals, StoreError>> + Send;

    /// How long a claim lasts without a checkpoint or a [`renew`](Self::renew):
    /// [`DEFAULT_LEASE`] unless the store says otherwise. A run renews its lease at a third
    /// of it while a step takes long (a slow tool, a person answering an approval).
    fn lease_duration(&self) -> Duration {
        DEFAULT_LEASE
    }

    /// Extends `lease` by [`lease_duration`](Self::lease_duration) from now, if it is still
    /// current (else [`StoreError::Conflict`]), and returns it. The built-in stores only move
    /// the lease's end; this default writes the stored state again as a checkpoint, which
    /// does the same for any store (and adds a version).
    fn renew(&self, lease: &Lease) -> impl Future<Output = Result<Lease, StoreError>> + Send {
        async move {
            let stored = self.load(&lease.run_id).await?;
            self.checkpoint(lease, &stored, &[], false).await
        }
    }
}
