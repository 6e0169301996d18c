//! The first decision about a suspended call is the only one: `decide` claims the call's
//! awakeable here before it resolves it, and a second decision is refused.
//!
//! Why a virtual object: `decide` is a shared handler and cannot write the run's state, and
//! Restate drops the second resolution of an awakeable without telling whoever sent it, so
//! two people deciding the same call would both be told their decision was taken. An
//! exclusive handler of an object keyed by the run id runs one call at a time: its claim is
//! the atomic check. It is private to the ingress (only `decide` and the run call it).

use restate_sdk::prelude::*;

/// The claimed awakeables of one run (the object's key is the run id).
pub(crate) struct DecisionClaims;

#[restate_sdk::object(name = "ReinsAgentDecisions")]
impl DecisionClaims {
    /// Claims `awakeable` for one decision: true the first time, false ever after.
    #[handler]
    async fn claim(&self, ctx: ObjectContext<'_>, awakeable: String) -> Result<bool, HandlerError> {
        if ctx.get::<bool>(&awakeable).await?.is_some() {
            return Ok(false);
        }
        ctx.set(&awakeable, true);
        Ok(true)
    }

    /// Drops the run's claims once it has ended: its awakeables wait no more, and a
    /// decision about them is refused by `decide` before it claims.
    #[handler]
    async fn forget(&self, ctx: ObjectContext<'_>) -> Result<(), HandlerError> {
        ctx.clear_all();
        Ok(())
    }
}
