//! The PostgreSQL store's writes of a run: creating it, claiming it, checkpointing it (the
//! [`CHECKPOINT`] statement) and recording a decision on it, each one transaction.
//!
//! `create` and `checkpoint` take the pool's connection still to come and await it only once
//! the state is encoded: a state that cannot be stored fails without waiting for a
//! connection. Every time written or compared is the database server's
//! ([`clock`](super::clock)), read by the statement that uses it.

use super::clock::server_now;
use super::locks::{bounded_statement, bounded_transaction};
use super::rows::{backend, column, on_run, read_decisions, read_state};
use crate::run::RunState;
use crate::store::{
    ClaimedRun, Decision, FORMAT_VERSION, JournalEntry, Lease, RecordedDecision, Recording,
    StoreError, check_claimable, decided_during_run, encode_decision, encode_state, new_token,
    pg_listen, record_decision, status_name,
};
use deadpool_postgres::Client;
use std::time::Duration;

/// Advances a run's version, writes its state and appends its journal entries, in one
/// statement; returns how many runs it updated (0 when the lease is no longer current).
/// Releasing (`$6`) clears the lease's holder; otherwise it stays with this claim for `$7`
/// milliseconds more by the server's clock, read once (`clock`) for the lease, the run's
/// `updated_at` and the checkpoint's `created_at`. The state is written in this release's
/// format (`$11`), whichever it was read from, and also kept as the checkpoint of the new
/// version; `$12` is the name of the run's agent as the state says it.
const CHECKPOINT: &str = concat!(
    "
WITH clock AS (
    SELECT ",
    server_now!(),
    " AS now
), updated AS (
    UPDATE reins_runs SET version = version + 1, status = $4, state = $5,
        lease_owner = CASE WHEN $6 THEN NULL ELSE lease_owner END,
        lease_token = CASE WHEN $6 THEN NULL ELSE lease_token END,
        lease_until = CASE WHEN $6 THEN 0 ELSE clock.now + $7 END,
        updated_at = clock.now, format = $11, agent_name = $12
    FROM clock
    WHERE run_id = $1 AND version = $2 AND lease_token = $3
    RETURNING run_id, updated_at
), base AS (
    SELECT COALESCE(MAX(seq), 0) AS seq FROM reins_journal WHERE run_id = $1
), appended AS (
    INSERT INTO reins_journal (run_id, seq, effect_id, kind, payload)
    SELECT updated.run_id, base.seq + entry.ord, entry.effect_id, entry.kind, entry.payload
    FROM updated, base,
        unnest($8::text[], $9::text[], $10::text[]) WITH ORDINALITY
            AS entry(effect_id, kind, payload, ord)
), snapshot AS (
    INSERT INTO reins_checkpoints (run_id, version, status, format, state, journal_len, created_at)
    SELECT updated.run_id, $2 + 1, $4, $11, $5, base.seq + cardinality($8::text[]),
        updated.updated_at
    FROM updated, base
)
SELECT count(*) FROM updated"
);

/// Deletes a run's (`$1`) checkpoints but the newest `$2`.
const PRUNE_CHECKPOINTS: &str = "DELETE FROM reins_checkpoints WHERE run_id = $1 AND version NOT IN
    (SELECT version FROM reins_checkpoints WHERE run_id = $1 ORDER BY version DESC LIMIT $2)";

/// Stores a new run and its first checkpoint, leased to `owner` for `lease_millis`.
pub(super) async fn create(
    connection: impl Future<Output = Result<Client, StoreError>>,
    state: &RunState,
    (owner, lease_millis): (&str, i64),
    lock_wait: Duration,
) -> Result<Lease, StoreError> {
    let token = new_token();
    let lease = Some((owner, token.as_str(), lease_millis));
    insert(connection, state, lease, &[], lock_wait).await?;
    Ok(Lease {
        run_id: state.run_id.clone(),
        token,
        owner: owner.to_owned(),
        version: 1,
    })
}

/// Inserts a new run at version 1 (`$1` to `$4`) of the agent `$8`, created and written at
/// the server's clock, leased to `$5` with token `$6` for `$7` milliseconds if they are not
/// null (else `lease_until` is 0); returns the run's `updated_at`, or no row when the run
/// exists.
const INSERT_RUN: &str = concat!(
    "INSERT INTO reins_runs (run_id, version, format, status, state, lease_owner, lease_token,
        lease_until, updated_at, created_at, agent_name)
    SELECT $1, 1, $2, $3, $4, $5, $6, COALESCE(clock.now + $7, 0), clock.now, clock.now, $8
    FROM (SELECT ",
    server_now!(),
    " AS now) AS clock
    ON CONFLICT (run_id) DO NOTHING RETURNING updated_at"
);

