//! The PostgreSQL store's clock: the database server's, never the worker's. Workers on many
//! machines share the runs, and their clocks disagree; the server's is the one clock they
//! all see. Every time the store writes (`lease_until`, `updated_at`, `created_at`, a
//! checkpoint's `created_at`, a decision's `decided_at`) and every time it compares a lease
//! with (a claim, a decision, a listing's lease holders, `expire`'s cutoff) is read from
//! the server in the statement that uses it, so a worker whose clock runs ahead neither
//! takes a run whose lease is live nor writes a lease that lasts longer for the others than
//! the store's lease (nor, behind, one already run out).
//!
//! `clock_timestamp()`, not `now()`: `now()` is when the transaction began, before the wait
//! for a run's row lock (`FOR UPDATE`) and before the statements ahead of it; a lease judged
//! by it would be judged at an earlier moment, and a lease written from it would be shorter
//! by the wait. `clock_timestamp()` is read as the statement computes its rows. (A row locked
//! by a transaction that then leaves it unchanged is computed before that wait: the lease is
//! then judged live a moment longer and written a moment shorter, never the other way
//! round.) A listing reads `statement_timestamp()`, one reading for all its rows, as a
//! listing in the other stores judges every lease at one moment; so does `expire`, whose
//! cutoff, a constant, the index on `updated_at` can serve (the statement's start, before
//! any lock wait, expires no run earlier than asked).

/// The server's clock as the statement computes it, in milliseconds since the Unix epoch,
/// as an SQL expression: a macro, so that statements can be `concat!`ed at compile time.
macro_rules! server_now {
    () => {
        "(extract(epoch from clock_timestamp()) * 1000)::bigint"
    };
}
pub(super) use server_now;

/// The server's clock at the start of the statement (the same for every row), in
/// milliseconds since the Unix epoch, as an SQL expression: what a listing judges leases by.
macro_rules! statement_now {
    () => {
        "(extract(epoch from statement_timestamp()) * 1000)::bigint"
    };
}
pub(super) use statement_now;
