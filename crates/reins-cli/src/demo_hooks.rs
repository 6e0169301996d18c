//! The demo's hooks, all ready-made (`reins::hooks`): force a tool on turn 1, ask before side
//! effects and audit every dispatch.

use crate::demo_tools::SIDE_EFFECT_TOOLS;
use reins::hooks::approval::{
    ApprovalDecider, ApprovalPolicy, ApprovalRequest, Decision, Rule, TerminalDecider,
};
use reins::hooks::audit::AuditLog;
use reins::hooks::tool_choice::ToolChoiceByTurn;
use reins::message::ToolChoice;
use reins::tool::ToolTraits;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Requires a tool call on turn 1. Later turns get `later` (`None` lets a small model answer
/// instead of calling tools again), or the agent's own setting when `later` is unset.
pub fn tool_first(later: Option<ToolChoice>) -> ToolChoiceByTurn {
    let hook = ToolChoiceByTurn::new().first_turn(ToolChoice::Required);
    match later {
        Some(choice) => hook.later_turns(choice),
        None => hook,
    }
}

/// Every dispatch (model calls and tool calls) and every outcome as one JSON line on stderr,
/// with the tools' arguments. Register it last: a call another hook refused then has no
/// dispatch line, and its outcome line records the refusal.
pub fn audit() -> AuditLog {
    AuditLog::stderr().with_args()
}

/// Asks on the terminal before a tool with a side effect runs; every other tool runs.
/// Fail-closed: only `y` or `yes` approves; any other answer, end of input, no terminal on
/// stdin or no answer within `timeout` denies, and the model is told the call was not run.
/// `question` says which tool is asked about while the question is on the terminal.
pub fn ask_before_side_effects(timeout: Duration, question: Question) -> ApprovalPolicy {
    SIDE_EFFECT_TOOLS
        .iter()
        .fold(ApprovalPolicy::new(), |policy, &tool| {
            policy
                .tool_traits(tool, ToolTraits::additive())
                .rule(Rule::ask(tool).because("tools with side effects need your approval"))
        })
        .rule(Rule::allow("*"))
        .decider(Asking {
            terminal: TerminalDecider::new(),
            question,
        })
        .timeout(timeout)
}

/// The tool the demo's approval question asks about while it is on the terminal: what a
/// Ctrl-C there says was not run (the demo keeps no runs to leave the call waiting in).
/// Clones share it.
#[derive(Debug, Clone, Default)]
pub struct Question(Arc<Mutex<Option<String>>>);

impl Question {
    /// The tool asked about, if a question is on the terminal.
    pub fn asked_about(&self) -> Option<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set(&self, tool: Option<String>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = tool;
    }
}

/// The terminal's question, told in [`Question`] while it is asked.
struct Asking {
    terminal: TerminalDecider,
    question: Question,
}

/// Clears the question when it is answered, or abandoned (the policy's timeout drops it).
struct Answered<'a>(&'a Question);

impl Drop for Answered<'_> {
    fn drop(&mut self) {
        self.0.set(None);
    }
}

impl ApprovalDecider for Asking {
    async fn decide(&self, request: &ApprovalRequest) -> Decision {
        self.question.set(Some(request.tool_name.clone()));
        let _answered = Answered(&self.question);
        self.terminal.decide(request).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo_tools as tools;
    use reins::agent::AgentBuilder;
    use reins::testing::{ScriptedModel, Turn};
    use serde_json::json;

    #[tokio::test]
    async fn a_side_effect_nobody_approves_is_denied_and_not_run() {
        let dir = std::env::temp_dir().join(format!("reins-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let model = ScriptedModel::new([
            Turn::tool_call("write_note", json!({"file": "n.txt", "text": "hello"})),
            Turn::text("done"),
        ]);
        let agent = AgentBuilder::new(model.clone())
            .tool(tools::write_note(dir.clone()))
            // No terminal in tests (or no answer within a second on one): denied either way.
            .add_hook(ask_before_side_effects(
                Duration::from_secs(1),
                Question::default(),
            ))
            .build();
        agent.prompt("note hello").await.unwrap();
        assert!(!dir.join("n.txt").exists());
        let requests = model.requests();
        let result = requests[1]
            .history
            .last()
            .map(|m| m.text())
            .unwrap_or_default();
        assert!(result.contains("not run"), "{result}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
