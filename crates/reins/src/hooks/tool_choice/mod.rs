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
use crate::message::{Message, ToolChoice};

/// Sets each model request's tool choice by turn, the first turn's by what the prompt
/// mentions.
///
/// - The first turn takes the choice of the first [route](Self::route) one of whose words the
///   prompt mentions (as a whole word, ignoring case), or else
///   [`first_turn`](Self::first_turn).
/// - Every later turn takes [`later_turns`](Self::later_turns).
/// - A turn with nothing configured is left alone: the agent's own tool choice applies.
///
/// The first turn lasts until a tool result enters the run's history, not one model call: a
/// first call asked again (an invalid tool call retried with
/// [`InvalidToolCallAction::retry`](crate::agent::InvalidToolCallAction::retry), a
/// [`repeat`](crate::agent::ModelTurnAction::repeat), a guardrail's feedback) goes out with
/// the first turn's choice again, picked by the run's prompt rather than by the feedback
/// that now ends the history. The first call's choice is kept for that in the run's
/// scratchpad; a durable run resumed in another process, which has lost the scratchpad, has
/// its tool results by then and is past its first turn.
///
/// The choice is returned as a [`RequestPatch`], so it composes with other hooks under the
/// merge rule: when several hooks set `tool_choice` on one turn, the hook registered later
/// wins. Per-run state lives in the run's scratchpad, so one hook serves any number of
/// concurrent runs.
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

    /// The first turn of a run whose prompt mentions one of `words` takes `choice`. A word
    /// (or a phrase of several) matches as a whole word, ignoring case: `"time"` matches
    /// "What time is it?" and "TIME?", not "sometimes" or "times", so give inflected forms
    /// as words of their own. Routes are tried in the order they were added; the first match
    /// wins. A route with no words matches no prompt.
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

    /// The choice for turn `turn` (one-based: 1 is the first turn, and any higher number a
    /// later one) of a run prompted with `prompt`, or `None` when this hook leaves that turn
    /// alone. (The hook counts a first call asked again as the first turn still: see
    /// [`ToolChoiceByTurn`].)
    pub fn choice_for(&self, turn: usize, prompt: &str) -> Option<&ToolChoice> {
        if turn > 1 {
            return self.later_turns.as_ref();
        }
        let prompt = prompt.to_lowercase();
        self.routes
            .iter()
            .find(|route| route.words.iter().any(|word| mentions(&prompt, word)))
            .map(|route| &route.choice)
            .or(self.first_turn.as_ref())
    }
}

/// Whether `text` holds `word` as a whole word: not inside a longer word, so a route for
/// "time" is not taken by "sometimes".
fn mentions(text: &str, word: &str) -> bool {
    let is_word_char = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(start, found)| {
        let before = text[..start].chars().next_back();
        let after = text[start + found.len()..].chars().next();
        let starts_word = word.chars().next().is_some_and(is_word_char);
        let ends_word = word.chars().next_back().is_some_and(is_word_char);
        let joined_before = starts_word && before.is_some_and(is_word_char);
        let joined_after = ends_word && after.is_some_and(is_word_char);
        !joined_before && !joined_after
    })
}

/// The run's first call, in the run's scratchpad: a first call asked again is answered by
/// the first prompt again. (The prompt, not a choice: every `ToolChoiceByTurn` of the run
/// reads it, each choosing by its own routes.)
#[derive(Clone)]
struct FirstTurn {
    /// The length of the history the first call sent, its prompt included: a tool result
    /// past it ends the first turn.
    sent: usize,
    /// The first call's prompt, as the routes read it.
    prompt: String,
}

impl FirstTurn {
    /// Whether the call of `event` asks the first turn again: no tool result has entered the
    /// history since the first call.
    fn asked_again_in(&self, event: &CompletionCallEvent<'_>) -> bool {
        if event.history.len() + 1 == self.sent {
            // The same history: the first call repeated.
            return true;
        }
        match event.history.get(self.sent..) {
            Some(since) => !since.iter().chain([event.prompt]).any(is_tool_result),
            // Shorter than the first call's: a hook replaced it, and the run has moved on.
            None => false,
        }
    }
}

fn is_tool_result(message: &Message) -> bool {
    matches!(message, Message::Tool(_))
}

impl AgentHook for ToolChoiceByTurn {
    async fn on_completion_call(
        &self,
        ctx: &HookContext,
        event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        let choice = if event.turn <= 1 {
            let prompt = event.prompt.text();
            let choice = self.choice_for(1, &prompt).cloned();
            ctx.scratchpad().set(FirstTurn {
                sent: event.history.len() + 1,
                prompt,
            });
            choice
        } else {
            match ctx.scratchpad().get::<FirstTurn>() {
                Some(first) if first.asked_again_in(&event) => {
                    self.choice_for(1, &first.prompt).cloned()
                }
                _ => self.later_turns.clone(),
            }
        };
        match choice {
            Some(choice) => CompletionCallAction::patch(RequestPatch::new().tool_choice(choice)),
            None => CompletionCallAction::continue_run(),
        }
    }
}
