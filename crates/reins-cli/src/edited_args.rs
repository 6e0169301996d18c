//! Arguments a person edits before approving a call, checked against the tool's schema where
//! the agent file gives one (a shell tool's): a mistake is said to the person at once, rather
//! than found by the tool failing when the run resumes.

use crate::config::LoadedAgent;
use serde_json::Value;

/// `args` for the agent's tool `tool`, or why they do not fit its schema (the first few
/// mismatches, each with where it is). Tools whose schema the file does not hold (an MCP
/// server's) are not checked here: their server checks them.
pub fn check(agent: &LoadedAgent, tool: &str, args: &Value) -> Result<(), String> {
    let Some(shell) = agent
        .file
        .tools
        .shell
        .iter()
        .find(|shell| shell.get_ref().name.get_ref() == tool)
    else {
        return Ok(());
    };
    // `reins check` has refused a schema that is not one; a schema that still does not
    // compile is left to the tool.
    let Ok(schema) = serde_json::to_value(shell.get_ref().schema.get_ref()) else {
        return Ok(());
    };
    let Ok(validator) = jsonschema::validator_for(&schema) else {
        return Ok(());
    };
    let problems: Vec<String> = validator
        .iter_errors(args)
        .take(3)
        .map(|error| match error.instance_path().to_string() {
            at if at.is_empty() => error.to_string(),
            at => format!("{error} (at {at})"),
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the arguments do not fit the schema of `{tool}`: {}",
            problems.join("; ")
        ))
    }
}
