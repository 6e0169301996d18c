//! `env_passthrough` checked: each name must be a variable the programs tools start are kept
//! from (`model_keys::key_variables`: a model's key, another secret the file names). Any
//! other name passes nothing through (the program inherits it anyway) and is almost surely
//! misspelt: the key it was meant for stays withheld, and the tool fails without it, far from
//! the mistake. A server reached by `url` starts no program to pass a variable to.

use super::diagnostic::Diagnostic;
use super::model_keys::key_variables;
use super::suggest::{closest, did_you_mean};
use super::{LoadedAgent, McpConfig};
use toml::Spanned;

/// The mistakes in the `env_passthrough` of every shell tool and MCP server of `agent`.
pub fn check_passthrough(agent: &LoadedAgent, problems: &mut Vec<Diagnostic>) {
    let withheld = key_variables(&agent.file);
    let tools = &agent.file.tools;
    let shell = tools
        .shell
        .iter()
        .map(|tool| &tool.get_ref().env_passthrough);
    let mcp = tools
        .mcp
        .iter()
        .map(Spanned::get_ref)
        .filter(|server| server.url.is_none());
    for name in shell
        .chain(mcp.map(|server| &server.env_passthrough))
        .flatten()
    {
        if withheld.contains(name.get_ref()) {
            continue;
        }
        if name.get_ref() == crate::keys::UI_TOKEN_ENV {
            problems.push(agent.error_at(
                name.span(),
                format!(
                    "`{}` is the web inbox's token, with which a tool could approve its own \
                     calls: no tool is given it",
                    crate::keys::UI_TOKEN_ENV
                ),
            ));
            continue;
        }
        let hint = closest(name.get_ref(), withheld.iter().map(String::as_str))
            .map(did_you_mean)
            .unwrap_or_default();
        problems.push(agent.error_at(
            name.span(),
            format!(
                "`{}` in `env_passthrough` is not withheld from tools (no model's key nor other \
                 secret of this file is read from it): the program inherits it anyway, and \
                 passing it through does nothing{hint}",
                name.get_ref()
            ),
        ));
    }
    for server in tools.mcp.iter().map(Spanned::get_ref) {
        url_server_passes_nothing(agent, server, problems);
    }
}

/// A server reached by `url` is no program of this machine: `env_passthrough` gives it
/// nothing.
fn url_server_passes_nothing(
    agent: &LoadedAgent,
    server: &McpConfig,
    problems: &mut Vec<Diagnostic>,
) {
    if let (Some(_), Some(first)) = (&server.url, server.env_passthrough.first()) {
        problems.push(agent.error_at(
            first.span(),
            format!(
                "`env_passthrough` is for a server started by `command`: MCP server `{}` is \
                 reached by `url`, and no program of this machine inherits anything from reins",
                server.name
            ),
        ));
    }
}
