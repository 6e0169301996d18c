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

pub use crate::agent::{
    Agent, AgentBuilder, AgentHook, CompletionCallAction, CompletionCallEvent, DispatchAction,
    DispatchEvent, Flow, HookContext, ModelTurnAction, ModelTurnFinished, OutcomeAction,
    OutcomeEvent, PromptError, RequestPatch, StepEvent, StreamItem,
};
pub use crate::completion::{BoxedModel, CompletionModel};
pub use crate::message::{Message, ToolChoice};
pub use crate::tool::{Tool, tool_fn};
