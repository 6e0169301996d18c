//! The generation of the SQL stores' tables: the number a SQLite or PostgreSQL database
//! records (in its one-row `reins_schema` table) so that a release finds out, before using the
//! tables, whether it can.

#[cfg(any(feature = "sqlite", feature = "postgres"))]
use super::StoreError;

/// The generation of the SQL stores' tables (SQLite's and PostgreSQL's) this release
/// understands. A database records the *oldest* generation that can still use its tables
/// correctly: a release that changes them in a way older ones can live with (a column or an
/// index added) leaves the number as it is, and raises it only for a change they cannot (a
/// column renamed, a meaning changed). Opening a database that records a higher generation
/// than this fails with [`StoreError::UnsupportedSchema`](super::StoreError::UnsupportedSchema)
/// and changes nothing in it.
///
/// A database set up by this release records this generation; one set up by a release before
/// generations were recorded is upgraded as before and then records it too.
pub const SCHEMA_GENERATION: u32 = 1;

/// The layout of the tables this release sets up: raised by every release that changes them,
/// a column or an index added included (which leaves [`SCHEMA_GENERATION`] as it is). A
/// database whose tables record an earlier layout is set up again (what it lacks added); one
/// recording this layout gets no set-up unless a table or an index of it is missing from the
/// catalog ([`TABLES_AND_INDEXES`]), and one recording a later, compatible layout none at all. Kept apart from the
/// generation so that a release adding something finds the databases that lack it, while the
/// releases before it go on using them untouched.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) const TABLES_LAYOUT: u32 = 1;

/// Every table and index the SQL stores set up, by name (the same in SQLite and PostgreSQL).
/// Opening a database whose tables record this layout checks, in the catalog only, that each
/// is there, and sets the tables up again when one is not (dropped by hand, say): the record
/// alone would otherwise keep it missing for good, every call touching it failing.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) const TABLES_AND_INDEXES: [&str; 9] = [
    "reins_runs",
    "reins_runs_status",
    "reins_runs_written",
    "reins_runs_status_written",
    "reins_journal",
    "reins_decisions",
    "reins_decision_log",
    "reins_schema",
    "reins_checkpoints",
];

/// What a database's `reins_schema` row records.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Recorded {
    /// The oldest generation of reins that can use the tables.
    pub oldest_generation: i64,
    /// The layout of the tables ([`TABLES_LAYOUT`] of the release that last set them up).
    pub layout: i64,
}

/// What opening a database does about its tables, given what it records.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SetUp {
    /// Set them up: nothing recorded (no tables, or a release's from before generations), or
    /// an earlier layout.
    Needed,
    /// This release's layout: set them up again only if a table or an index of it is missing
    /// ([`TABLES_AND_INDEXES`], looked up in the catalog), none made otherwise.
    IfIncomplete,
    /// A later, compatible layout: used as it is. What it holds is the later release's to
    /// say (it may have dropped an index this one made), and this release's layout must not
    /// be recorded over it.
    Never,
}

/// What opening a database whose `reins_schema` records `recorded` (`None`: nothing recorded,
/// the tables missing or made by a release before generations) does about its tables; refused
/// when they need a newer release. `database` names it for the refusal, without credentials.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn set_up_for(recorded: Option<Recorded>, database: &str) -> Result<SetUp, StoreError> {
    match recorded {
        Some(Recorded {
            oldest_generation, ..
        }) if oldest_generation > i64::from(SCHEMA_GENERATION) => {
            Err(StoreError::UnsupportedSchema {
                database: database.to_owned(),
                found: oldest_generation,
                supported: SCHEMA_GENERATION,
            })
        }
        Some(Recorded { layout, .. }) => Ok(match layout.cmp(&i64::from(TABLES_LAYOUT)) {
            std::cmp::Ordering::Less => SetUp::Needed,
            std::cmp::Ordering::Equal => SetUp::IfIncomplete,
            std::cmp::Ordering::Greater => SetUp::Never,
        }),
        None => Ok(SetUp::Needed),
    }
}

/// Records this release's generation and layout once the tables are set up (inside the
/// set-up's transaction): the row is the table's only one. The same statement in SQLite and
/// PostgreSQL, `$1` the generation and `$2` the layout.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) const RECORD: &str = "INSERT INTO reins_schema (id, oldest_generation, layout)
    VALUES (1, $1, $2)
    ON CONFLICT (id) DO UPDATE
    SET oldest_generation = excluded.oldest_generation, layout = excluded.layout";

/// Reads the generation and layout recorded, once the table is known to exist.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) const READ: &str = "SELECT oldest_generation, layout FROM reins_schema WHERE id = 1";

#[cfg(all(test, any(feature = "sqlite", feature = "postgres")))]
mod tests {
    use super::*;

    #[test]
    fn a_newer_generation_is_refused_naming_both_and_no_credentials() {
        let newer = i64::from(SCHEMA_GENERATION) + 1;
        let recorded = Recorded {
            oldest_generation: newer,
            layout: i64::from(TABLES_LAYOUT) + 1,
        };
        let error =
            set_up_for(Some(recorded), "PostgreSQL database `runs` at db:5432").unwrap_err();
        let message = error.to_string();
        assert!(message.contains("newer reins"), "{message}");
        assert!(message.contains(&format!("schema {newer}")), "{message}");
        assert!(
            message.contains(&format!("up to {SCHEMA_GENERATION}")),
            "{message}"
        );
        assert!(message.contains("db:5432"), "{message}");
    }

    #[test]
    fn a_missing_or_earlier_layout_is_set_up_and_this_one_checked() {
        let generation = i64::from(SCHEMA_GENERATION);
        let layout = i64::from(TABLES_LAYOUT);
        let recorded = |layout| {
            Some(Recorded {
                oldest_generation: generation,
                layout,
            })
        };
        assert_eq!(set_up_for(None, "x").unwrap(), SetUp::Needed);
        assert_eq!(
            set_up_for(recorded(layout - 1), "x").unwrap(),
            SetUp::Needed
        );
        assert_eq!(
            set_up_for(recorded(layout), "x").unwrap(),
            SetUp::IfIncomplete
        );
        // A later release that only added to the tables: used as they are.
        assert_eq!(set_up_for(recorded(layout + 1), "x").unwrap(), SetUp::Never);
    }
}
