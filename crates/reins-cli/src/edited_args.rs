//! Arguments a person edits before approving a call, checked against the tool's schema (a
//! shell tool's from the agent file, an MCP tool's from its server): a mistake is said to the
//! person at once, rather than found by the tool failing when the run resumes (or, at the
//! terminal, when it runs).

use crate::config::LoadedAgent;
use serde_json::Value;
use std::collections::BTreeMap;

/// `args` for the agent's tool `tool`, or why they do not fit its schema (see
/// [`Schemas::check`]). A tool the file does not define is an MCP server's: the servers are
/// started to learn its schema; when they cannot be, the arguments go unchecked (their server
/// checks them when the call runs), and the person is told so on stderr.
pub async fn check(agent: &LoadedAgent, tool: &str, args: &Value) -> Result<(), String> {
    let schemas = Schemas::of(agent);
    if schemas.0.contains_key(tool) || agent.file.tools.mcp.is_empty() {
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

/// The schemas of an agent's shell tools, by name: what edited arguments are checked against
/// (kept by the terminal's approval prompt for the whole run).
#[derive(Debug, Clone, Default)]
pub struct Schemas(BTreeMap<String, Value>);

impl Schemas {
    /// The schemas `agent`'s file gives.
    pub fn of(agent: &LoadedAgent) -> Self {
        Schemas(
            agent
                .file
                .tools
                .shell
                .iter()
                .filter_map(|shell| {
                    let shell = shell.get_ref();
                    let schema = serde_json::to_value(shell.schema.get_ref()).ok()?;
                    Some((shell.name.get_ref().clone(), schema))
                })
                .collect(),
        )
    }

    /// These schemas and `tools`' (name and schema each): a run's MCP tools, whose schemas
    /// are known once their servers are connected.
    pub fn with<'a>(mut self, tools: impl IntoIterator<Item = (&'a str, &'a Value)>) -> Self {
        self.0.extend(
            tools
                .into_iter()
                .map(|(name, schema)| (name.to_owned(), schema.clone())),
        );
        self
    }

    /// `args` for the tool `tool`, or why they do not fit its schema (the first few
    /// mismatches, each with where it is). Tools whose schema is not known here (an MCP
    /// server's, before it is connected) are not checked: their server checks them.
    pub fn check(&self, tool: &str, args: &Value) -> Result<(), String> {
        match self.0.get(tool) {
            Some(schema) => crate::tool_schema::fits(tool, schema, args),
            None => Ok(()),
        }
    }
}
