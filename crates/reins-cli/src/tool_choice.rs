//! `[hooks.tool_choice]`: the tool choice of the first turn and of later turns. A small local
//! model picks a tool reliably only when made to (`first_turn = "required"`), and answers
//! after its tool result only when it may not call another (`later_turns = "none"`).

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
}

impl ToolChoiceHook {
    /// The hook of a checked `[hooks.tool_choice]`.
    pub fn new(config: &ToolChoiceConfig) -> Self {
        ToolChoiceHook {
            first: config.first_turn.as_ref().map(|c| parse(c.get_ref())),
            later: config.later_turns.as_ref().map(|c| parse(c.get_ref())),
        }
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
        _event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        let choice = if ctx.turn() <= 1 {
            &self.first
        } else {
            &self.later
        };
        match choice {
            Some(choice) => {
                CompletionCallAction::patch(RequestPatch::new().tool_choice(choice.clone()))
            }
            None => CompletionCallAction::continue_run(),
        }
    }
}
