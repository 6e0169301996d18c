//! Ready-made hooks: the policies users would otherwise write by hand, each configurable and
//! composing with the others and with your own hooks under the usual rules (register several
//! with [`AgentBuilder::add_hook`](crate::agent::AgentBuilder::add_hook); agent hooks run
//! before a run's own, in order).
//!
//! - [`approval`]: allow, deny, ask a person (or any async decider) or suspend a tool call, by
//!   tool name, arguments or what the tool says about itself; fail closed.
//! - [`audit`]: one JSON line per dispatch and outcome, to any writer or an appended file.
//! - [`budget`]: tokens, cost, model calls, tool calls and wall time, checked before each call;
//!   past a limit, a typed stop or a switch to a cheaper model.
//! - [`fallback`]: a turn whose model call failed (or answered nothing) is served by the
//!   next model of a chain.
//! - [`cache`]: model turns served from a cache keyed by the model and the request, without
//!   calling the model; recorded to a file and replayed for deterministic runs.
//! - [`invalid_calls`]: a tool call the model misnamed (`SaveNote`, `functions.save_note`)
//!   repaired to the one tool it plainly means; any other call to a tool it may not call
//!   answered with the tools it may, and the model asked again.
//! - [`loop_breaker`]: the same tool with the same arguments too many times in a row gets
//!   feedback instead of running, then a typed stop.
//! - [`guardrail`]: checks (closures or async classifiers) on the input, each answer and tool
//!   arguments: rewrite, retry with feedback, skip, or trip with a typed reason.
//! - [`redaction`]: API keys, tokens, emails, card numbers and your own secrets masked in tool
//!   results and in every request sent to the model.
//! - [`tool_choice`]: the tool choice of the first turn and of later turns, the first turn's
//!   tool picked by the words the prompt mentions (for small models).

pub mod approval;
pub mod audit;
pub mod budget;
pub mod cache;
pub mod fallback;
pub mod guardrail;
#[cfg(test)]
mod inline_answers;
pub mod invalid_calls;
pub mod loop_breaker;
mod recorded;
pub mod redaction;
pub mod tool_choice;

/// The typed stop a ready-made hook ended a run with (`BudgetExceeded`, `LoopDetected`,
/// `GuardrailTripped`, `CacheMiss`, `OutdatedRecording`), read back from the error's
/// [`StopReason`] cause.
///
/// [`StopReason`]: crate::agent::StopReason
fn stopped_by<E: std::error::Error + Clone + 'static>(
    error: &crate::agent::PromptError,
) -> Option<E> {
    error.stopped_by::<E>().cloned()
}

/// Hooks the tests of several ready-made hooks share.
#[cfg(test)]
mod test_support {
    use crate::agent::{AgentHook, DispatchAction, DispatchEvent, HookContext};

    /// Suspends every call to `pay`.
    pub(crate) struct NeedsApproval;

    impl AgentHook for NeedsApproval {
        async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
            match event.tool_name() {
                Some("pay") => DispatchAction::suspend("needs a person"),
                _ => DispatchAction::proceed(),
            }
        }
    }
}
