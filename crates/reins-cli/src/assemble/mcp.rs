//! The agent file's MCP servers, started: each one's client and tools (filtered and
//! prefixed as the file says), and their schemas for checking a person's edited arguments.

use crate::config::{LoadedAgent, McpConfig};
use crate::keys::ModelKeys;
use reins_mcp::{McpClient, McpServer, McpTools};
use std::time::Duration;

/// The input schemas of the agent's MCP tools, under the names the agent gives them: each
/// server is started, asked for its tools and shut down.
pub async fn mcp_schemas(agent: &LoadedAgent) -> Result<Vec<(String, serde_json::Value)>, String> {
    let mut schemas = Vec::new();
    for config in &agent.file.tools.mcp {
        let (client, tools) = connect_mcp(agent, config.get_ref()).await?;
        schemas
            .extend(input_schemas(&tools).map(|(name, schema)| (name.to_owned(), schema.clone())));
        client.close();
    }
    Ok(schemas)
}

/// Each tool's name (as the agent gives it) and input schema.
pub(super) fn input_schemas(tools: &McpTools) -> impl Iterator<Item = (&str, &serde_json::Value)> {
    tools
        .names()
        .filter_map(|name| tools.get(name))
        .map(|tool| (tool.name(), tool.input_schema()))
}

/// Starts one MCP server and lists its tools, filtered and prefixed.
pub(super) async fn connect_mcp(
    agent: &LoadedAgent,
    config: &McpConfig,
) -> Result<(McpClient, McpTools), String> {
    let cwd = config.cwd.as_ref().map(|cwd| agent.resolve(cwd.get_ref()));
    let mut server = match (&config.command, &config.url) {
        (Some(command), _) => {
            let base = cwd.clone().unwrap_or_else(|| agent.base_dir());
            let program = crate::shell_tool::program_path(command.get_ref(), &base);
            McpServer::stdio(program, &config.args)
        }
        (None, Some(url)) => http_server(config, url.get_ref())?,
        (None, None) => return Err(format!("MCP server `{}` has no command", config.name)),
    }
    .name(config.name.clone());
    // A stdio server is a program like a shell tool's: it gets none of the model keys but
    // those the file passes through, or gives it in `env` (set after these are removed).
    for variable in ModelKeys::of(agent).withheld(&config.env_passthrough) {
        server = server.env_remove(variable);
    }
    server = server.envs(config.env.clone());
    if let Some(cwd) = cwd {
        server = server.current_dir(cwd);
    }
    if let Some(secs) = &config.call_timeout_secs {
        server = server.call_timeout(Duration::from_secs(*secs.get_ref()));
    }
    let client = server.connect().await.map_err(|error| error.to_string())?;
    let mut tools = client.tools().await.map_err(|error| error.to_string())?;
    if let Some(include) = &config.include {
        tools = tools.only(include);
    }
    tools = tools.except(&config.exclude);
    if let Some(prefix) = &config.prefix {
        tools = tools.prefix(prefix);
    }
    Ok((client, tools))
}

/// An MCP server over streamable HTTP, its credentials read from the variables the file
/// names. `reins check` reports unset ones; here they are only named, never shown.
fn http_server(config: &McpConfig, url: &str) -> Result<McpServer, String> {
    let read = |variable: &str| {
        super::env::secret_from_env(variable)
            .map_err(|unset| format!("{unset} (MCP server `{}`)", config.name))
    };
    let mut server = McpServer::http(url);
    if let Some(variable) = &config.bearer_token_env {
        server = server.bearer_token(read(variable.get_ref())?);
    }
    for (header, variable) in &config.headers_from_env {
        server = server.header(header.clone(), read(variable.get_ref())?);
    }
    Ok(server)
}
