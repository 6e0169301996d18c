//! The PostgreSQL store's tables, created by [`PostgresStore::connect`](super::PostgresStore::connect)
//! when they do not exist, the columns that tables created by earlier releases lack, and the
//! generation of the tables the database records.

use super::rows::{backend, column};
use crate::store::generation::{self, SetUp};
use crate::store::{SCHEMA_GENERATION, StoreError};

/// How `created_at` is read: a run written by a release that does not set it (the column is
/// nullable so that such a release can still insert) counts as created when it was last
/// written.
pub(super) const CREATED_AT: &str = "COALESCE(created_at, updated_at)";

/// The advisory lock every connecting store takes while it sets the tables up. The number the
/// releases before this one took (for the whole session, let go before their set-up had
/// committed): a store of such a release connecting meanwhile takes turns with this one.
const SET_UP_LOCK: i64 = 7351;

/// Sets the tables up in one transaction that holds [`SET_UP_LOCK`] until it commits: refuses
/// tables a newer release set up ([`StoreError::UnsupportedSchema`], naming them `database`,
/// nothing changed), and unless they record this layout (or a later one) already, whole, creates them, adds the
/// columns earlier releases lack and records the generation. Processes connecting together
/// take turns, and each finds the tables either not yet made or made and committed, whole.
/// (Let go before the commit, as releases before the last ones did, the next one in would not
/// see the tables yet, try to create them too, and fail on the catalog's unique index once the
/// first committed, or add a column twice.) A failure rolls everything back and lets the lock
/// go.
///
/// Tables that record this layout, every table and index of it present (one look at the
/// catalog: a table dropped by hand is made again), get no DDL at all: `CREATE INDEX IF NOT EXISTS` takes a
/// `SHARE` lock on `reins_runs` even when the index exists, so every connection (every CLI
/// command) would wait for the writes under way to the runs and hold new ones back until it
/// committed. Checking the generation under the lock still waits for a first set-up under way.
pub(super) async fn set_up(
    client: &mut deadpool_postgres::Client,
    database: &str,
) -> Result<(), StoreError> {
    let transaction = client.transaction().await.map_err(backend)?;
    transaction
        .batch_execute(&format!("SELECT pg_advisory_xact_lock({SET_UP_LOCK})"))
        .await
        .map_err(backend)?;
    let recorded = recorded_generation(&transaction, database).await?;
    let needed = match generation::set_up_for(recorded, database)? {
        SetUp::Needed => true,
        SetUp::IfIncomplete => !all_present(&transaction).await?,
        SetUp::Never => false,
    };
    if needed {
        transaction.batch_execute(SCHEMA).await.map_err(backend)?;
        transaction
            .execute(
                generation::RECORD,
                &[
                    &i64::from(SCHEMA_GENERATION),
                    &i64::from(generation::TABLES_LAYOUT),
                ],
            )
            .await
            .map_err(backend)?;
    }
    transaction.commit().await.map_err(backend)
}

/// Whether every table and index of the layout is in the schema the tables are created in:
/// one read of the catalog (`to_regclass` needs no privilege on the tables, unlike
/// `information_schema`, which hides those a role may not use).
async fn all_present(transaction: &deadpool_postgres::Transaction<'_>) -> Result<bool, StoreError> {
    let names: Vec<&str> = generation::TABLES_AND_INDEXES.to_vec();
    let row = transaction
        .query_one(
            "SELECT bool_and(to_regclass(quote_ident(current_schema()) || '.' || name) IS NOT NULL)
                 FROM unnest($1::text[]) AS name",
            &[&names],
        )
        .await
        .map_err(backend)?;
    column::<bool>(&row, 0)
}

