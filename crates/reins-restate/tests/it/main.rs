//! reins-restate against a real Restate server (installed by scripts/install/restate.sh) and
//! demo worker processes, all started on loopback by the tests.

mod approvals;
mod auth;
mod cancellation;
mod decisions;
mod embedded;
mod failover;
mod harness;
mod identity;
mod in_doubt;
mod ingress;
mod limits;
mod many_runs;
mod redaction;
mod state;
mod tool_usage;
mod unknown;
