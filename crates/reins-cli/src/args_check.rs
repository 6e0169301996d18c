//! A tool call whose arguments do not fit the tool's schema (a shell tool's `schema`, an MCP
//! tool's input schema: what the model is shown) is refused as it is dispatched, before an
//! approval rule asks about it: a person (at the terminal, through the webhook, or later from
//! the store) is never asked to approve a call the tool would then refuse. The model is told
//! what does not fit, and can call again. (A shell tool still checks when it runs,
//! `ShellTool::call`: a call a person approved with edited arguments reaches it without being
//! dispatched again.)

use reins::agent::{AgentHook, DispatchAction, DispatchEvent, HookContext, StepEventKind};
use serde_json::Value;

/// The hook refusing a tool call whose arguments do not fit the called tool's schema, for
/// every tool of the agent: the schema is the one of the turn's tool list
/// (`DispatchEvent::tool_parameters`), so an MCP server's later lists are checked too.
#[derive(Debug, Clone, Copy, Default)]
pub struct ArgsCheck;

impl AgentHook for ArgsCheck {
    fn observes(&self, kind: StepEventKind) -> bool {
        kind == StepEventKind::ToolDispatch
    }

    async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        let (Some(tool), Some(schema), Some(Ok(args))) = (
            event.tool_name(),
            event.tool_parameters(),
            event.tool_args_as::<Value>(),
        ) else {
            // Not a tool call, a tool the agent does not have, or arguments that are no
            // JSON: the run refuses those itself.
            return DispatchAction::proceed();
        };
        match crate::tool_schema::fits(tool, schema, &args) {
            Ok(()) => DispatchAction::proceed(),
            Err(mismatch) => DispatchAction::deny(crate::tool_schema::not_run(&mismatch)),
        }
    }
}