/// The generation and layout the tables record: `None` when there is no `reins_schema` in the schema the
/// tables are created in (no tables yet, or a release's from before generations) or no row in
/// it. Looked up in the catalog first: reading a missing table would fail the transaction. A
/// role that may not read `reins_schema` is told so, naming the privilege it lacks and
/// `database` (no credentials).
async fn recorded_generation(
    transaction: &deadpool_postgres::Transaction<'_>,
    database: &str,
) -> Result<Option<generation::Recorded>, StoreError> {
    let exists = transaction
        .query_one(
            "SELECT to_regclass(quote_ident(current_schema()) || '.reins_schema') IS NOT NULL",
            &[],
        )
        .await
        .map_err(backend)?;
    if !column::<bool>(&exists, 0)? {
        return Ok(None);
    }
    let row = transaction
        .query_opt(generation::READ, &[])
        .await
        .map_err(|error| {
            if error.code() == Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) {
                StoreError::Backend(format!(
                    "{database}: the role connecting lacks the SELECT privilege on the table \
                     reins_schema, which every store reads on connecting to learn the tables' \
                     generation (grant it: GRANT SELECT ON reins_schema TO <the role>)"
                ))
            } else {
                backend(error)
            }
        })?;
    row.map(|row| {
        Ok(generation::Recorded {
            oldest_generation: column::<i64>(&row, 0)?,
            layout: column::<i64>(&row, 1)?,
        })
    })
    .transpose()
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS reins_runs (
    run_id TEXT PRIMARY KEY,
    version BIGINT NOT NULL,
    format BIGINT NOT NULL,
    status TEXT NOT NULL,
    state TEXT NOT NULL,
    lease_owner TEXT,
    lease_token TEXT,
    lease_until BIGINT NOT NULL DEFAULT 0,
    updated_at BIGINT NOT NULL,
    created_at BIGINT,
    agent_name TEXT
);
-- Tables created before leases had tokens (checked first: ALTER TABLE would lock the table).
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
                   AND table_name = 'reins_runs' AND column_name = 'lease_token') THEN
        ALTER TABLE reins_runs ADD COLUMN lease_token TEXT;
    END IF;
END $$;
CREATE INDEX IF NOT EXISTS reins_runs_status ON reins_runs (status);
-- The runs written last (`recent_runs`), of every status or of one, ids as bytes as every
-- listing orders them; created on connecting to tables of an earlier release too.
CREATE INDEX IF NOT EXISTS reins_runs_written ON reins_runs (updated_at, run_id COLLATE \"C\");
CREATE INDEX IF NOT EXISTS reins_runs_status_written
    ON reins_runs (status, updated_at, run_id COLLATE \"C\");
CREATE TABLE IF NOT EXISTS reins_journal (
    run_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    effect_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS reins_decisions (
    run_id TEXT NOT NULL,
    internal_call_id TEXT NOT NULL,
    decision TEXT NOT NULL,
    decided_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, internal_call_id)
);
CREATE TABLE IF NOT EXISTS reins_decision_log (
    run_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    internal_call_id TEXT NOT NULL,
    record TEXT NOT NULL,
    decided_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
-- One row: the oldest generation of reins that can use these tables (`SCHEMA_GENERATION`)
-- and the layout they were last set up in (`TABLES_LAYOUT`).
CREATE TABLE IF NOT EXISTS reins_schema (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    oldest_generation BIGINT NOT NULL,
    layout BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS reins_checkpoints (
    run_id TEXT NOT NULL,
    version BIGINT NOT NULL,
    status TEXT NOT NULL,
    format BIGINT NOT NULL,
    state TEXT NOT NULL,
    journal_len BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, version)
);
-- Tables created before runs kept when they were created: the runs already there get the
-- time of their oldest checkpoint kept, else when they were last written.
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
                   AND table_name = 'reins_runs' AND column_name = 'created_at') THEN
        ALTER TABLE reins_runs ADD COLUMN created_at BIGINT;
        UPDATE reins_runs SET created_at = COALESCE(
            (SELECT MIN(c.created_at) FROM reins_checkpoints c WHERE c.run_id = reins_runs.run_id),
            updated_at);
    END IF;
END $$;
-- Tables created before listings said whose each run is: the runs already there get the agent
-- their state names. A state that is not JSON (corrupt: the cast fails the statement) sends
-- the fill run by run, each in a block of its own, where such a run is left without one.
DO $$ DECLARE stored RECORD; BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
                   AND table_name = 'reins_runs' AND column_name = 'agent_name') THEN
        ALTER TABLE reins_runs ADD COLUMN agent_name TEXT;
        BEGIN
            UPDATE reins_runs SET agent_name = state::jsonb ->> 'agent_name'
                WHERE jsonb_typeof(state::jsonb -> 'agent_name') = 'string';
        EXCEPTION WHEN others THEN
            FOR stored IN SELECT run_id FROM reins_runs LOOP
                BEGIN
                    UPDATE reins_runs SET agent_name = CASE
                        WHEN jsonb_typeof(state::jsonb -> 'agent_name') = 'string'
                        THEN state::jsonb ->> 'agent_name' END
                        WHERE run_id = stored.run_id;
                EXCEPTION WHEN others THEN NULL;
                END;
            END LOOP;
        END;
    END IF;
END $$;
";
