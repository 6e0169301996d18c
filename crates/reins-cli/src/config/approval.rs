//! `[hooks.approval]` rules checked against the tools the agent has: a rule whose `tool`
//! matches none of them is almost always a misspelt name, and a misspelt `ask` or `deny` rule
//! silently lets the real tool through to a later rule (often `{ tool = "*", action =
//! "allow" }`). Only checked when the file defines every tool (no MCP servers, whose tools
//! are known only once connected).

use super::LoadedAgent;
use super::diagnostic::Diagnostic;
use std::collections::BTreeSet;

/// Each approval rule matching none of `tools`, at its line, with the tools that exist. A
/// rule of only `*` is left alone: it matches whatever the agent has, even nothing.
pub fn unmatched_rules(agent: &LoadedAgent, tools: &BTreeSet<String>) -> Vec<Diagnostic> {
    let Some(approval) = &agent.file.hooks.approval else {
        return Vec::new();
    };
    let existing = if tools.is_empty() {
        "the agent has no tools".to_owned()
    } else {
        let names = tools
            .iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ");
        format!("its tools are {names}")
    };
    approval
        .rules
        .iter()
        .filter(|rule| {
            let pattern: Vec<char> = rule.get_ref().tool.chars().collect();
            let only_stars = pattern.iter().all(|&c| c == '*');
            !only_stars
                && !tools.iter().any(|tool| {
                    let name: Vec<char> = tool.chars().collect();
                    glob_matches(&pattern, &name)
                })
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

/// reins' approval glob: `*` any text, `?` one character, anything else itself (the same
/// matching, with one backtrack point at the last `*`).
fn glob_matches(pattern: &[char], name: &[char]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match (pattern.get(p), name.get(n)) {
            (Some('*'), _) => {
                star = Some((p, n));
                p += 1;
            }
            (Some(&c), Some(&m)) if c == '?' || c == m => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((star_p, star_n)) => {
                    p = star_p + 1;
                    n = star_n + 1;
                    star = Some((star_p, star_n + 1));
                }
                None => return false,
            },
        }
    }
    pattern
        .get(p..)
        .is_some_and(|rest| rest.iter().all(|&c| c == '*'))
}

#[cfg(test)]
mod tests {
    use super::glob_matches;

    fn glob(pattern: &str, name: &str) -> bool {
        let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
        glob_matches(&p, &n)
    }

    #[test]
    fn globs_match_as_reins_approval_rules_do() {
        assert!(glob("write_note", "write_note"));
        assert!(!glob("write_notes", "write_note"));
        assert!(glob("write_*", "write_note"));
        assert!(glob("*_note", "write_note"));
        assert!(glob("wr?te_note", "write_note"));
        assert!(!glob("read_*", "write_note"));
    }
}
