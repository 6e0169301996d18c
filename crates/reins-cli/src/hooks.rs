//! The demo's hooks: force a tool on turn 1, audit every dispatch, ask before side effects.

use crate::tools::SIDE_EFFECT_TOOLS;
use reins::agent::{
    AgentHook, CompletionCallAction, CompletionCallEvent, DispatchAction, DispatchEvent,
    HookContext, OutcomeAction, OutcomeEvent, RequestPatch,
};
use reins::message::ToolChoice;
use reins::tool::ToolOutcome;
use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

/// Requires a tool call on turn 1. Later turns get `later` (`None` lets a small model answer
/// instead of calling tools again), or the agent's own setting when `later` is unset.
pub struct ForceToolFirst {
    pub later: Option<ToolChoice>,
}

impl AgentHook for ForceToolFirst {
    async fn on_completion_call(
        &self,
        ctx: &HookContext,
        _event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        match (ctx.turn(), &self.later) {
            (1, _) => {
                CompletionCallAction::patch(RequestPatch::new().tool_choice(ToolChoice::Required))
            }
            (_, Some(choice)) => {
                CompletionCallAction::patch(RequestPatch::new().tool_choice(choice.clone()))
            }
            (_, None) => CompletionCallAction::continue_run(),
        }
    }
}

/// Prints every dispatch (model calls and tool calls) and every tool outcome to stderr.
pub struct Audit;

impl AgentHook for Audit {
    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if let Some(request) = event.request() {
            let tools: Vec<&str> = request.tool_names().collect();
            eprintln!(
                "[audit] turn {}: model call to {} (tool_choice: {}, tools: {})",
                ctx.turn(),
                event.model().unwrap_or("?"),
                request
                    .tool_choice
                    .as_ref()
                    .map_or_else(|| "default".to_owned(), |choice| format!("{choice:?}")),
                if tools.is_empty() {
                    "none".to_owned()
                } else {
                    tools.join(", ")
                },
            );
        } else if let (Some(name), Some(args)) = (event.tool_name(), event.tool_args()) {
            eprintln!("[audit] turn {}: tool call {name} {args}", ctx.turn());
        }
        DispatchAction::proceed()
    }

    async fn on_outcome(&self, ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(result) = event.tool_outcome() {
            let status = match result.outcome() {
                ToolOutcome::Success => "ok".to_owned(),
                ToolOutcome::Denied { .. } => "denied".to_owned(),
                ToolOutcome::Skipped { .. } => "skipped".to_owned(),
                other => format!("{other:?}"),
            };
            eprintln!(
                "[audit] turn {}: {} {status}: {}",
                ctx.turn(),
                result.tool_name(),
                result.output().render()
            );
        }
        OutcomeAction::proceed()
    }
}

/// Asks on the terminal before a tool with a side effect runs. Fail-closed: only `y` or
/// `yes` approves; any other answer, end of input, an unreadable terminal or no answer within
/// `timeout` denies.
pub struct AskBeforeSideEffects {
    pub timeout: Duration,
}

impl AgentHook for AskBeforeSideEffects {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        let (Some(name), Some(args)) = (event.tool_name(), event.tool_args()) else {
            return DispatchAction::proceed();
        };
        if !SIDE_EFFECT_TOOLS.contains(&name) {
            return DispatchAction::proceed();
        }
        eprint!("\n[approval] the model wants to run {name} {args}\n[approval] allow it? [y/N] ");
        let _ = std::io::stderr().flush();
        if !std::io::stdin().is_terminal() {
            eprintln!("(no terminal to ask on: denied)");
            return DispatchAction::deny(format!("{name} was not run: nobody could approve it"));
        }
        // A plain thread, not `spawn_blocking`: a read still waiting after the timeout must
        // not keep the runtime from shutting down.
        let (send, answer) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let read = std::io::stdin().lock().read_line(&mut line);
            let _ = send.send(read.map(|bytes| (bytes, line)));
        });
        let approved = match tokio::time::timeout(self.timeout, answer).await {
            Ok(Ok(Ok((bytes, line)))) if bytes > 0 => {
                matches!(line.trim().to_lowercase().as_str(), "y" | "yes")
            }
            Ok(_) => false,
            Err(_) => {
                eprintln!("(no answer within {}s)", self.timeout.as_secs());
                false
            }
        };
        if approved {
            eprintln!("[approval] approved");
            DispatchAction::proceed()
        } else {
            eprintln!("[approval] denied");
            DispatchAction::deny(format!("the user did not approve {name}; it was not run"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools;
    use reins::agent::AgentBuilder;
    use reins::testing::{ScriptedModel, Turn};
    use serde_json::json;

    #[tokio::test]
    async fn turn_one_requires_a_tool_and_later_turns_get_the_later_choice() {
        let model = ScriptedModel::new([
            Turn::tool_call("calculator", json!({"expression": "2 + 3"})),
            Turn::text("5"),
        ]);
        let agent = AgentBuilder::new(model.clone())
            .tool(tools::calculator())
            .add_hook(ForceToolFirst {
                later: Some(ToolChoice::None),
            })
            .build();
        agent.prompt("2 + 3?").await.unwrap();
        let choices: Vec<_> = model
            .requests()
            .iter()
            .map(|r| r.tool_choice.clone())
            .collect();
        assert_eq!(
            choices,
            [Some(ToolChoice::Required), Some(ToolChoice::None)]
        );
    }

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
            .add_hook(AskBeforeSideEffects {
                timeout: Duration::from_secs(1),
            })
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
