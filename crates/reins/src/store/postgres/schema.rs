//! The PostgreSQL store's tables, created by [`PostgresStore::connect`](super::PostgresStore::connect)
//! when they do not exist, and the columns that tables created by earlier releases lack.

use super::rows::backend;
use crate::store::StoreError;

/// How `created_at` is read: a run written by a release that does not set it (the column is
/// nullable so that such a release can still insert) counts as created when it was last
/// written.
pub(super) const CREATED_AT: &str = "COALESCE(created_at, updated_at)";

/// The advisory lock every connecting store takes while it sets the tables up. The number the
/// releases before this one took (for the whole session, let go before their set-up had
/// committed): a store of such a release connecting meanwhile takes turns with this one.
const SET_UP_LOCK: i64 = 7351;

/// Creates the tables (and adds the columns earlier releases lack) in one transaction that
/// holds [`SET_UP_LOCK`] until it commits: processes connecting together take turns, and each
/// finds the tables either not yet made or made and committed, whole. (Let go before the
/// commit, as releases before this one did, the next one in would not see the tables yet, try
/// to create them too, and fail on the catalog's unique index once the first committed, or
/// add a column twice.) A failure rolls everything back and lets the lock go.
pub(super) async fn set_up(client: &mut deadpool_postgres::Client) -> Result<(), StoreError> {
    let transaction = client.transaction().await.map_err(backend)?;
    transaction
        .batch_execute(&format!(
            "SELECT pg_advisory_xact_lock({SET_UP_LOCK}); {SCHEMA}"
        ))
        .await
        .map_err(backend)?;
    transaction.commit().await.map_err(backend)
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
