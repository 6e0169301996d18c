//! A shell tool's call whose arguments do not fit its `schema` is refused as it is
//! dispatched, before an approval rule asks about it: a person (at the terminal, through the
//! webhook, or later from the store) is never asked to approve a call the tool would then
//! refuse. The model is told what does not fit, as when the tool refuses them itself
//! (`ShellTool::call`, which still checks: a call a person approved with edited arguments
//! reaches it without being dispatched again).

use crate::config::LoadedAgent;
use crate::edited_args::Schemas;
use reins::agent::{AgentHook, DispatchAction, DispatchEvent, HookContext, StepEventKind};
use serde_json::Value;
use std::sync::Arc;

/// The hook refusing a shell tool's call whose arguments do not fit the tool's schema.
#[derive(Debug, Clone)]
pub struct ShellArgsCheck {
    /// The shell tools' schemas (an MCP tool's arguments are its server's to check).
    schemas: Arc<Schemas>,
}

impl ShellArgsCheck {
    /// The check of `agent`'s shell tools; `None` when it has none.
    pub fn of(agent: &LoadedAgent) -> Option<Self> {
        (!agent.file.tools.shell.is_empty()).then(|| ShellArgsCheck {
            schemas: Arc::new(Schemas::of(agent)),
        })
    }
}

impl AgentHook for ShellArgsCheck {
    fn observes(&self, kind: StepEventKind) -> bool {
        kind == StepEventKind::ToolDispatch
    }

    async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        let (Some(tool), Some(Ok(args))) = (event.tool_name(), event.tool_args_as::<Value>())
        else {
            // Not a tool call, or arguments that are no JSON: the tool refuses those itself.
            return DispatchAction::proceed();
        };
        match self.schemas.check(tool, &args) {
            Ok(()) => DispatchAction::proceed(),
            Err(mismatch) => DispatchAction::deny(crate::tool_schema::not_run(&mismatch)),
        }
    }
}
