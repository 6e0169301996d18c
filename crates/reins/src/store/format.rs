//! The stored record format: which version this release writes, how records of older
//! versions are upgraded when they are read, and which records are refused.
//!
//! Every store keeps a run's state as a JSON document next to the number of the format it was
//! written in. Reading one goes through [`decode_state`]:
//!
//! - a record in [`FORMAT_VERSION`] is read as it is;
//! - a record in an older format is upgraded in memory, one version at a time, by the
//!   [`MIGRATIONS`] chain, and then read; the stored record is rewritten (in the current
//!   format) only by the run's next checkpoint;
//! - a record in a newer format (written by a newer release) or an older one no migration
//!   reaches is refused with [`StoreError::UnsupportedFormat`]; the stores leave such a record
//!   untouched ([`check_readable`]).
//!
//! To introduce format 2: raise [`FORMAT_VERSION`] to 2, write `fn v1_to_v2(Value) ->
//! Result<Value, String>` that turns a format-1 document into a format-2 one, and add
//! `Migration { from: 1, upgrade: v1_to_v2 }` to [`MIGRATIONS`].

use super::StoreError;
use crate::json_depth::{READABLE_DEPTH, text_depth};
use crate::run::{RunState, RunStatus};
use serde_json::Value;

/// The tables the SQL stores keep a run in, in the order deleting a run empties them (the
/// rows that refer to a run before the run's own), so both stores delete the same tables.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(super) const RUN_TABLES: [&str; 5] = [
    "reins_journal",
    "reins_decisions",
    "reins_decision_log",
    "reins_checkpoints",
    "reins_runs",
];

/// The version of the stored record format written by this release.
pub const FORMAT_VERSION: u32 = crate::run::RUN_STATE_VERSION;

/// One step of the upgrade path: turns a document of format `from` into one of format
/// `from + 1`, or says why it cannot.
#[derive(Clone, Copy)]
pub(crate) struct Migration {
    /// The format the step reads.
    pub(crate) from: u32,
    /// The step. Its error message names what is wrong with the document.
    pub(crate) upgrade: fn(Value) -> Result<Value, String>,
}

/// The upgrade path from every older format this release still reads, one step per version.
/// Empty while format 1 is the only one there has been.
const MIGRATIONS: &[Migration] = &[];

/// Reads a stored record of `run_id` written in `format`: upgrades it to [`FORMAT_VERSION`]
/// if it is older, refuses it if no release this one knows wrote it.
pub(crate) fn decode_state(run_id: &str, format: i64, json: &str) -> Result<RunState, StoreError> {
    decode_with(MIGRATIONS, FORMAT_VERSION, run_id, format, json)
}

/// Whether this release can read (and so may change or delete) a record written in `format`:
/// [`StoreError::UnsupportedFormat`] for one written by a newer release, or by an older one no
/// migration reaches. Looks at the format only, not at the document.
pub(crate) fn check_readable(run_id: &str, format: i64) -> Result<(), StoreError> {
    check_with(MIGRATIONS, FORMAT_VERSION, run_id, format)
}

/// The oldest format this release reads: stores compare the format column with it and with
/// [`FORMAT_VERSION`] to leave the records they cannot read alone.
pub(crate) fn oldest_readable() -> u32 {
    oldest_with(MIGRATIONS, FORMAT_VERSION)
}

/// The oldest format from which `migrations` lead without a gap up to `current`.
fn oldest_with(migrations: &[Migration], current: u32) -> u32 {
    let mut oldest = current;
    while let Some(previous) = oldest.checked_sub(1) {
        if !migrations.iter().any(|step| step.from == previous) {
            break;
        }
        oldest = previous;
    }
    oldest
}

fn check_with(
    migrations: &[Migration],
    current: u32,
    run_id: &str,
    format: i64,
) -> Result<(), StoreError> {
    let oldest = i64::from(oldest_with(migrations, current));
    if (oldest..=i64::from(current)).contains(&format) {
        Ok(())
    } else {
        Err(StoreError::UnsupportedFormat {
            run_id: run_id.to_owned(),
            found: format,
            supported: current,
        })
    }
}

