//! [`StoreError`]: why a store operation failed, with the messages people read.

use super::format;
use super::status_name;
#[cfg(doc)]
use super::{PendingApproval, RunStore};
use crate::run::RunStatus;
use std::time::Duration;

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No run with that id is stored.
    #[error("no run `{0}` is stored")]
    NotFound(String),
    /// A run with that id already exists.
    #[error("a run `{0}` already exists")]
    AlreadyExists(String),
    /// Another claim holds the run's lease (whatever its worker is called).
    #[error("run `{run_id}` is being worked on by `{owner}`; its lease expires in {}", remaining_shown(*remaining))]
    Busy {
        /// The run.
        run_id: String,
        /// The name of the worker holding it (a label: another worker may have the same).
        owner: String,
        /// How long until its lease expires.
        remaining: Duration,
    },
    /// The run has already finished (completed or failed) and cannot be claimed; nothing was
    /// written.
    #[error("run `{run_id}` has already finished ({})", status_name(*status))]
    Finished {
        /// The run.
        run_id: String,
        /// How it finished: [`RunStatus::Completed`] or [`RunStatus::Failed`].
        status: RunStatus,
    },
    /// The run has not finished (it runs or waits for a decision), so it cannot be deleted;
    /// nothing was deleted.
    #[error("run `{run_id}` has not finished ({}): only a finished run can be deleted", status_name(*status))]
    NotFinished {
        /// The run.
        run_id: String,
        /// Where it is: [`RunStatus::Running`] or [`RunStatus::Suspended`].
        status: RunStatus,
    },
    /// The run changed since this worker's last checkpoint: another worker took it over.
    #[error("run `{run_id}` was changed by another worker (expected version {expected})")]
    Conflict {
        /// The run.
        run_id: String,
        /// The version this worker expected.
        expected: i64,
    },
    /// This worker's lease on the run ran out before the store confirmed a renewal (every
    /// renewal failed, or none was answered: a store out of reach), so another worker may
    /// claim the run now. The run stopped where it was, as if its process had died, without
    /// writing anything: it resumes from its last checkpoint, a call it had started in doubt.
    #[error(
        "run `{run_id}` stopped: its lease ran out before the run store confirmed a renewal, \
         so another worker may hold it now; resume it from its last checkpoint"
    )]
    LeaseLapsed {
        /// The run.
        run_id: String,
    },
    /// The record was written in a format this release cannot read: by a newer release
    /// (`found` above `supported`), or by one so old that no upgrade reaches it. It was left
    /// untouched: not read, changed, deleted or expired.
    #[error("run `{run_id}` is stored in format {found}, {}", unsupported_why(*found, *supported))]
    UnsupportedFormat {
        /// The run.
        run_id: String,
        /// The record's format version.
        found: i64,
        /// The format this release reads.
        supported: u32,
    },
    /// The record cannot be read; it was left untouched.
    #[error("run `{run_id}` is corrupt: {message}")]
    Corrupt {
        /// The run.
        run_id: String,
        /// What is wrong with it.
        message: String,
    },
    /// The decision is bound to the call as it was, not as it is now: its tool or its
    /// arguments changed since. It was not recorded (or, on resume, not applied); the call
    /// still waits for a decision about what it is now.
    /// The call's current binding is in the pending listing ([`PendingApproval::binding`]).
    #[error(
        "the decision about call `{internal_call_id}` of run `{run_id}` was made for another \
         tool or other arguments than the call has now"
    )]
    StaleDecision {
        /// The run.
        run_id: String,
        /// The call.
        internal_call_id: String,
    },
    /// The call was decided already, by another person or process, and the run has not
    /// resumed since: a decision stands until then, and a different one is refused unless
    /// it names the standing one as the one it replaces
    /// ([`Decision::replacing`](super::Decision::replacing)). Nothing was recorded. (Boxed:
    /// it keeps every `Result` with a `StoreError` small.)
    #[error(
        "call `{}` of run `{}` is already decided ({}, by {}): a decision stands until the \
         run resumes, unless a new one names it as the one it replaces (Decision::replacing)",
        .0.internal_call_id, .0.run_id, .0.decided, .0.decided_by
    )]
    AlreadyDecided(Box<StandingDecision>),
    /// Another session of the database held the run's row locked (a transaction left open,
    /// a statement stuck) for longer than the store waits for it
    /// (`PostgresStore::with_lock_timeout`): nothing was read or written; try again, or end
    /// the session that holds the lock.
    #[error(
        "run `{run_id}` stayed locked by another session of the database for {}, longer than \
         the run store waits: nothing was written; try again, or end the session holding the \
         lock (a transaction left open)", remaining_shown(*waited)
    )]
    Locked {
        /// The run.
        run_id: String,
        /// How long the store waited for the lock.
        waited: Duration,
    },
    /// A [`ToolDecision::Skip`](crate::agent::ToolDecision::Skip) or
    /// [`ToolDecision::SupplyResult`](crate::agent::ToolDecision::SupplyResult) about a call
    /// that waits for approval and never started: both answer a call *in doubt* (one that may
    /// have had its effect), and a call that never ran has no result to supply and nothing to
    /// skip again. Nothing was recorded; approve, edit or deny it instead.
    #[error(
        "call `{internal_call_id}` of run `{run_id}` waits for approval and never started, so \
         it had no effect: skip and supply_result answer only a call in doubt; approve, edit \
         or deny this one"
    )]
    NotInDoubt {
        /// The run.
        run_id: String,
        /// The call.
        internal_call_id: String,
    },
    /// The run has no checkpoint of that version (checkpoints are kept from the release that
    /// introduced them on).
    #[error("run `{run_id}` has no checkpoint of version {version}")]
    NoSuchCheckpoint {
        /// The run.
        run_id: String,
        /// The version asked for.
        version: i64,
    },
    /// The call has no pending decision to make (unknown id, or already answered).
    #[error(
        "run `{run_id}` has no suspended call `{internal_call_id}` (RunStore::pending_approvals \
         lists the calls that wait, each with its id and binding)"
    )]
    NoSuchPendingCall {
        /// The run.
        run_id: String,
        /// The call id given.
        internal_call_id: String,
    },
    /// The run's state nests more levels of objects and arrays than a stored record is read
    /// back with (something a hook, a tool's metadata or a decision put in it nests that
    /// deep): it is not written, and the run's last stored record stays as it was.
    #[error(
        "run `{run_id}` nests {depth} levels of objects and arrays, more than the {readable} \
         a stored run is read back with: not stored"
    )]
    TooDeep {
        /// The run.
        run_id: String,
        /// How deep its state nests.
        depth: usize,
        /// How deep a stored record may nest.
        readable: usize,
    },
    /// The database's tables were set up or upgraded by a newer release of reins, in a
    /// layout this release cannot use correctly (the database records a higher
    /// [`SCHEMA_GENERATION`](super::SCHEMA_GENERATION) than this release's). The SQLite and
    /// PostgreSQL stores refuse to open it and change nothing in it; a newer reins opens it.
    #[error(
        "{database} was set up by a newer reins (schema {found}); this reins understands \
         schemas up to {supported}: upgrade reins to use it (nothing in it was changed)"
    )]
    UnsupportedSchema {
        /// The database, as a person names it: the SQLite file's path, or the PostgreSQL
        /// database and its servers (never the connection string: it may hold a password).
        database: String,
        /// The schema generation the database records.
        found: i64,
        /// The newest generation this release understands.
        supported: u32,
    },
    /// The database failed.
    #[error("the run store failed: {0}")]
    Backend(String),
    /// The store's own code panicked (the panic's message). Caught where a run or a
    /// [`BoxedStore`](crate::store::BoxedStore) calls the store, so it fails the operation
    /// instead of unwinding into the caller; what the store wrote before it is the store's.
    #[error("the run store panicked: {0}")]
    Panicked(String),
}

