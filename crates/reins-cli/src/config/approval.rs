//! `[hooks.approval]` rules checked against the tools the agent has: a rule whose `tool`
//! matches none of them is almost always a misspelt name, and a misspelt `ask` or `deny` rule
//! silently lets the real tool through to a later rule (often `{ tool = "*", action =
//! "allow" }`). Checked by `reins check` when the file defines every tool, and by `reins
//! run` (and every command that runs the agent) after connecting to the MCP servers, whose
//! tools are only known then, before the first model call.

use super::LoadedAgent;
use super::diagnostic::Diagnostic;
use super::tool_choice::existing_tools;
use reins::hooks::approval::Rule;
use std::collections::BTreeSet;

/// Each approval rule matching none of `tools`, at its line, with the tools that exist. A
/// rule of only `*` is left alone: it matches whatever the agent has, even nothing.
pub fn unmatched_rules(agent: &LoadedAgent, tools: &BTreeSet<String>) -> Vec<Diagnostic> {
    let Some(approval) = &agent.file.hooks.approval else {
        return Vec::new();
    };
    let existing = existing_tools(tools);
    approval
        .rules
        .iter()
        .filter(|rule| {
            let pattern = &rule.get_ref().tool;
            let only_stars = pattern.chars().all(|c| c == '*');
            let named = Rule::allow(pattern.as_str());
            !only_stars && !tools.iter().any(|tool| named.names_tool(tool))
        })
        .map(|rule| {
            agent.error_at(
                rule.span(),
                format!(
                    "the approval rule for `{}` matches no tool of the agent ({existing}): fix \
                     the name, or the rule never applies",
                    rule.get_ref().tool
                ),
            )
        })
        .collect()
}