/// [`decode_state`] with the upgrade path and the current format given, so the chain itself
/// can be tested with made-up versions.
fn decode_with(
    migrations: &[Migration],
    current: u32,
    run_id: &str,
    format: i64,
    json: &str,
) -> Result<RunState, StoreError> {
    // Checked before the document is parsed: a newer release's record is refused for what it
    // is, even if this release could not parse it at all.
    check_with(migrations, current, run_id, format)?;
    let corrupt = |message: String| StoreError::Corrupt {
        run_id: run_id.to_owned(),
        message,
    };
    if format == i64::from(current) {
        let state = serde_json::from_str(json).map_err(|error| corrupt(error.to_string()))?;
        return of_run(run_id, state);
    }
    let mut document: Value =
        serde_json::from_str(json).map_err(|error| corrupt(error.to_string()))?;
    // `check_with` bounded the format to `oldest..current`, so it fits.
    let mut version = u32::try_from(format).map_err(|error| corrupt(error.to_string()))?;
    while version < current {
        let step = migrations
            .iter()
            .find(|step| step.from == version)
            .ok_or_else(|| corrupt(format!("no upgrade from format {version}")))?;
        document = (step.upgrade)(document).map_err(|message| {
            corrupt(format!(
                "upgrading from format {version} to {}: {message}",
                version + 1
            ))
        })?;
        version += 1;
        // The document carries its own format number (`RunState::version`): it must agree
        // with the format it now is, whatever the step did with it.
        if let Value::Object(fields) = &mut document {
            fields.insert("version".to_owned(), Value::from(version));
        }
    }
    let state = serde_json::from_value(document).map_err(|error| {
        corrupt(format!(
            "after upgrading from format {format} to {current}: {error}"
        ))
    })?;
    of_run(run_id, state)
}

/// `state`, read from the record of `run_id`, if it is that run's. A state of another run (a
/// record copied or edited behind the store's back) is [`StoreError::Corrupt`]: read as
/// `run_id`'s, it would be resumed, shown and decided on under the other run's id — a decision
/// made for the calls listed under `run_id` recorded for the other run.
fn of_run(run_id: &str, state: RunState) -> Result<RunState, StoreError> {
    if state.run_id == run_id {
        return Ok(state);
    }
    Err(StoreError::Corrupt {
        run_id: run_id.to_owned(),
        message: format!(
            "its state is of another run, `{}` (copied or edited outside reins)",
            state.run_id
        ),
    })
}

/// `state` as the JSON document every store keeps, refused ([`StoreError::TooDeep`]) if it
/// nests deeper than [`decode_state`] reads: a record is written only if it can be read back.
pub(crate) fn encode_state(state: &RunState) -> Result<String, StoreError> {
    let encoded =
        serde_json::to_string(state).map_err(|error| StoreError::Backend(error.to_string()))?;
    let depth = text_depth(encoded.as_bytes());
    if depth > READABLE_DEPTH {
        return Err(StoreError::TooDeep {
            run_id: state.run_id.clone(),
            depth,
            readable: READABLE_DEPTH,
        });
    }
    Ok(encoded)
}

/// How every store writes a run's status.
pub(crate) fn status_name(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Running => "running",
        RunStatus::Suspended => "suspended",
        RunStatus::Completed => "completed",
        RunStatus::Failed => "failed",
    }
}

/// A status as [`status_name`] wrote it. Any other name (another release's, or one written
/// behind the store's back) makes the run's record unreadable, [`StoreError::Corrupt`]: read
/// as some status it would be listed, resumed or deleted as what it may not be.
pub(crate) fn status_from_name(run_id: &str, name: &str) -> Result<RunStatus, StoreError> {
    match name {
        "running" => Ok(RunStatus::Running),
        "suspended" => Ok(RunStatus::Suspended),
        "completed" => Ok(RunStatus::Completed),
        "failed" => Ok(RunStatus::Failed),
        _ => Err(StoreError::Corrupt {
            run_id: run_id.to_owned(),
            message: format!("its stored status `{name}` is not one this release knows"),
        }),
    }
}

