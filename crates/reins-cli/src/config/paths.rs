//! The files and directories an agent file names that must already exist, checked before a
//! run needs them: a recording to replay and the working directory of a tool. Without this,
//! `reins check` passed such a file and the run failed later with an OS error naming no line
//! (for an MCP server's missing `cwd`, one that blamed the server's program). Files `reins`
//! writes (the store, a recording, an audit log) get their directories created instead.

use super::LoadedAgent;
use super::diagnostic::Diagnostic;

/// Said after every path problem: where a relative path starts.
const RELATIVE: &str = "relative paths start at the agent file's directory";

/// Every missing file or directory the agent names.
pub fn check_paths(agent: &LoadedAgent) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    let hooks = &agent.file.hooks;
    if let Some(cache) = &hooks.cache {
        let cache = cache.get_ref();
        if let Some(replay) = &cache.replay {
            let path = agent.resolve(replay.get_ref());
            if !path.is_file() {
                problems.push(agent.error_at(
                    replay.span(),
                    format!(
                        "the recording {} does not exist: make one with `record` instead of \
                         `replay`, or fix the path ({RELATIVE})",
                        path.display()
                    ),
                ));
            }
        }
    }
    let tools = &agent.file.tools;
    let shell = tools.shell.iter().map(|tool| &tool.get_ref().cwd);
    let mcp = tools.mcp.iter().map(|server| &server.get_ref().cwd);
    for cwd in shell.chain(mcp).flatten() {
        let path = agent.resolve(cwd.get_ref());
        if !path.is_dir() {
            problems.push(agent.error_at(
                cwd.span(),
                format!(
                    "`cwd` {} is not a directory: create it or fix the path ({RELATIVE})",
                    path.display()
                ),
            ));
        }
    }
    problems
}