/// The decision that stands about a call, as [`StoreError::AlreadyDecided`] names it to
/// whoever tried to decide the call again: how and by whom it was decided, and when (never
/// the arguments, a message or a result it carries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandingDecision {
    /// The run.
    pub run_id: String,
    /// The call.
    pub internal_call_id: String,
    /// How it was decided, in words: `approved`, `approved with edited arguments`, `denied`,
    /// `to be run again`, `skipped` or `answered with a supplied result`.
    pub decided: &'static str,
    /// Who decided ([`Decision::decided_by`](super::Decision::decided_by)).
    pub decided_by: String,
    /// When it was recorded, in milliseconds since the Unix epoch
    /// ([`RecordedDecision::decided_at_ms`](super::RecordedDecision::decided_at_ms)): what
    /// [`Decision::replaces`](super::Decision::replaces) names to replace it.
    pub decided_at_ms: i64,
}

/// How long until a lease expires, as a person reads it: `4 min 59 s`, `12 s`, `850 ms`
/// (a count of milliseconds like `299123 ms` is hard to read at a glance).
fn remaining_shown(remaining: Duration) -> String {
    let secs = remaining.as_secs();
    match secs {
        0 => format!("{} ms", remaining.as_millis()),
        1..60 => format!("{secs} s"),
        60..3600 => format!("{} min {} s", secs / 60, secs % 60),
        _ => format!("{} h {} min", secs / 3600, secs % 3600 / 60),
    }
}

/// Why a record's format cannot be read, for [`StoreError::UnsupportedFormat`]'s message.
fn unsupported_why(found: i64, supported: u32) -> String {
    if found > i64::from(supported) {
        format!(
            "written by a newer release: this release reads formats up to {supported}; \
             the record is left as it is for that release"
        )
    } else {
        format!(
            "which this release no longer upgrades (it reads formats {} to {supported})",
            format::oldest_readable()
        )
    }
}

/// A PostgreSQL error with the causes its own message leaves out: `tokio-postgres` says "db
/// error" or "error connecting to server" and keeps why (the server's error, a refused
/// connection, a certificate not trusted) in its source. The server's error is given with its
/// SQLSTATE code. None of these hold the connection string or its password. (Here, not in
/// `postgres/`: the decision listener, `pg_listen`, reports its errors so too.)
#[cfg(feature = "postgres")]
pub(crate) fn describe_postgres(error: &(dyn std::error::Error + 'static)) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        match cause.downcast_ref::<tokio_postgres::error::DbError>() {
            Some(db) => {
                message.push_str(&format!(
                    "{} {}: {}",
                    db.severity(),
                    db.code().code(),
                    db.message()
                ));
                for (label, text) in [("detail", db.detail()), ("hint", db.hint())] {
                    if let Some(text) = text {
                        message.push_str(&format!(" ({label}: {text})"));
                    }
                }
            }
            None => message.push_str(&cause.to_string()),
        }
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_runs_lease_says_how_long_it_lasts_in_units_people_read() {
        let busy = |millis| StoreError::Busy {
            run_id: "r".into(),
            owner: "reins run, pid 7 on h".into(),
            remaining: Duration::from_millis(millis),
        };
        for (millis, shown) in [
            (850, "850 ms"),
            (12_400, "12 s"),
            (299_123, "4 min 59 s"),
            (7_380_000, "2 h 3 min"),
        ] {
            assert!(
                busy(millis)
                    .to_string()
                    .ends_with(&format!("expires in {shown}")),
                "{millis}: {}",
                busy(millis)
            );
        }
    }
}
