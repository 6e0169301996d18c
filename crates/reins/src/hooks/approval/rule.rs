use crate::tool::ToolTraits;
use serde_json::Value;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, OnceLock};

type ArgsCheck = Arc<dyn Fn(&Value) -> bool + Send + Sync>;
type TraitsCheck = Arc<dyn Fn(&ToolTraits) -> bool + Send + Sync>;

/// What a rule decides for the calls it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleOutcome {
    /// Run the call.
    Allow,
    /// Refuse the call; the model receives this message as the tool result, and the outcome
    /// is recorded as denied.
    Deny(String),
    /// Ask the policy's [`ApprovalDecider`](super::ApprovalDecider); with no decider, deny.
    Ask,
    /// End the run as suspended, holding this call for a durable decision (see
    /// [`DispatchAction::suspend`](crate::agent::DispatchAction::suspend)); the reason is
    /// kept with the pending call.
    Suspend(String),
}

/// One rule of an [`ApprovalPolicy`](super::ApprovalPolicy): which calls it matches and
/// what it decides for them.
///
/// Build it from its outcome and a tool-name glob (`*` matches any text, `?` one character),
/// then narrow it: `Rule::ask("*").when_traits(|t| t.destructive)`. Globs are case-sensitive
/// (`Delete_*` does not match `delete_file`) and have no escape: `*` and `?` are always
/// wildcards (`\` is an ordinary character), so a tool whose name holds them is matched by
/// the wildcard too.
#[derive(Clone)]
pub struct Rule {
    glob: Glob,
    args: Option<ArgsCheck>,
    traits: Option<TraitsCheck>,
    outcome: RuleOutcome,
    description: Option<String>,
    reason: Option<String>,
    /// The description written from the rule itself when none was given: written on the
    /// first decision, not on every one (each records it).
    written: OnceLock<String>,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule")
            .field("description", &self.description())
            .field("reason", &self.reason)
            .field("outcome", &self.outcome)
            .finish()
    }
}

impl Rule {
    /// A rule with this outcome for the tools whose name matches `tool_glob`.
    pub fn new(tool_glob: impl Into<String>, outcome: RuleOutcome) -> Self {
        Rule {
            glob: Glob::new(tool_glob.into()),
            args: None,
            traits: None,
            outcome,
            description: None,
            reason: None,
            written: OnceLock::new(),
        }
    }

    /// Allows the matching calls.
    pub fn allow(tool_glob: impl Into<String>) -> Self {
        Rule::new(tool_glob, RuleOutcome::Allow)
    }

    /// Denies the matching calls; the model receives `message`.
    pub fn deny(tool_glob: impl Into<String>, message: impl Into<String>) -> Self {
        Rule::new(tool_glob, RuleOutcome::Deny(message.into()))
    }

    /// Asks the policy's decider about the matching calls.
    pub fn ask(tool_glob: impl Into<String>) -> Self {
        Rule::new(tool_glob, RuleOutcome::Ask)
    }

    /// Suspends the run on the matching calls, for a durable decision.
    pub fn suspend(tool_glob: impl Into<String>, reason: impl Into<String>) -> Self {
        Rule::new(tool_glob, RuleOutcome::Suspend(reason.into()))
    }

    /// Matches only calls whose parsed JSON arguments pass `check`. Arguments that are not
    /// JSON, or a check that panics, never match an allow rule and always match any other
    /// rule (fail closed).
    ///
    /// The check sees the arguments as the tool will receive them (for duplicate keys, the
    /// last one's value, which is what the tool gets too), but not as the tool will read
    /// them: a tool behind an MCP server may accept `"amount": "1000"` as the number 1000.
    /// Write a deny or ask rule's check so that a value of another type matches too
    /// (`!args["amount"].as_u64().is_some_and(|n| n <= 100)`, not
    /// `args["amount"].as_u64().is_some_and(|n| n > 100)`).
    pub fn when_args(mut self, check: impl Fn(&Value) -> bool + Send + Sync + 'static) -> Self {
        self.args = Some(Arc::new(check));
        // What it checks is part of its description.
        self.written = OnceLock::new();
        self
    }

    /// Matches only tools whose [`ToolTraits`] pass `check` (the traits the policy was told,
    /// or its traits for unknown tools). A check that panics counts as for
    /// [`when_args`](Self::when_args).
    pub fn when_traits(
        mut self,
        check: impl Fn(&ToolTraits) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.traits = Some(Arc::new(check));
        self.written = OnceLock::new();
        self
    }