/// Stores a new run at version 1 with `journal` and its first checkpoint, in one transaction,
/// leased to `(owner, token)` for `lease_millis` if given. The insert waits at most
/// `lock_wait` for another session inserting the same run id to finish.
pub(super) async fn insert(
    connection: impl Future<Output = Result<Client, StoreError>>,
    state: &RunState,
    lease: Option<(&str, &str, i64)>,
    journal: &[JournalEntry],
    lock_wait: Duration,
) -> Result<(), StoreError> {
    let encoded = encode_state(state)?;
    let (owner, token, lease_millis) = match lease {
        Some((owner, token, millis)) => (Some(owner), Some(token), Some(millis)),
        None => (None, None, None),
    };
    let effect_ids: Vec<&str> = journal.iter().map(|e| e.effect_id.as_str()).collect();
    let kinds: Vec<&str> = journal.iter().map(|e| e.kind.as_str()).collect();
    let payloads: Vec<String> = journal.iter().map(|e| e.payload.to_string()).collect();
    let journal_len = i64::try_from(journal.len()).unwrap_or(i64::MAX);
    let mut client = connection.await?;
    let transaction = bounded_transaction(&mut client, lock_wait).await?;
    let failed = on_run(&state.run_id, lock_wait);
    let inserted = transaction
        .query_opt(
            INSERT_RUN,
            &[
                &state.run_id,
                &i64::from(FORMAT_VERSION),
                &status_name(state.status),
                &encoded,
                &owner,
                &token,
                &lease_millis,
                &state.agent_name,
            ],
        )
        .await
        .map_err(&failed)?;
    let Some(inserted) = inserted else {
        return Err(StoreError::AlreadyExists(state.run_id.clone()));
    };
    // The first checkpoint is kept at the run's creation time.
    let now: i64 = column(&inserted, 0)?;
    if !journal.is_empty() {
        transaction
            .execute(
                "INSERT INTO reins_journal (run_id, seq, effect_id, kind, payload)
                     SELECT $1, entry.ord, entry.effect_id, entry.kind, entry.payload
                     FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY
                         AS entry(effect_id, kind, payload, ord)",
                &[&state.run_id, &effect_ids, &kinds, &payloads],
            )
            .await
            .map_err(&failed)?;
    }
    transaction
        .execute(
            "INSERT INTO reins_checkpoints (run_id, version, status, format, state, journal_len, created_at)
                 VALUES ($1, 1, $2, $3, $4, $5, $6)",
            &[
                &state.run_id,
                &status_name(state.status),
                &i64::from(FORMAT_VERSION),
                &encoded,
                &journal_len,
                &now,
            ],
        )
        .await
        .map_err(&failed)?;
    transaction.commit().await.map_err(backend)
}

/// Moves the end of `lease` to `lease_millis` from now by the server's clock, if it is still
/// current; nothing else of the run is written. Waits at most `lock_wait` for the run's row.
pub(super) async fn renew(
    client: &Client,
    lease: &Lease,
    lease_millis: i64,
    lock_wait: Duration,
) -> Result<Lease, StoreError> {
    let statement = client
        .prepare_cached(concat!(
            "UPDATE reins_runs SET lease_until = ",
            server_now!(),
            " + $4 WHERE run_id = $1 AND version = $2 AND lease_token = $3 RETURNING 1"
        ))
        .await
        .map_err(backend)?;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
        [&lease.run_id, &lease.version, &lease.token, &lease_millis];
    let updated = bounded_statement(client, &lease.run_id, lock_wait, &statement, &params).await?;
    if updated.is_empty() {
        return Err(StoreError::Conflict {
            run_id: lease.run_id.clone(),
            expected: lease.version,
        });
    }
    Ok(lease.clone())
}

