//! An `[[tools.mcp]]` entry checked: a `command` (stdio) or a `url` (streamable HTTP), the
//! variables an HTTP server's credentials come from (named, never written in the file), and a
//! call timeout of at least a second. An error at the `url` masks it in the quoted line: its
//! user info or query may hold a key.

use super::diagnostic::Diagnostic;
use super::variables::check_env;
use super::{LoadedAgent, McpConfig};
use toml::Spanned;

/// An MCP server: a `command` (stdio) or a `url` (streamable HTTP), and the variables an HTTP
/// server's credentials come from (named, never written in the file).
pub(super) fn check_mcp(
    agent: &LoadedAgent,
    server: &Spanned<McpConfig>,
    problems: &mut Vec<Diagnostic>,
    secrets: &mut Vec<Diagnostic>,
) {
    let config = server.get_ref();
    match (&config.command, &config.url) {
        // The URL is masked in the quoted line: its user info or query may hold a key.
        (Some(_), Some(url)) => problems.push(
            agent
                .error_at(
                    url.span(),
                    "give either `command` (stdio) or `url` (HTTP), not both",
                )
                .concealed(),
        ),
        (None, None) => problems.push(agent.error_at(
            server.span(),
            format!(
                "MCP server `{}` needs `command` (stdio) or `url` (HTTP)",
                config.name
            ),
        )),
        (Some(command), None) => {
            if command.get_ref().trim().is_empty() {
                problems.push(agent.error_at(command.span(), "`command` is empty"));
            }
        }
        (None, Some(url)) => {
            let text = url.get_ref();
            if !(text.starts_with("http://") || text.starts_with("https://")) {
                problems.push(
                    agent
                        .error_at(url.span(), "`url` must be an http:// or https:// URL")
                        .concealed(),
                );
            }
        }
    }
    if let Some(timeout) = &config.call_timeout_secs
        && *timeout.get_ref() == 0
    {
        problems.push(agent.error_at(
            timeout.span(),
            "`call_timeout_secs` must be at least 1: every call given no time would time out \
             before the server answered",
        ));
    }
    let http_only = config.bearer_token_env.is_some() || !config.headers_from_env.is_empty();
    if http_only && config.url.is_none() {
        problems.push(agent.error_at(
            server.span(),
            "`bearer_token_env` and `headers_from_env` are for a server reached by `url`",
        ));
    }
    if let Some(variable) = &config.bearer_token_env {
        check_env(agent, variable, "the MCP server's bearer token", secrets);
    }
    for (header, variable) in &config.headers_from_env {
        check_env(
            agent,
            variable,
            &format!("the MCP server's `{header}` header"),
            secrets,
        );
    }
}
