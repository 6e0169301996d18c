//! [`PromptResponse`]: a finished run, as the awaited, streamed and typed forms all return it.

use crate::completion::Usage;
use crate::message::{Message, ToolResultMessage};
use crate::run::{Entry, RunState};

/// A finished run: the answer, and the run's final state. Awaiting
/// [`PromptRequest::extended_details`](super::PromptRequest::extended_details) gives one.
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::completion::Usage;
/// use reins::testing::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([
///     Turn::tool_call("roll", json!({})).usage(Usage::new(30, 5)),
///     Turn::text("You rolled a 4.").usage(Usage::new(45, 6)),
/// ]);
/// let roll = reins::tool::tool_fn("roll", "Rolls a die.", |_: serde_json::Value| async move {
///     Ok::<_, std::convert::Infallible>(4)
/// });
/// let agent = AgentBuilder::new(model).tool(roll).build();
/// let run = agent.prompt("Roll a die.").run_id("dice-7").extended_details().await.unwrap();
///
/// assert_eq!(run.output, "You rolled a 4.");
/// assert_eq!(run.run_id(), "dice-7");
/// assert_eq!(run.turns(), 2);
/// assert_eq!((run.usage().input_tokens, run.usage().output_tokens), (75, 11));
/// assert_eq!(run.tool_results().count(), 1);
/// // The whole run as one serializable value, to keep or to resume from.
/// let saved = serde_json::to_string(&run.state).unwrap();
/// assert!(saved.contains("dice-7"));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct PromptResponse {
    /// The final answer text.
    pub output: String,
    /// The run's final state: history, usage, turns, entries and id.
    pub state: RunState,
}

impl PromptResponse {
    /// The run's id.
    pub fn run_id(&self) -> &str {
        &self.state.run_id
    }

    /// The whole conversation, prompt and final answer included.
    pub fn history(&self) -> &[Message] {
        &self.state.history
    }

    /// Every tool result the model was given during the run, in order: what each call
    /// answered (after hooks' rewrites), skipped and denied calls included.
    ///
    /// ```
    /// use reins::agent::AgentBuilder;
    /// use reins::testing::{ScriptedModel, Turn};
    /// use reins::tool::tool_fn;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Number { n: i64 }
    ///
    /// let model = ScriptedModel::new([
    ///     Turn::tool_call("double", serde_json::json!({"n": 21})),
    ///     Turn::text("42"),
    /// ]);
    /// let double = tool_fn("double", "Doubles a number.", |x: Number| async move {
    ///     Ok::<_, std::convert::Infallible>(x.n * 2)
    /// });
    /// let agent = AgentBuilder::new(model).tool(double).build();
    /// let run = agent.prompt("Double 21.").extended_details().await.unwrap();
    /// let results: Vec<_> = run.tool_results().map(|r| (r.tool_name.as_str(), r.content.as_str())).collect();
    /// assert_eq!(results, [("double", "42")]);
    /// # }
    /// ```
    pub fn tool_results(&self) -> impl Iterator<Item = &ToolResultMessage> {
        self.state
            .history
            .iter()
            .filter_map(|message| match message {
                Message::Tool(result) => Some(result),
                _ => None,
            })
    }

    /// Tokens used by the run.
    pub fn usage(&self) -> Usage {
        self.state.usage
    }

    /// The number of model calls the run made.
    pub fn turns(&self) -> usize {
        self.state.turn
    }

    /// Entries hooks recorded during the run.
    pub fn entries(&self) -> &[Entry] {
        &self.state.entries
    }
}
