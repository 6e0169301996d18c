//! [`StreamItem`]: what a streamed run hands its consumer, one item at a time.

use super::response::PromptResponse;
use crate::tool::ToolOutcome;

/// One item of a streamed run.
///
/// Text arrives before its turn is accepted, so a consumer that shows it as it comes
/// withdraws a turn the run discards ([`TurnDiscarded`](Self::TurnDiscarded)): here a hook
/// asks again after an answer cut short by the token limit.
///
/// ```
/// use futures::StreamExt;
/// use reins::completion::FinishReason;
/// use reins::prelude::*;
/// use reins::testing::{ScriptedModel, Turn};
///
/// /// Asks again when the model ran out of tokens.
/// struct Complete;
///
/// impl AgentHook for Complete {
///     async fn on_model_turn_finished(&self, _: &HookContext, turn: ModelTurnFinished<'_>) -> ModelTurnAction {
///         match turn.finish_reason {
///             Some(FinishReason::Length) => ModelTurnAction::repeat(),
///             _ => ModelTurnAction::continue_run(),
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([
///     Turn::text("Once upon a").finish_reason(FinishReason::Length),
///     Turn::text("Once upon a time, the end."),
/// ]);
/// let agent = AgentBuilder::new(model).add_hook(Complete).build();
///
/// let mut shown = String::new();
/// let mut stream = agent.prompt("Tell me a very short story.").stream();
/// while let Some(item) = stream.next().await {
///     match item.expect("the run succeeds") {
///         StreamItem::Text(delta) => shown.push_str(&delta),
///         // The truncated turn is withdrawn from the screen.
///         StreamItem::TurnDiscarded { .. } => shown.clear(),
///         _ => {}
///     }
/// }
/// assert_eq!(shown, "Once upon a time, the end.");
/// # }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum StreamItem {
    /// A fragment of answer text (provisional until the turn is accepted).
    Text(String),
    /// A fragment of reasoning.
    Reasoning(String),
    /// A fragment of a tool call's arguments.
    ToolCallDelta {
        /// The provider's id of the call.
        tool_call_id: String,
        /// reins' id of the call.
        internal_call_id: String,
        /// The tool's name, on the first fragment of the call.
        tool_name: Option<String>,
        /// The new fragment.
        delta: String,
    },
    /// The turn streamed so far is not the run's answer: text streamed for it is withdrawn.
    /// Sent when a hook asks again (`repeat`, or `retry_with_feedback`, whose turn the model
    /// still sees), when a hook stops the run on the turn (a delta hook mid-turn, or
    /// `on_model_turn_finished`; before the error), when the run
    /// asks again after invalid tool calls, and when a failed or replaced model call is
    /// retried on another model.
    TurnDiscarded {
        /// The one-based index of the discarded model call.
        turn: usize,
    },
    /// A tool call finished and the model will see `result`.
    ToolResult {
        /// The provider's id of the call.
        tool_call_id: String,
        /// The tool that was called.
        tool_name: String,
        /// The model-visible result.
        result: String,
        /// The structured outcome.
        outcome: ToolOutcome,
    },
    /// The run finished; always the last item of a successful run. (Boxed: the response is
    /// large and every other item is small.)
    Final(Box<PromptResponse>),
}
