//! [`ToolChoiceByTurn`]: the request's tool choice set by turn — one for the first model call,
//! another for every later one — and the first turn's tool picked by the words the prompt
//! mentions.
//!
//! Small models are its main users: one picks a tool reliably only when made to
//! ([`ToolChoice::Required`] or a named tool on turn 1), and answers after its tool result
//! only when it may not call another ([`ToolChoice::None`] on later turns). Routes let one
//! agent serve several flows: a prompt that mentions "time" goes to the clock tool, one that
//! mentions "weather" to the forecast.

#[cfg(test)]
mod tests;

use crate::agent::{
    AgentHook, CompletionCallAction, CompletionCallEvent, HookContext, RequestPatch,
};
use crate::message::ToolChoice;

/// Sets each model request's tool choice by turn, the first turn's by what the prompt
/// mentions.
///
/// - Turn 1 takes the choice of the first [route](Self::route) one of whose words the prompt
///   contains (ignoring case), or else [`first_turn`](Self::first_turn).
/// - Every later turn takes [`later_turns`](Self::later_turns).
/// - A turn with nothing configured is left alone: the agent's own tool choice applies.
///
/// The choice is returned as a [`RequestPatch`], so it composes with other hooks under the
/// merge rule: when several hooks set `tool_choice` on one turn, the hook registered later
/// wins. The hook keeps no state, so one serves any number of concurrent runs.
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::hooks::tool_choice::ToolChoiceByTurn;
/// use reins::message::ToolChoice;
/// use reins::testing::{ScriptedModel, Turn};
/// use reins::tool::tool_fn;
/// use serde_json::json;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct NoArgs {}
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let now = tool_fn("now", "The current time.", |_: NoArgs| async {
///     Ok::<_, std::convert::Infallible>("12:00".to_owned())
/// });
/// let model = ScriptedModel::new([Turn::tool_call("now", json!({})), Turn::text("Noon.")]);
/// let agent = AgentBuilder::new(model.clone())
///     .tool(now)
///     .add_hook(
///         ToolChoiceByTurn::new()
///             .first_turn(ToolChoice::Required)
///             .route(["time", "clock"], ToolChoice::Specific("now".into()))
///             .later_turns(ToolChoice::None),
///     )
///     .build();
///
/// agent.prompt("What TIME is it?").await.unwrap();
/// let choices: Vec<_> = model.requests().iter().map(|r| r.tool_choice.clone()).collect();
/// // Turn 1 follows the route the prompt matched; turn 2 may only answer.
/// assert_eq!(choices, [Some(ToolChoice::Specific("now".into())), Some(ToolChoice::None)]);
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct ToolChoiceByTurn {
    first_turn: Option<ToolChoice>,
    later_turns: Option<ToolChoice>,
    routes: Vec<PromptRoute>,
}

/// A first-turn choice for prompts that mention one of some words.
#[derive(Debug, Clone)]
struct PromptRoute {
    /// Lowercased, so that matching ignores case.
    words: Vec<String>,
    choice: ToolChoice,
}

impl ToolChoiceByTurn {
    /// A hook that changes nothing until told what to choose.
    pub fn new() -> Self {
        ToolChoiceByTurn::default()
    }

    /// The choice of the first model call of a run whose prompt no route matches.
    pub fn first_turn(mut self, choice: ToolChoice) -> Self {
        self.first_turn = Some(choice);
        self
    }

    /// The choice of every model call after the first.
    pub fn later_turns(mut self, choice: ToolChoice) -> Self {
        self.later_turns = Some(choice);
        self
    }

    /// The first model call of a run whose prompt contains one of `words` (ignoring case)
    /// takes `choice`. Routes are tried in the order they were added; the first match wins.
    /// A route with no words matches no prompt.
    pub fn route<I, S>(mut self, words: I, choice: ToolChoice) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let words = words
            .into_iter()
            .map(|word| word.as_ref().to_lowercase())
            .filter(|word| !word.is_empty())
            .collect();
        self.routes.push(PromptRoute { words, choice });
        self
    }

    /// The choice for model call `turn` (one-based) of a run prompted with `prompt`, or
    /// `None` when this hook leaves that turn alone.
    pub fn choice_for(&self, turn: usize, prompt: &str) -> Option<&ToolChoice> {
        if turn > 1 {
            return self.later_turns.as_ref();
        }
        let prompt = prompt.to_lowercase();
        self.routes
            .iter()
            .find(|route| {
                route
                    .words
                    .iter()
                    .any(|word| prompt.contains(word.as_str()))
            })
            .map(|route| &route.choice)
            .or(self.first_turn.as_ref())
    }
}

impl AgentHook for ToolChoiceByTurn {
    async fn on_completion_call(
        &self,
        _ctx: &HookContext,
        event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        match self.choice_for(event.turn, &event.prompt.text()) {
            Some(choice) => {
                CompletionCallAction::patch(RequestPatch::new().tool_choice(choice.clone()))
            }
            None => CompletionCallAction::continue_run(),
        }
    }
}
