//! Ready-made hooks: the policies users would otherwise write by hand, each configurable and
//! composing with the others and with your own hooks under the usual rules (register several
//! with [`AgentBuilder::add_hook`](crate::agent::AgentBuilder::add_hook); agent hooks run
//! before a run's own, in order).
//!
//! - [`approval`]: allow, deny, ask a person (or any async decider) or suspend a tool call, by
//!   tool name, arguments or what the tool says about itself; fail closed.
//! - [`audit`]: one JSON line per dispatch and outcome, to any writer or an appended file.
//! - [`budget`]: tokens, cost (prompt-cache reads and writes at their own prices), model
//!   calls, tool calls and wall time, checked before each call; past a limit, a typed stop or
//!   a switch to a cheaper model.
//! - [`fallback`]: a turn whose model call failed (or answered nothing) is served by the
//!   next model of a chain.
//! - [`cache`]: model turns served from a cache keyed by the model and the request, without
//!   calling the model; recorded to a file and replayed for deterministic runs.
//! - [`invalid_calls`]: a tool call the model misnamed (`SaveNote`, `functions.save_note`)
//!   repaired to the one tool it plainly means; any other call to a tool it may not call
//!   answered with the tools it may, and the model asked again.
//! - [`loop_breaker`]: the same tool with the same arguments (all of them, the ones you
//!   choose, or none) too many times in a row gets feedback instead of running, then a
//!   typed stop.
//! - [`guardrail`]: checks (closures or async classifiers) on the input, each answer and tool
//!   arguments: rewrite, retry with feedback, skip, or trip with a typed reason.
//! - [`redaction`]: API keys, tokens, emails, card numbers and your own secrets (in base64
//!   too) masked in tool results and in every request sent to the model.
//! - [`tool_choice`]: the tool choice of the first turn and of later turns, the first turn's
//!   tool picked by the words the prompt mentions (for small models).
//!
//! # Composing them
//!
//! Hooks of one kind run in the order they were added, and a hook that ends a chain (a
//! refused call, a tripped check) hides what it ended from the hooks after it. So the order
//! matters; the `reins` command adds its file's hooks in this one, each for a reason:
//!
//! 1. [`guardrail::Guardrails`]: a tripped input check stops the run before anything is
//!    spent, and a tool-argument rewrite happens before anyone judges the arguments;
//! 2. [`redaction::Redaction`]: after every hook that changes a request (it masks the request
//!    as sent), before every hook that should not see the secrets in a tool's result;
//! 3. [`budget::Budget`]: a call past the budget is refused before a person is asked about it;
//! 4. [`approval::ApprovalPolicy`]: after every hook that rewrites arguments, so it decides on
//!    those that will run;
//! 5. [`audit::AuditLog`]: last, so it logs every call's outcome as the others left it (a
//!    refused call's too, with how the policy decided it), the secrets masked.
//!
//! ```
//! use reins::agent::AgentBuilder;
//! use reins::hooks::approval::{ApprovalPolicy, Decision, Rule, decider_fn};
//! use reins::hooks::audit::AuditLog;
//! use reins::hooks::budget::Budget;
//! use reins::hooks::guardrail::{Guardrails, MaxLength};
//! use reins::hooks::redaction::Redaction;
//! use reins::testing::{ScriptedModel, Turn};
//! use reins::tool::tool_fn;
//! use serde_json::{Value, json};
//! use std::sync::{Arc, Mutex};
//!
//! /// An audit log's destination that the example reads back.
//! #[derive(Clone, Default)]
//! struct Lines(Arc<Mutex<Vec<u8>>>);
//!
//! impl std::io::Write for Lines {
//!     fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
//!         self.0.lock().unwrap().extend_from_slice(bytes);
//!         Ok(bytes.len())
//!     }
//!     fn flush(&mut self) -> std::io::Result<()> {
//!         Ok(())
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let lookup = tool_fn("lookup", "Finds a customer.", |_: Value| async {
//!     Ok::<_, std::convert::Infallible>("Ada, ada@example.com")
//! });
//! let refund = tool_fn("refund", "Refunds an order.", |_: Value| async {
//!     Ok::<_, std::convert::Infallible>("refunded")
//! });
//! let model = ScriptedModel::new([
//!     Turn::tool_calls([("lookup", json!({"order": 7})), ("refund", json!({"order": 7}))]),
//!     Turn::text("Ada's refund needs a manager."),
//! ]);
//! let log = Lines::default();
//! let agent = AgentBuilder::new(model.clone())
//!     .tool(lookup)
//!     .tool(refund)
//!     .add_hook(Guardrails::new().input("length", MaxLength::chars(2_000)))
//!     .add_hook(Redaction::new())
//!     .add_hook(Budget::new().max_model_calls(5).max_tool_calls(10))
//!     .add_hook(
//!         ApprovalPolicy::new()
//!             .rule(Rule::allow("lookup"))
//!             .rule(Rule::ask("refund"))
//!             // A person would answer (a `ChannelDecider`, a `TerminalDecider`); this refuses.
//!             .decider(decider_fn(|_request| async { Decision::deny("needs a manager") })),
//!     )
//!     .add_hook(AuditLog::new(log.clone()))
//!     .build();
//! agent.prompt("Refund order 7.").await?;
//!
//! // The model read the lookup masked, and the refusal.
//! let results: Vec<String> =
//!     model.requests()[1].history.iter().skip(2).map(|message| message.text()).collect();
//! assert_eq!(results, ["Ada, [REDACTED:email]", "needs a manager"]);
//! // The audit log has each call's outcome, the refund's with how the policy decided it.
//! let text = String::from_utf8(log.0.lock().unwrap().clone())?;
//! let lines: Vec<Value> = text.lines().map(serde_json::from_str).collect::<Result<_, _>>()?;
//! let refund = lines.iter().find(|line| line["event"] == "outcome" && line["tool"] == "refund");
//! assert_eq!(refund.unwrap()["approval"]["verdict"], "deny");
//! assert!(!text.contains("ada@example.com"));
//! # Ok(())
//! # }
//! ```

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
