//! Arguments a person edits before approving a call, checked against the tool's schema (a
//! shell tool's from the agent file, an MCP tool's from its server), and a shell tool's for a
//! value its program would read as an option (`shell_tool::Argv::fill`): a mistake is said to
//! the person at once, rather than found by the tool failing when the run resumes (or, at the
//! terminal, when it runs).

use crate::config::LoadedAgent;
use crate::shell_tool::Argv;
use serde_json::Value;
use std::collections::BTreeMap;

/// `args` for the agent's tool `tool`, or why they do not fit its schema (see
/// [`Schemas::check`]). A tool the file does not define is an MCP server's: the servers are
/// started to learn its schema; when they cannot be, the arguments go unchecked (their server
/// checks them when the call runs), and the person is told so on stderr.
pub async fn check(agent: &LoadedAgent, tool: &str, args: &Value) -> Result<(), String> {
    let schemas = Schemas::of(agent);
    if schemas.schemas.contains_key(tool) || agent.file.tools.mcp.is_empty() {
        return schemas.check(tool, args);
    }
    match crate::assemble::mcp::mcp_schemas(agent).await {
        Ok(mcp) => schemas
            .with(mcp.iter().map(|(name, schema)| (name.as_str(), schema)))
            .check(tool, args),
        Err(error) => {
            errln!(
                "reins: the edited arguments of `{tool}` are not checked against its schema \
                 ({error})"
            );
            Ok(())
        }
    }
}

/// The schemas of an agent's shell tools, by name, and their commands: what edited arguments
/// are checked against (kept by the terminal's approval prompt for the whole run).
#[derive(Debug, Clone, Default)]
pub struct Schemas {
    schemas: BTreeMap<String, Value>,
    /// The shell tools' commands, whose values must not be options of their programs.
    shell_argvs: BTreeMap<String, Argv>,
}

impl Schemas {
    /// The schemas and commands `agent`'s file gives.
    pub fn of(agent: &LoadedAgent) -> Self {
        let shell_tools = agent.file.tools.shell.iter().map(|shell| shell.get_ref());
        Schemas {
            schemas: shell_tools
                .clone()
                .filter_map(|shell| {
                    let schema = serde_json::to_value(shell.schema.get_ref()).ok()?;
                    Some((shell.name.get_ref().clone(), schema))
                })
                .collect(),
            // The program as the file names it: where a value could be an option does not
            // depend on where the program is found.
            shell_argvs: shell_tools
                .map(|shell| {
                    let argv =
                        Argv::new(shell.command.get_ref().clone(), shell.allow_option_values);
                    (shell.name.get_ref().clone(), argv)
                })
                .collect(),
        }
    }

    /// These schemas and `tools`' (name and schema each): a run's MCP tools, whose schemas
    /// are known once their servers are connected.
    pub fn with<'a>(mut self, tools: impl IntoIterator<Item = (&'a str, &'a Value)>) -> Self {
        self.schemas.extend(
            tools
                .into_iter()
                .map(|(name, schema)| (name.to_owned(), schema.clone())),
        );
        self
    }

    /// `args` for the tool `tool`, or why they do not fit its schema (the first few
    /// mismatches, each with where it is), or why a shell tool's program would read one as
    /// an option. Tools whose schema is not known here (an MCP server's, before it is
    /// connected) are not checked: their server checks them.
    pub fn check(&self, tool: &str, args: &Value) -> Result<(), String> {
        if let Some(schema) = self.schemas.get(tool) {
            crate::tool_schema::fits(tool, schema, args)?;
        }
        match self.shell_argvs.get(tool) {
            Some(argv) => argv.fill(args).map(drop),
            None => Ok(()),
        }
    }
}
