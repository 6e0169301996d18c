//! The SQLite store's writes of a run, each one `IMMEDIATE` transaction: creating it,
//! claiming it, checkpointing it and recording a decision on it.

use super::Work;
use super::rows::{backend, read_decisions, read_state};
use super::schema::SNAPSHOT;
use crate::run::RunState;
use crate::store::{
    ClaimedRun, Decision, FORMAT_VERSION, JournalEntry, Lease, RecordedDecision, Recording,
    StoreError, check_claimable, decided_during_run, encode_decision, encode_state, new_token,
    now_millis, record_decision, status_name,
};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// Stores a new run and its first checkpoint, leased to `owner` for `lease` milliseconds.
pub(super) fn create(
    state: &RunState,
    owner: &str,
    lease: i64,
) -> Result<impl Work<Lease>, StoreError> {
    let (run_id, owner, token) = (state.run_id.clone(), owner.to_owned(), new_token());
    let insert = insert(state, Some((owner.clone(), token.clone(), lease)), &[])?;
    Ok(move |connection: &mut Connection| {
        insert(connection)?;
        Ok(Lease {
            run_id,
            token,
            owner,
            version: 1,
        })
    })
}

/// Stores a new run forked from another, with its `journal`, leased to nobody.
pub(super) fn create_forked(
    state: &RunState,
    journal: &[JournalEntry],
) -> Result<impl Work<()>, StoreError> {
    insert(state, None, journal)
}

/// Stores a new run at version 1 with `journal` and its first checkpoint, in one transaction,
/// leased to `(owner, token)` for `millis` if given.
fn insert(
    state: &RunState,
    lease: Option<(String, String, i64)>,
    journal: &[JournalEntry],
) -> Result<impl Work<()>, StoreError> {
    let encoded = encode_state(state)?;
    let run_id = state.run_id.clone();
    let status = status_name(state.status);
    let agent_name = state.agent_name.clone();
    let journal = journal.to_vec();
    Ok(move |connection: &mut Connection| {
        let now = now_millis();
        let (owner, token, until) = match lease {
            Some((owner, token, millis)) => (Some(owner), Some(token), now + millis),
            None => (None, None, 0),
        };
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        let inserted = transaction
                .execute(
                    "INSERT INTO reins_runs (run_id, version, format, status, state, lease_owner, lease_token, lease_until, updated_at, created_at, agent_name)
                     VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9) ON CONFLICT (run_id) DO NOTHING",
                    params![run_id, FORMAT_VERSION, status, encoded, owner, token, until, now, agent_name],
                )
                .map_err(backend)?;
        if inserted == 0 {
            return Err(StoreError::AlreadyExists(run_id));
        }
        append_journal(&transaction, &run_id, &journal)?;
        transaction
            .execute(
                SNAPSHOT,
                params![run_id, 1, status, FORMAT_VERSION, encoded, now],
            )
            .map_err(backend)?;
        transaction.commit().map_err(backend)
    })
}

