//! `[hooks.tool_choice]` made into the ready-made hook, and its tool names checked against the
//! tools the agent has: by `reins check` when the file defines every tool, by `reins run` after
//! connecting to the MCP servers (whose tools are only known then).

use super::diagnostic::Diagnostic;
use super::{LoadedAgent, ToolChoiceConfig};
use reins::hooks::tool_choice::ToolChoiceByTurn;
use reins::message::ToolChoice;
use std::collections::BTreeSet;
use toml::Spanned;

/// The choices that are not a tool's name.
const KEYWORDS: [&str; 3] = ["auto", "required", "none"];

impl ToolChoiceConfig {
    /// The ready-made hook this table describes.
    pub fn hook(&self) -> ToolChoiceByTurn {
        let mut hook = ToolChoiceByTurn::new();
        if let Some(choice) = &self.first_turn {
            hook = hook.first_turn(parse(choice.get_ref()));
        }
        if let Some(choice) = &self.later_turns {
            hook = hook.later_turns(parse(choice.get_ref()));
        }
        for route in &self.routes {
            hook = hook.route(&route.prompt_mentions, parse(route.first_turn.get_ref()));
        }
        hook
    }

    /// Every choice of the table with what it is, for people: `first_turn`, `later_turns`
    /// and each route.
    fn choices(&self) -> Vec<(String, &Spanned<String>)> {
        let mut choices = Vec::new();
        if let Some(choice) = &self.first_turn {
            choices.push(("`first_turn`".to_owned(), choice));
        }
        if let Some(choice) = &self.later_turns {
            choices.push(("`later_turns`".to_owned(), choice));
        }
        for (index, route) in self.routes.iter().enumerate() {
            let words = route
                .prompt_mentions
                .iter()
                .map(|word| format!("\"{word}\""))
                .collect::<Vec<_>>()
                .join(", ");
            let what = format!("route {} (prompt mentions {words})", index + 1);
            choices.push((what, &route.first_turn));
        }
        choices
    }
}

/// `auto`, `required`, `none`, or a tool's name.
fn parse(text: &str) -> ToolChoice {
    match text {
        "auto" => ToolChoice::Auto,
        "required" => ToolChoice::Required,
        "none" => ToolChoice::None,
        tool => ToolChoice::Specific(tool.to_owned()),
    }
}

/// Each choice of `[hooks.tool_choice]` naming a tool not in `tools`, at its line, with the
/// tools that exist.
pub fn unknown_tools(agent: &LoadedAgent, tools: &BTreeSet<String>) -> Vec<Diagnostic> {
    let Some(config) = &agent.file.hooks.tool_choice else {
        return Vec::new();
    };
    let existing = existing_tools(tools);
    config
        .choices()
        .into_iter()
        .filter(|(_, choice)| {
            let name = choice.get_ref().as_str();
            !KEYWORDS.contains(&name) && !tools.contains(name)
        })
        .map(|(what, choice)| {
            agent.error_at(
                choice.span(),
                format!(
                    "[hooks.tool_choice] {what} names the tool `{}`, which the agent does not \
                     have ({existing}); use `auto`, `required`, `none` or one of its tools",
                    choice.get_ref()
                ),
            )
        })
        .collect()
}

/// The agent's tools, as a message naming a tool it lacks lists them: "its tools are `a`,
/// `b`", or "the agent has no tools".
pub fn existing_tools(tools: &BTreeSet<String>) -> String {
    if tools.is_empty() {
        return "the agent has no tools".to_owned();
    }
    let names = tools
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("its tools are {names}")
}
