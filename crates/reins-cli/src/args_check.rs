//! A tool call whose arguments do not fit the tool's schema (a shell tool's `schema`, an MCP
//! tool's input schema: what the model is shown) is refused as it is dispatched, before an
//! approval rule asks about it: a person (at the terminal, through the webhook, or later from
//! the store) is never asked to approve a call the tool would then refuse. The model is told
//! what does not fit, and can call again. A shell tool's call is refused so too when a value
//! would be read as an option of its program (`shell_tool::Argv::fill`, the check the tool
//! makes as it runs). (A shell tool still checks both when it runs, `ShellTool::call`: a call
//! a person approved with edited arguments reaches it without being dispatched again.)
//!
//! Each tool's schema is compiled once, on its first call, and again when the tool list gives
//! it another one (`tool_schema::SchemaCache`). A schema that does not compile (an MCP
//! server's: `reins check` refuses a shell tool's) does not refuse the call, which goes on to
//! the approval rules and the server, which checks its arguments itself; the person is told
//! on stderr, once for the tool and that schema, that its arguments are not checked and why.

use crate::shell_tool::{Argv, ShellTool};
use crate::tool_schema::{Cached, SchemaCache};
use reins::agent::{AgentHook, DispatchAction, DispatchEvent, HookContext, StepEventKind};
use reins::tool::Tool;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// The hook refusing a tool call whose arguments do not fit the called tool's schema, for
/// every tool of the agent: the schema is the one of the turn's tool list
/// (`DispatchEvent::tool_parameters`), so an MCP server's later lists are checked too; and
/// a shell tool's call whose value would be an option of its program. Its clones share the
/// compiled schemas.
#[derive(Debug, Clone, Default)]
pub struct ArgsCheck {
    schemas: SchemaCache,
    /// The agent's shell tools' commands, by tool name (no MCP tool has one of these names:
    /// `assemble::connect` refuses a server listing one).
    shell_argvs: Arc<HashMap<String, Argv>>,
}

impl ArgsCheck {
    /// The check of every tool's schema, and of `shell_tools`' option values.
    pub fn with_shell_tools(shell_tools: &[ShellTool]) -> Self {
        ArgsCheck {
            schemas: SchemaCache::default(),
            shell_argvs: Arc::new(
                shell_tools
                    .iter()
                    .map(|tool| (tool.name().to_owned(), tool.argv().clone()))
                    .collect(),
            ),
        }
    }
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
        let fits = match self.schemas.get(tool, schema) {
            Cached::Validator(validator) => crate::tool_schema::check(tool, &validator, &args)
                .map_err(|mismatch| crate::tool_schema::not_run(&mismatch)),
            Cached::Uncompilable { reason, first } => {
                if first {
                    let unchecked = crate::tool_schema::unchecked(tool, &reason);
                    errln!("reins: {}", reins::text::printable(&unchecked));
                }
                Ok(())
            }
        };
        let runnable = fits.and_then(|()| match self.shell_argvs.get(tool) {
            Some(argv) => argv.fill(&args).map(drop),
            None => Ok(()),
        });
        match runnable {
            Ok(()) => DispatchAction::proceed(),
            Err(why) => DispatchAction::deny(why),
        }
    }
}