/// Appends `journal` to the journal of `run_id`, inside the caller's transaction.
fn append_journal(
    transaction: &Connection,
    run_id: &str,
    journal: &[JournalEntry],
) -> Result<(), StoreError> {
    if journal.is_empty() {
        return Ok(());
    }
    let next: i64 = transaction
        .query_row(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM reins_journal WHERE run_id = ?1",
            params![run_id],
            |row| row.get(0),
        )
        .map_err(backend)?;
    let mut insert = transaction
        .prepare(
            "INSERT INTO reins_journal (run_id, seq, effect_id, kind, payload)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .map_err(backend)?;
    for (offset, entry) in journal.iter().enumerate() {
        insert
            .execute(params![
                run_id,
                next + offset as i64,
                entry.effect_id,
                entry.kind,
                entry.payload.to_string()
            ])
            .map_err(backend)?;
    }
    Ok(())
}

/// Takes a stored run's lease for `owner` for `lease` milliseconds, with its decisions; with
/// `taking_over`, also from that holder while its lease is live ([`RunStore::claim_from`]).
///
/// [`RunStore::claim_from`]: crate::store::RunStore::claim_from
pub(super) fn claim(
    run_id: &str,
    owner: &str,
    lease: i64,
    taking_over: Option<&str>,
) -> impl Work<ClaimedRun> {
    let (run_id, owner) = (run_id.to_owned(), owner.to_owned());
    let taking_over = taking_over.map(str::to_owned);
    move |connection: &mut Connection| {
        // IMMEDIATE takes the write lock first, so two claims cannot both read the old
        // version and both succeed, and a takeover replaces the holder it checked.
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        let (row, state) = read_state(&transaction, &run_id)?;
        let now = now_millis();
        let holder = row.owner.as_deref();
        check_claimable(
            &run_id,
            &state,
            holder,
            row.lease_until,
            now,
            taking_over.as_deref(),
        )?;
        let (version, token) = (row.version + 1, new_token());
        transaction
            .execute(
                "UPDATE reins_runs SET version = ?2, lease_owner = ?3, lease_token = ?4,
                     lease_until = ?5, updated_at = ?6 WHERE run_id = ?1",
                params![run_id, version, owner, token, now + lease, now],
            )
            .map_err(backend)?;
        let decisions = read_decisions(&transaction, &run_id)?;
        transaction.commit().map_err(backend)?;
        Ok(ClaimedRun {
            state,
            decisions,
            lease: Lease {
                run_id,
                token,
                owner,
                version,
            },
        })
    }
}

/// Writes a run's state, the journal entries since the last checkpoint and the new
/// checkpoint, if `lease` still holds the run; `release` gives the lease up.
pub(super) fn checkpoint(
    lease: &Lease,
    state: &RunState,
    journal: &[JournalEntry],
    release: bool,
    lease_millis: i64,
    keep_checkpoints: Option<usize>,
) -> Result<impl Work<Lease>, StoreError> {
    let lease = lease.clone();
    let journal = journal.to_vec();
    let encoded = encode_state(state)?;
    let status = status_name(state.status);
    let agent_name = state.agent_name.clone();
    Ok(move |connection: &mut Connection| {
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        let now = now_millis();
        let until = if release { 0 } else { now + lease_millis };
        // Releasing clears the lease's holder; otherwise it stays with this claim. The
        // state is written in this release's format, whichever it was read from.
        let updated = transaction
            .execute(
                "UPDATE reins_runs SET version = version + 1, status = ?4, state = ?5,
                     lease_owner = CASE WHEN ?6 THEN NULL ELSE lease_owner END,
                     lease_token = CASE WHEN ?6 THEN NULL ELSE lease_token END,
                     lease_until = ?7, updated_at = ?8, format = ?9, agent_name = ?10
                     WHERE run_id = ?1 AND version = ?2 AND lease_token = ?3",
                params![
                    lease.run_id,
                    lease.version,
                    lease.token,
                    status,
                    encoded,
                    release,
                    until,
                    now,
                    FORMAT_VERSION,
                    agent_name
                ],
            )
            .map_err(backend)?;
        if updated == 0 {
            return Err(StoreError::Conflict {
                run_id: lease.run_id,
                expected: lease.version,
            });
        }
        append_journal(&transaction, &lease.run_id, &journal)?;
        transaction
            .execute(
                SNAPSHOT,
                params![
                    lease.run_id,
                    lease.version + 1,
                    status,
                    FORMAT_VERSION,
                    encoded,
                    now
                ],
            )
            .map_err(backend)?;
        if let Some(keep) = keep_checkpoints {
            transaction
                .execute(
                    "DELETE FROM reins_checkpoints WHERE run_id = ?1 AND version NOT IN
                         (SELECT version FROM reins_checkpoints WHERE run_id = ?1
                          ORDER BY version DESC LIMIT ?2)",
                    params![lease.run_id, i64::try_from(keep).unwrap_or(i64::MAX)],
                )
                .map_err(backend)?;
        }
        transaction.commit().map_err(backend)?;
        Ok(Lease {
            version: lease.version + 1,
            ..lease
        })
    })
}

/// Moves the end of `lease` to `lease_millis` from now, if it is still current; nothing else
/// of the run is written.
pub(super) fn renew(lease: &Lease, lease_millis: i64) -> impl Work<Lease> {
    let lease = lease.clone();
    move |connection: &mut Connection| {
        let updated = connection
            .execute(
                "UPDATE reins_runs SET lease_until = ?4
                     WHERE run_id = ?1 AND version = ?2 AND lease_token = ?3",
                params![
                    lease.run_id,
                    lease.version,
                    lease.token,
                    now_millis() + lease_millis
                ],
            )
            .map_err(backend)?;
        if updated == 0 {
            return Err(StoreError::Conflict {
                run_id: lease.run_id,
                expected: lease.version,
            });
        }
        Ok(lease)
    }
}

/// Ends the lease on run `?1`, which `decide` found run out: the claim that held it read the
/// run's decisions before this one, so none of its writes may follow (they check the token).
const LAPSED_LEASE_ENDS: &str = "UPDATE reins_runs SET lease_owner = NULL, lease_token = NULL,
     lease_until = 0 WHERE run_id = ?1 AND lease_token IS NOT NULL";

/// Records a decision about a suspended call (replacing one it names, see
/// [`record_decision`]) and logs it; a lease on the run that ran out ends with it.
pub(super) fn decide(run_id: &str, decision: &Decision) -> impl Work<RecordedDecision> {
    let (run_id, decision) = (run_id.to_owned(), decision.clone());
    move |connection: &mut Connection| {
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        let (row, state) = read_state(&transaction, &run_id)?;
        let lease = (row.owner.as_deref(), row.lease_until);
        let standing = read_decisions(&transaction, &run_id)?;
        let recorded =
            match record_decision(&run_id, &state, lease, &standing, decision, now_millis())? {
                Recording::New(recorded) => recorded,
                Recording::Repeated(recorded) => return Ok(recorded),
            };
        let json = encode_decision(&recorded)?;
        let call_id = &recorded.decision.internal_call_id;
        // A lease that ran out is taken from its worker, which would never apply this.
        transaction
            .execute(LAPSED_LEASE_ENDS, params![run_id])
            .map_err(backend)?;
        transaction
                .execute(
                    "INSERT INTO reins_decisions (run_id, internal_call_id, decision, decided_at)
                     VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (run_id, internal_call_id) DO UPDATE SET decision = ?3, decided_at = ?4",
                    params![run_id, call_id, json, recorded.decided_at_ms],
                )
                .map_err(backend)?;
        transaction
                .execute(
                    "INSERT INTO reins_decision_log (run_id, seq, internal_call_id, record, decided_at)
                     SELECT ?1, COALESCE(MAX(seq), 0) + 1, ?2, ?3, ?4 FROM reins_decision_log WHERE run_id = ?1",
                    params![run_id, call_id, json, recorded.decided_at_ms],
                )
                .map_err(backend)?;
        transaction.commit().map_err(backend)?;
        Ok(recorded)
    }
}

/// Appends a decision the run made while `lease` holds it to its decision log (not to the
/// decisions a claim applies), if the lease is current.
pub(super) fn log_decision(lease: &Lease, decision: &Decision) -> impl Work<RecordedDecision> {
    let recorded = decided_during_run(lease, decision, now_millis());
    let (version, token) = (lease.version, lease.token.clone());
    move |connection: &mut Connection| {
        let json = encode_decision(&recorded)?;
        let run_id = &recorded.run_id;
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        let held = transaction
            .query_row(
                "SELECT 1 FROM reins_runs WHERE run_id = ?1 AND version = ?2 AND lease_token = ?3",
                params![run_id, version, token],
                |_| Ok(()),
            )
            .optional()
            .map_err(backend)?;
        if held.is_none() {
            return Err(StoreError::Conflict {
                run_id: run_id.clone(),
                expected: version,
            });
        }
        transaction
                .execute(
                    "INSERT INTO reins_decision_log (run_id, seq, internal_call_id, record, decided_at)
                     SELECT ?1, COALESCE(MAX(seq), 0) + 1, ?2, ?3, ?4 FROM reins_decision_log WHERE run_id = ?1",
                    params![run_id, recorded.decision.internal_call_id, json, recorded.decided_at_ms],
                )
                .map_err(backend)?;
        transaction.commit().map_err(backend)?;
        Ok(recorded)
    }
}
