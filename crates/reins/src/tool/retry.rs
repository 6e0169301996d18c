use serde::{Deserialize, Serialize};

/// Whether a tool call may be executed again when it is not known whether it already ran.
///
/// A durable run journals the start of every tool call before the tool executes. After a
/// crash, a call that started and has no recorded result is *in doubt*: its side effect may or
/// may not have happened. The resumed run executes it again on its own only when the tool
/// declares here that a second execution is harmless; otherwise the run suspends with the
/// call in doubt until a person (through [`RunStore::decide`](crate::store::RunStore::decide))
/// chooses to re-run it, skip it, or supply its result.
///
/// ```
/// use reins::tool::{RetrySafety, ToolCallContext, tool_fn};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Charge { cents: u64 }
///
/// // The payment service keeps one charge per idempotency key, so a call in doubt may run again.
/// let charge = tool_fn("charge", "Charges the card.", |args: Charge| async move {
///     let key = ToolCallContext::current().map(|call| call.effect_id());
///     Ok::<_, String>(format!("charged {} cents (key {key:?})", args.cents))
/// })
/// .retry_safety(RetrySafety::DeduplicatesByEffectId);
/// # let _ = charge;
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetrySafety {
    /// Nothing is declared: a second execution may repeat the side effect, so a call in doubt
    /// waits for a decision. The default.
    #[default]
    Undeclared,
    /// Executing the call twice with the same arguments has the effect of executing it once
    /// (a read, a "set to", an upsert).
    Idempotent,
    /// The tool passes the call's [`effect_id`](super::ToolCallContext::effect_id) to the
    /// service it calls as an idempotency key, so the service performs the effect once.
    DeduplicatesByEffectId,
}

impl RetrySafety {
    /// Whether a call in doubt may be executed again without asking anyone.
    pub fn allows_reexecution(self) -> bool {
        !matches!(self, RetrySafety::Undeclared)
    }
}
