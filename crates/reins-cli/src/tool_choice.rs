//! `[hooks.tool_choice]`: the tool choice of the first turn and of later turns. A small local
//! model picks a tool reliably only when made to (`first_turn = "required"`), and answers
//! after its tool result only when it may not call another (`later_turns = "none"`). Routes
//! pick turn 1's tool by what the prompt mentions, so one agent serves several flows.

use crate::config::ToolChoiceConfig;
use reins::agent::{
    AgentHook, CompletionCallAction, CompletionCallEvent, HookContext, RequestPatch,
};
use reins::message::ToolChoice;

/// Sets the request's tool choice by turn.
#[derive(Debug, Clone)]
pub struct ToolChoiceHook {
    first: Option<ToolChoice>,
    later: Option<ToolChoice>,
    /// (lowercased words, choice), first match wins.
    routes: Vec<(Vec<String>, ToolChoice)>,
}

impl ToolChoiceHook {
    /// The hook of a checked `[hooks.tool_choice]`.
    pub fn new(config: &ToolChoiceConfig) -> Self {
        ToolChoiceHook {
            first: config.first_turn.as_ref().map(|c| parse(c.get_ref())),
            later: config.later_turns.as_ref().map(|c| parse(c.get_ref())),
            routes: config
                .routes
                .iter()
                .map(|route| {
                    let words = route
                        .prompt_mentions
                        .iter()
                        .map(|word| word.to_lowercase())
                        .collect();
                    (words, parse(route.first_turn.get_ref()))
                })
                .collect(),
        }
    }

    /// Turn 1's choice for `prompt`.
    fn first_for(&self, prompt: &str) -> Option<&ToolChoice> {
        let prompt = prompt.to_lowercase();
        self.routes
            .iter()
            .find(|(words, _)| words.iter().any(|word| prompt.contains(word.as_str())))
            .map(|(_, choice)| choice)
            .or(self.first.as_ref())
    }
}

/// `auto`, `required`, `none`, or a tool's name.
pub fn parse(text: &str) -> ToolChoice {
    match text {
        "auto" => ToolChoice::Auto,
        "required" => ToolChoice::Required,
        "none" => ToolChoice::None,
        tool => ToolChoice::Specific(tool.to_owned()),
    }
}

impl AgentHook for ToolChoiceHook {
    async fn on_completion_call(
        &self,
        ctx: &HookContext,
        event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        let choice = if ctx.turn() <= 1 {
            self.first_for(&event.prompt.text())
        } else {
            self.later.as_ref()
        };
        match choice {
            Some(choice) => {
                CompletionCallAction::patch(RequestPatch::new().tool_choice(choice.clone()))
            }
            None => CompletionCallAction::continue_run(),
        }
    }
}