    /// How the rule is named to deciders and in audit records (by default, its outcome and
    /// glob, e.g. ``ask `write_*` (arguments checked)``).
    pub fn describe(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Why the rule asks about the calls it matches, in the policy's own words ("notes need
    /// your approval"): the decider receives it as
    /// [`ApprovalRequest::reason`](super::ApprovalRequest::reason), beside the rule's
    /// [`description`](Self::description), to tell the person asked.
    ///
    /// ```
    /// use reins::hooks::approval::Rule;
    ///
    /// let rule = Rule::ask("write_*").because("notes need your approval");
    /// assert_eq!(rule.description(), "ask `write_*`");
    /// assert_eq!(rule.reason(), Some("notes need your approval"));
    /// ```
    pub fn because(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// The rule's reason, if it was given one ([`because`](Self::because)).
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// Whether the rule's tool pattern matches `tool` (`*` any run of characters, `?` exactly
    /// one), its argument and trait conditions aside: e.g. to check that a rule read from a
    /// file names a tool the agent has.
    ///
    /// ```
    /// use reins::hooks::approval::Rule;
    ///
    /// assert!(Rule::ask("write_*").names_tool("write_note"));
    /// assert!(!Rule::ask("write_notes").names_tool("write_note"));
    /// ```
    pub fn names_tool(&self, tool: &str) -> bool {
        self.glob.matches(tool)
    }

    /// What the rule decides.
    pub fn outcome(&self) -> &RuleOutcome {
        &self.outcome
    }

    /// The rule's description.
    pub fn description(&self) -> String {
        match &self.description {
            Some(description) => description.clone(),
            None => self
                .written
                .get_or_init(|| self.write_description())
                .clone(),
        }
    }

    /// The description of a rule given none: its verdict, its glob and what else it checks.
    fn write_description(&self) -> String {
        let verdict = match self.outcome {
            RuleOutcome::Allow => "allow",
            RuleOutcome::Deny(_) => "deny",
            RuleOutcome::Ask => "ask",
            RuleOutcome::Suspend(_) => "suspend",
        };
        let checked = match (self.args.is_some(), self.traits.is_some()) {
            (true, true) => " (arguments and traits checked)",
            (true, false) => " (arguments checked)",
            (false, true) => " (traits checked)",
            (false, false) => "",
        };
        format!("{verdict} `{}`{checked}", self.glob.pattern)
    }

    /// Whether the rule matches a call. `args` reads the call's arguments, `None` when they
    /// are not JSON; it is called only by a rule that checks them.
    pub(super) fn matches<'v>(
        &self,
        tool_name: &str,
        args: &dyn Fn() -> Option<&'v Value>,
        traits: &ToolTraits,
    ) -> bool {
        if !self.glob.matches(tool_name) {
            return false;
        }
        // When a check cannot say, an allow rule does not match and a restrictive one does.
        let undecided = self.outcome != RuleOutcome::Allow;
        if let Some(check) = &self.traits {
            if !catch_unwind(AssertUnwindSafe(|| check(traits))).unwrap_or(undecided) {
                return false;
            }
        }
        if let Some(check) = &self.args {
            let passed = match args() {
                Some(args) => catch_unwind(AssertUnwindSafe(|| check(args))).unwrap_or(undecided),
                None => undecided,
            };
            if !passed {
                return false;
            }
        }
        true
    }
}

/// A tool-name pattern: `*` matches any run of characters, `?` exactly one.
#[derive(Debug, Clone)]
struct Glob {
    pattern: String,
    /// The pattern's characters, when it has wildcards; `None` compares names exactly.
    wild: Option<Vec<char>>,
}

impl Glob {
    fn new(pattern: String) -> Self {
        let wild = pattern
            .contains(['*', '?'])
            .then(|| pattern.chars().collect());
        Glob { pattern, wild }
    }

    fn matches(&self, name: &str) -> bool {
        match &self.wild {
            None => self.pattern == name,
            Some(pattern) => {
                let name: Vec<char> = name.chars().collect();
                glob_matches(pattern, &name)
            }
        }
    }
}

/// Wildcard matching with one backtrack point (the last `*`), linear for patterns with a
/// single star and `O(pattern × name)` at worst.
fn glob_matches(pattern: &[char], name: &[char]) -> bool {
    let (mut p, mut n) = (0, 0);
    // The position of the last `*` seen, and the name position it currently covers up to.
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
                // Let the last star swallow one more character and retry from after it.
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
    use super::*;

    fn glob(pattern: &str, name: &str) -> bool {
        Glob::new(pattern.to_owned()).matches(name)
    }

    #[test]
    fn globs_match_names() {
        assert!(glob("read_file", "read_file"));
        assert!(!glob("read_file", "read_files"));
        assert!(glob("*", "anything"));
        assert!(glob("*", ""));
        assert!(glob("read_*", "read_file"));
        assert!(glob("read_*", "read_"));
        assert!(!glob("read_*", "write_file"));
        assert!(glob("*_file", "delete_file"));
        assert!(!glob("*_file", "delete_files"));
        assert!(glob("fs.*.write", "fs.notes.write"));
        assert!(glob("a*b*c", "aXXbYYbc"));
        assert!(!glob("a*b*c", "aXXbYY"));
        assert!(glob("file?", "file1"));
        assert!(!glob("file?", "file"));
        assert!(!glob("file?", "file12"));
        assert!(glob("n?me*", "näme_x"));
        assert!(glob("**", "x"));
    }
}
