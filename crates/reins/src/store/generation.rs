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

/// Whether a database whose `reins_schema` records `recorded` (`None`: no generation
/// recorded, the tables missing or made by a release before generations) needs setting up:
/// `false` when its tables are this generation's or a newer, compatible one's (nothing to
/// create, add or lock); refused when they need a newer release. `database` names it for the
/// refusal, without credentials.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn needs_set_up(recorded: Option<i64>, database: &str) -> Result<bool, StoreError> {
    match recorded {
        Some(found) if found > i64::from(SCHEMA_GENERATION) => Err(StoreError::UnsupportedSchema {
            database: database.to_owned(),
            found,
            supported: SCHEMA_GENERATION,
        }),
        Some(found) => Ok(found < i64::from(SCHEMA_GENERATION)),
        None => Ok(true),
    }
}

/// Records this release's generation once the tables are set up (inside the set-up's
/// transaction): the row is the table's only one. The same statement in SQLite and
/// PostgreSQL, `$1` the generation.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) const RECORD: &str = "INSERT INTO reins_schema (id, oldest_generation) VALUES (1, $1)
    ON CONFLICT (id) DO UPDATE SET oldest_generation = excluded.oldest_generation";

/// Reads the generation recorded, once the table is known to exist.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) const READ: &str = "SELECT oldest_generation FROM reins_schema WHERE id = 1";

#[cfg(all(test, any(feature = "sqlite", feature = "postgres")))]
mod tests {
    use super::*;

    #[test]
    fn a_newer_generation_is_refused_naming_both_and_no_credentials() {
        let newer = i64::from(SCHEMA_GENERATION) + 1;
        let error = needs_set_up(Some(newer), "PostgreSQL database `runs` at db:5432").unwrap_err();
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
    fn only_a_missing_or_older_generation_is_set_up() {
        let current = i64::from(SCHEMA_GENERATION);
        assert!(needs_set_up(None, "x").unwrap());
        assert!(needs_set_up(Some(current - 1), "x").unwrap());
        assert!(!needs_set_up(Some(current), "x").unwrap());
    }
}
