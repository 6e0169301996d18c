//! The names most programs need, in one import: `use reins::prelude::*;`.
//!
//! ```
//! use reins::prelude::*;
//! use reins::testing::{ScriptedModel, Turn};
//!
//! struct Polite;
//!
//! impl AgentHook for Polite {
//!     async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
//!         match event.tool_name() {
//!             Some("delete_everything") => DispatchAction::skip("not allowed"),
//!             _ => DispatchAction::proceed(),
//!         }
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), PromptError> {
//! let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("done")]))
//!     .add_hook(Polite)
//!     .build();
//! assert_eq!(agent.prompt("tidy up").await?, "done");
//! # Ok(())
//! # }
//! ```
//!
//! A hook written against the uniform step view needs nothing more:
//!
//! ```
//! use reins::prelude::*;
//!
//! /// Logs every step of a run.
//! struct Steps;
//!
//! impl AgentHook for Steps {
//!     async fn on_event(&self, ctx: &HookContext, event: StepEvent<'_>) -> Flow {
//!         println!("{} turn {}: {:?}", ctx.run_id(), ctx.turn(), event.kind());
//!         Flow::Continue
//!     }
//! }
//! ```
//!
//! A durable run needs two more: the [`RunStore`] trait, whose methods list, decide and
//! load what a store holds, and the [`ToolDecision`] a person's decision is made of:
//!
//! ```
//! use reins::prelude::*;
//! use reins::store::{Decision, MemoryStore};
//! use reins::testing::{ScriptedModel, Turn};
//! use serde_json::json;
//!
//! /// Every tool call waits for a person (model calls, dispatched too, go on).
//! struct AskFirst;
//!
//! impl AgentHook for AskFirst {
//!     async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
//!         match event.tool_name() {
//!             Some(_) => DispatchAction::suspend("tool calls wait for a person"),
//!             None => DispatchAction::proceed(),
//!         }
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let model = ScriptedModel::new([Turn::tool_call("wipe", json!({})), Turn::text("Wiped.")]);
//! let wipe = tool_fn("wipe", "Wipes the cache.", |_: serde_json::Value| async move {
//!     Ok::<_, std::convert::Infallible>("wiped")
//! });
//! let agent = AgentBuilder::new(model).tool(wipe).add_hook(AskFirst).build();
//! let store = MemoryStore::new();
//! let paused = agent.prompt("Wipe the cache.").run_id("job").durable(store.clone()).await;
//! assert!(matches!(paused, Err(PromptError::Suspended { .. })), "{paused:?}");
//!
//! let waiting = store.pending_approvals().await?.approvals;
//! store.decide("job", &Decision::new(&waiting[0], ToolDecision::approve(), "ann")).await?;
//! assert_eq!(agent.resume_stored(store, "job").await?, "Wiped.");
//! # Ok(())
//! # }
//! ```

pub use crate::agent::{
    Agent, AgentBuilder, AgentHook, CompletionCallAction, CompletionCallEvent, DispatchAction,
    DispatchEvent, Flow, HookContext, ModelTurnAction, ModelTurnFinished, OutcomeAction,
    OutcomeEvent, PromptError, RequestPatch, StepEvent, StreamItem, ToolDecision,
};
pub use crate::completion::{BoxedModel, CompletionModel};
pub use crate::message::{Message, ToolChoice};
pub use crate::store::RunStore;
pub use crate::tool::{Tool, tool_fn};
