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
/// recording this layout or a later, compatible one gets no set-up at all. Kept apart from the
/// generation so that a release adding something finds the databases that lack it, while the
/// releases before it go on using them untouched.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) const TABLES_LAYOUT: u32 = 1;

/// What a database's `reins_schema` row records.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Recorded {
    /// The oldest generation of reins that can use the tables.
    pub oldest_generation: i64,
    /// The layout of the tables ([`TABLES_LAYOUT`] of the release that last set them up).
    pub layout: i64,
}

/// Whether a database whose `reins_schema` records `recorded` (`None`: nothing recorded, the
/// tables missing or made by a release before generations) needs setting up: `false` when
/// its tables are this release's layout or a later one (nothing to create, add or lock);
/// refused when they need a newer release. `database` names it for the refusal, without
/// credentials.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn needs_set_up(recorded: Option<Recorded>, database: &str) -> Result<bool, StoreError> {
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
        Some(Recorded { layout, .. }) => Ok(layout < i64::from(TABLES_LAYOUT)),
        None => Ok(true),
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
            needs_set_up(Some(recorded), "PostgreSQL database `runs` at db:5432").unwrap_err();
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
    fn only_a_missing_or_earlier_layout_is_set_up() {
        let generation = i64::from(SCHEMA_GENERATION);
        let layout = i64::from(TABLES_LAYOUT);
        let recorded = |layout| {
            Some(Recorded {
                oldest_generation: generation,
                layout,
            })
        };
        assert!(needs_set_up(None, "x").unwrap());
        assert!(needs_set_up(recorded(layout - 1), "x").unwrap());
        assert!(!needs_set_up(recorded(layout), "x").unwrap());
        // A later release that only added to the tables: used as they are.
        assert!(!needs_set_up(recorded(layout + 1), "x").unwrap());
    }
}