/// Leases `run_id` to `owner` for `lease_millis`, with its state and decisions; with
/// `taking_over`, also from that holder while its lease is live ([`RunStore::claim_from`]).
///
/// [`RunStore::claim_from`]: crate::store::RunStore::claim_from
pub(super) async fn claim(
    client: &mut Client,
    run_id: &str,
    owner: &str,
    lease_millis: i64,
    taking_over: Option<&str>,
    lock_wait: Duration,
) -> Result<ClaimedRun, StoreError> {
    let transaction = bounded_transaction(client, lock_wait).await?;
    // FOR UPDATE makes a concurrent claim wait for this one (at most `lock_wait`), then see
    // its lease; so a takeover replaces the very holder it checked. The lease is judged, and
    // the new one written, by the server's clock as the row was read.
    let (row, state) = read_state(&transaction, run_id, Some(lock_wait)).await?;
    let now = row.server_now;
    let holder = row.owner.as_deref();
    check_claimable(run_id, &state, holder, row.lease_until, now, taking_over)?;
    let (version, token) = (row.version + 1, new_token());
    transaction
        .execute(
            "UPDATE reins_runs SET version = $2, lease_owner = $3, lease_token = $4,
                 lease_until = $5, updated_at = $6 WHERE run_id = $1",
            &[
                &run_id,
                &version,
                &owner,
                &token,
                &now.saturating_add(lease_millis),
                &now,
            ],
        )
        .await
        .map_err(on_run(run_id, lock_wait))?;
    let decisions = read_decisions(&transaction, run_id).await?;
    transaction.commit().await.map_err(backend)?;
    Ok(ClaimedRun {
        state,
        decisions,
        lease: Lease {
            run_id: run_id.to_owned(),
            token,
            owner: owner.to_owned(),
            version,
        },
    })
}

/// How a checkpoint is written: the lease's length from now on, how many checkpoints are
/// kept, how long a write waits for a lock.
pub(super) struct CheckpointPolicy {
    pub(super) lease_millis: i64,
    pub(super) keep_checkpoints: Option<usize>,
    pub(super) lock_wait: Duration,
}

/// Writes `state` and appends `journal` under `lease`, which then lasts `lease_millis` more
/// (or is given up when `release`). Waits at most `lock_wait` for the run's row.
pub(super) async fn checkpoint(
    connection: impl Future<Output = Result<Client, StoreError>>,
    (lease, state, journal): (&Lease, &RunState, &[JournalEntry]),
    release: bool,
    policy: CheckpointPolicy,
) -> Result<Lease, StoreError> {
    let CheckpointPolicy {
        lease_millis,
        keep_checkpoints,
        lock_wait,
    } = policy;
    let encoded = encode_state(state)?;
    let effect_ids: Vec<&str> = journal.iter().map(|e| e.effect_id.as_str()).collect();
    let kinds: Vec<&str> = journal.iter().map(|e| e.kind.as_str()).collect();
    let payloads: Vec<String> = journal.iter().map(|e| e.payload.to_string()).collect();
    let client = connection.await?;
    let statement = client.prepare_cached(CHECKPOINT).await.map_err(backend)?;
    // One statement, in one round trip: the state is written and the journal appended
    // together, or neither when the version moved.
    let rows = bounded_statement(
        &client,
        &lease.run_id,
        lock_wait,
        &statement,
        &[
            &lease.run_id,
            &lease.version,
            &lease.token,
            &status_name(state.status),
            &encoded,
            &release,
            &lease_millis,
            &effect_ids,
            &kinds,
            &payloads,
            &i64::from(FORMAT_VERSION),
            &state.agent_name,
        ],
    )
    .await?;
    let row = rows
        .first()
        .ok_or_else(|| StoreError::Backend("the checkpoint returned no row".to_owned()))?;
    let updated: i64 = column(row, 0)?;
    if updated == 0 {
        return Err(StoreError::Conflict {
            run_id: lease.run_id.clone(),
            expected: lease.version,
        });
    }
    if let Some(keep) = keep_checkpoints {
        // After the checkpoint, which stands whatever this does: a checkpoint pruned late
        // only takes room.
        let keep = i64::try_from(keep).unwrap_or(i64::MAX);
        if let Err(error) = prune(&client, &lease.run_id, keep, lock_wait).await {
            tracing::warn!(
                target: "reins",
                run_id = %lease.run_id,
                %error,
                "older checkpoints could not be deleted; the next checkpoint tries again"
            );
        }
    }
    Ok(Lease {
        version: lease.version + 1,
        ..lease.clone()
    })
}

/// Deletes the checkpoints of `run_id` but the newest `keep`, waiting at most `lock_wait` for
/// any of them another session holds.
async fn prune(
    client: &Client,
    run_id: &str,
    keep: i64,
    lock_wait: Duration,
) -> Result<(), StoreError> {
    let statement = client
        .prepare_cached(PRUNE_CHECKPOINTS)
        .await
        .map_err(backend)?;
    bounded_statement(client, run_id, lock_wait, &statement, &[&run_id, &keep]).await?;
    Ok(())
}

