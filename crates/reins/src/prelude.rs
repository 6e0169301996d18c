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

pub use crate::agent::{
    Agent, AgentBuilder, AgentHook, CompletionCallAction, CompletionCallEvent, DispatchAction,
    DispatchEvent, HookContext, ModelTurnAction, ModelTurnFinished, OutcomeAction, OutcomeEvent,
    PromptError, RequestPatch, StepEvent, StreamItem,
};
pub use crate::completion::{BoxedModel, CompletionModel};
pub use crate::message::{Message, ToolChoice};
pub use crate::tool::{Tool, tool_fn};
