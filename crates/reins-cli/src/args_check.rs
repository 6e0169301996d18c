//! A tool call whose arguments do not fit the tool's schema (a shell tool's `schema`, an MCP
//! tool's input schema: what the model is shown) is refused as it is dispatched, before an
//! approval rule asks about it: a person (at the terminal, through the webhook, or later from
//! the store) is never asked to approve a call the tool would then refuse. The model is told
//! what does not fit, and can call again. (A shell tool still checks when it runs,
//! `ShellTool::call`: a call a person approved with edited arguments reaches it without being
//! dispatched again.)
//!
//! Each tool's schema is compiled once, on its first call, and again when the tool list gives
//! it another one (`tool_schema::SchemaCache`). A schema that does not compile (an MCP
//! server's: `reins check` refuses a shell tool's) does not refuse the call, which goes on to
//! the approval rules and the server, which checks its arguments itself; the person is told
//! on stderr, once for the tool and that schema, that its arguments are not checked and why.

use crate::tool_schema::{Cached, SchemaCache};
use reins::agent::{AgentHook, DispatchAction, DispatchEvent, HookContext, StepEventKind};
use serde_json::Value;

/// The hook refusing a tool call whose arguments do not fit the called tool's schema, for
/// every tool of the agent: the schema is the one of the turn's tool list
/// (`DispatchEvent::tool_parameters`), so an MCP server's later lists are checked too. Its
/// clones share the compiled schemas.
#[derive(Debug, Clone, Default)]
pub struct ArgsCheck {
    schemas: SchemaCache,
}

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
        match self.schemas.get(tool, schema) {
            Cached::Validator(validator) => {
                match crate::tool_schema::check(tool, &validator, &args) {
                    Ok(()) => DispatchAction::proceed(),
                    Err(mismatch) => DispatchAction::deny(crate::tool_schema::not_run(&mismatch)),
                }
            }
            Cached::Uncompilable { reason, first } => {
                if first {
                    let unchecked = crate::tool_schema::unchecked(tool, &reason);
                    errln!("reins: {}", reins::text::printable(&unchecked));
                }
                DispatchAction::proceed()
            }
        }
    }
}