/// Ends the lease on run `$1`, which `decide` found run out: the claim that held it read the
/// run's decisions before this one, so none of its writes may follow (they check the token).
const LAPSED_LEASE_ENDS: &str = "UPDATE reins_runs SET lease_owner = NULL, lease_token = NULL,
    lease_until = 0 WHERE run_id = $1 AND lease_token IS NOT NULL";

/// Records `decision` on `run_id` (the current one per call, see [`record_decision`], and the
/// audit log) and notifies
/// the decision listeners; a lease on the run that ran out ends with it.
pub(super) async fn decide(
    client: &mut Client,
    run_id: &str,
    decision: &Decision,
    lock_wait: Duration,
) -> Result<RecordedDecision, StoreError> {
    let transaction = bounded_transaction(client, lock_wait).await?;
    let failed = on_run(run_id, lock_wait);
    // The run's row stays locked until commit (waited for at most `lock_wait`), so decisions
    // of one run are judged against each other and get their audit sequence numbers one
    // at a time.
    let (row, state) = read_state(&transaction, run_id, Some(lock_wait)).await?;
    let lease = (row.owner.as_deref(), row.lease_until);
    let standing = read_decisions(&transaction, run_id).await?;
    let now = row.server_now;
    let recorded = match record_decision(run_id, &state, lease, &standing, decision.clone(), now)? {
        Recording::New(recorded) => recorded,
        Recording::Repeated(recorded) => return Ok(recorded),
    };
    let json = encode_decision(&recorded)?;
    let call_id = &recorded.decision.internal_call_id;
    // A lease that ran out is taken from its worker, which would never apply this.
    transaction
        .execute(LAPSED_LEASE_ENDS, &[&run_id])
        .await
        .map_err(&failed)?;
    transaction
        .execute(
            "INSERT INTO reins_decisions (run_id, internal_call_id, decision, decided_at)
                 VALUES ($1, $2, $3, $4)
                 ON CONFLICT (run_id, internal_call_id) DO UPDATE SET decision = $3, decided_at = $4",
            &[&run_id, call_id, &json, &recorded.decided_at_ms],
        )
        .await
        .map_err(&failed)?;
    transaction
        .execute(
            "INSERT INTO reins_decision_log (run_id, seq, internal_call_id, record, decided_at)
                 SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4 FROM reins_decision_log WHERE run_id = $1",
            &[&run_id, call_id, &json, &recorded.decided_at_ms],
        )
        .await
        .map_err(&failed)?;
    // Delivered to every listener when the transaction commits.
    transaction
        .execute("SELECT pg_notify($1, $2)", &[&pg_listen::CHANNEL, &run_id])
        .await
        .map_err(&failed)?;
    transaction.commit().await.map_err(backend)?;
    Ok(recorded)
}

/// Appends a decision the run made while `lease` holds it to its decision log (not to the
/// decisions a claim applies), if the lease is current. Waits at most `lock_wait` for the
/// run's row.
pub(super) async fn log_decision(
    client: &mut Client,
    lease: &Lease,
    decision: &Decision,
    lock_wait: Duration,
) -> Result<RecordedDecision, StoreError> {
    let transaction = bounded_transaction(client, lock_wait).await?;
    let failed = on_run(&lease.run_id, lock_wait);
    // The run's row stays locked until commit, so the log's sequence numbers are given one
    // at a time, as `decide` gives them.
    let held = transaction
        .query_opt(
            concat!(
                "SELECT ",
                server_now!(),
                " FROM reins_runs WHERE run_id = $1 AND version = $2 AND lease_token = $3
                     FOR UPDATE"
            ),
            &[&lease.run_id, &lease.version, &lease.token],
        )
        .await
        .map_err(&failed)?;
    let Some(held) = held else {
        return Err(StoreError::Conflict {
            run_id: lease.run_id.clone(),
            expected: lease.version,
        });
    };
    let recorded = decided_during_run(lease, decision, column(&held, 0)?);
    let json = encode_decision(&recorded)?;
    transaction
        .execute(
            "INSERT INTO reins_decision_log (run_id, seq, internal_call_id, record, decided_at)
                 SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4 FROM reins_decision_log WHERE run_id = $1",
            &[
                &lease.run_id,
                &recorded.decision.internal_call_id,
                &json,
                &recorded.decided_at_ms,
            ],
        )
        .await
        .map_err(&failed)?;
    transaction.commit().await.map_err(backend)?;
    Ok(recorded)
}