/// The stored status names other than `suspended`: the SQL stores list as waiting for
/// approval every run whose status is none of these, so a run with an unknown status is
/// reported as unreadable instead of being left out.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) const NOT_WAITING_SQL: &str = "('running', 'completed', 'failed')";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::RunStatus;
    use serde_json::json;

    /// A format-1 document as this release writes it.
    fn current_document() -> Value {
        json!({
            "version": 1, "run_id": "r1", "agent_name": null, "turn": 2,
            "history": [], "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
            "entries": [], "last_model": null, "invalid_tool_call_retries": 0,
            "status": "suspended"
        })
    }

    /// A made-up format 0: the turn counter was called `turns`.
    fn v0_to_v1(mut document: Value) -> Result<Value, String> {
        let fields = document.as_object_mut().ok_or("not an object")?;
        let turns = fields.remove("turns").ok_or("no `turns`")?;
        fields.insert("turn".to_owned(), turns);
        Ok(document)
    }

    /// A step that keeps the document as it is.
    fn step_up(document: Value) -> Result<Value, String> {
        Ok(document)
    }

    fn format_0_document() -> String {
        let mut document = current_document();
        if let Some(fields) = document.as_object_mut() {
            let turn = fields.remove("turn").unwrap_or(Value::Null);
            fields.insert("turns".to_owned(), turn);
            fields.insert("version".to_owned(), json!(0));
        }
        document.to_string()
    }

    const V0_TO_V1: &[Migration] = &[Migration {
        from: 0,
        upgrade: v0_to_v1,
    }];

    #[test]
    fn the_current_format_is_read_as_it_is() {
        let state = decode_state("r1", 1, &current_document().to_string()).unwrap();
        assert_eq!(state.turn, 2);
        assert_eq!(state.status, RunStatus::Suspended);
        assert_eq!(state.version, FORMAT_VERSION);
    }

    #[test]
    fn an_older_format_is_upgraded_on_read() {
        let state = decode_with(V0_TO_V1, 1, "r1", 0, &format_0_document()).unwrap();
        assert_eq!(state.turn, 2, "the step renamed `turns`");
        assert_eq!(state.version, 1, "the document's own version follows");
        assert_eq!(state.run_id, "r1");
    }

    #[test]
    fn steps_are_applied_in_order_up_to_the_current_format() {
        let chain = [
            Migration {
                from: 6,
                upgrade: step_up,
            },
            Migration {
                from: 5,
                upgrade: v0_to_v1,
            },
        ];
        // 5 -> 6 renames `turns`; 6 -> 7 keeps the document: only that order reads.
        let state = decode_with(&chain, 7, "r1", 5, &format_0_document()).unwrap();
        assert_eq!((state.turn, state.version), (2, 7));
        assert_eq!(oldest_with(&chain, 7), 5);
        assert!(check_with(&chain, 7, "r1", 4).is_err());
    }

    #[test]
    fn a_failing_step_reports_the_run_as_corrupt() {
        let document = current_document().to_string(); // no `turns`: the step fails
        let error = decode_with(V0_TO_V1, 1, "r1", 0, &document).unwrap_err();
        let StoreError::Corrupt { run_id, message } = error else {
            panic!("expected Corrupt, got {error:?}");
        };
        assert_eq!(run_id, "r1");
        assert!(message.contains("from format 0 to 1"), "{message}");
        assert!(message.contains("no `turns`"), "{message}");
    }

    #[test]
    fn a_newer_format_is_refused_unread() {
        for migrations in [&[][..], V0_TO_V1] {
            let error = decode_with(migrations, 1, "r1", 2, "not even JSON").unwrap_err();
            assert_eq!(
                error,
                StoreError::UnsupportedFormat {
                    run_id: "r1".to_owned(),
                    found: 2,
                    supported: 1,
                }
            );
            assert!(error.to_string().contains("newer release"), "{error}");
        }
    }

    #[test]
    fn an_older_format_without_an_upgrade_is_refused() {
        let error = decode_state("r1", 0, &format_0_document()).unwrap_err();
        assert!(
            matches!(error, StoreError::UnsupportedFormat { found: 0, .. }),
            "{error:?}"
        );
        assert!(check_readable("r1", i64::from(FORMAT_VERSION)).is_ok());
        assert!(check_readable("r1", i64::from(FORMAT_VERSION) + 1).is_err());
        assert_eq!(oldest_readable(), FORMAT_VERSION - MIGRATIONS.len() as u32);
    }

    #[test]
    fn every_status_name_reads_back_and_an_unknown_one_is_corrupt() {
        for status in [
            RunStatus::Running,
            RunStatus::Suspended,
            RunStatus::Completed,
            RunStatus::Failed,
        ] {
            assert_eq!(status_from_name("r1", status_name(status)), Ok(status));
        }
        let error = status_from_name("r1", "paused").unwrap_err();
        assert!(
            matches!(&error, StoreError::Corrupt { run_id, message } if run_id == "r1" && message.contains("`paused`")),
            "{error:?}"
        );
    }

    #[test]
    fn a_state_of_another_run_is_corrupt() {
        let error = decode_state("r2", 1, &current_document().to_string()).unwrap_err();
        assert!(
            matches!(&error, StoreError::Corrupt { run_id, message } if run_id == "r2" && message.contains("`r1`")),
            "{error:?}"
        );
        // Upgraded from an older format too.
        let error = decode_with(V0_TO_V1, 1, "r2", 0, &format_0_document()).unwrap_err();
        assert!(matches!(&error, StoreError::Corrupt { run_id, .. } if run_id == "r2"));
    }

    #[test]
    fn a_corrupt_current_record_is_reported() {
        let error = decode_state("r1", 1, "{not json").unwrap_err();
        assert!(matches!(error, StoreError::Corrupt { run_id, .. } if run_id == "r1"));
    }
}
