//! `[hooks.approval]` rules checked against the tools the agent has: a rule whose `tool`
//! matches none of them is almost always a misspelt name, and a misspelt `ask` or `deny` rule
//! silently lets the real tool through to a later rule (often `{ tool = "*", action =
//! "allow" }`). Checked by `reins check` when the file defines every tool, and by `reins
//! run` (and every command that runs the agent) after connecting to the MCP servers, whose
//! tools are only known then, before the first model call. Rules after one that matches every
//! call (`tool = "*"` without `when`) are never reached, since the first matching rule
//! decides: `reins check` refuses them too.

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

/// Each approval rule after those that match every call (a `tool` of only `*` without
/// `when`, or two of them for `read_only` and `writes` tools):
/// the first matching rule decides, so it is never reached — an `ask` placed after a `*`
/// allow lets the tool through without asking.
pub fn shadowed_rules(agent: &LoadedAgent) -> Vec<Diagnostic> {
    let Some(approval) = &agent.file.hooks.approval else {
        return Vec::new();
    };
    // `*` rules for read-only tools and for the others together match every call too.
    let (mut read_only, mut writes) = (false, false);
    let catch_all = approval.rules.iter().position(|rule| {
        let rule = rule.get_ref();
        if rule.tool.is_empty() || !rule.tool.chars().all(|c| c == '*') {
            return false;
        }
        match rule.when.as_ref().map(|when| when.get_ref().as_str()) {
            None => return true,
            Some("read_only") => read_only = true,
            Some("writes") => writes = true,
            Some(_) => {}
        }
        read_only && writes
    });
    let Some(catch_all) = catch_all else {
        return Vec::new();
    };
    let action = approval.rules[catch_all].get_ref().action.get_ref().clone();
    approval.rules[catch_all + 1..]
        .iter()
        .map(|rule| {
            agent.error_at(
                rule.span(),
                format!(
                    "the approval rule for `{}` is never reached: the `*` rules before it \
                     (the last: `{action}`) match every call, and the first matching rule \
                     decides; move it above them",
                    rule.get_ref().tool
                ),
            )
        })
        .collect()
}
