//! An agent calling the tools of an MCP server, with an approval policy fed by the tools'
//! MCP annotations, then the same tools served again over MCP by reins.
//!
//! Needs `mcp-server-time` (`python3 -m pip install mcp-server-time`; scripts/install/mcp.sh
//! installs it). The model is scripted so the example runs without a provider key; swap in
//! any reins model to let a real one choose the calls.
//!
//! Run with `cargo run -p reins-mcp --example mcp_tools`.

use reins::agent::AgentBuilder;
use reins::hooks::approval::{ApprovalPolicy, Rule};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::ToolSet;
use reins_mcp::{McpServer, McpService};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. A server over stdio; its tools become reins tools, prefixed to avoid clashes.
    let time = McpServer::stdio("python3", ["-m", "mcp_server_time"])
        .name("time")
        .connect()
        .await?;
    let tools = time.tools().await?.prefix("time_");
    for tool in &tools {
        println!(
            "tool {} (server `{}`, read-only: {})",
            tool.name(),
            tool.server_name(),
            tool.traits().read_only
        );
    }

    // 2. One rule from MCP's annotations: read-only tools run, anything else is refused.
    let policy = tools
        .register_traits(ApprovalPolicy::new())
        .rule(Rule::allow("*").when_traits(|traits| traits.read_only))
        .rule(Rule::deny("*", "only read-only tools may run"));

    let model = ScriptedModel::new([
        Turn::tool_call("time_get_current_time", json!({"timezone": "Europe/Paris"})),
        Turn::text("I looked the time up in Paris."),
    ]);
    let agent = AgentBuilder::new(model)
        .tools(tools.clone())
        .add_hook(policy)
        .build();
    println!(
        "agent: {}",
        agent.prompt("What time is it in Paris?").await?
    );

    // 3. The same tools served over streamable HTTP by reins, and called back through it.
    let mut set = ToolSet::new();
    for tool in tools {
        set.add(tool);
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let served = McpService::new(set)
        .name("time-again")
        .serve_http(listener)?;
    let again = McpServer::http(served.url()).connect().await?;
    let answer = again
        .call_tool("time_get_current_time", json!({"timezone": "UTC"}), None)
        .await?;
    println!("served at {}: {}", served.url(), answer.text());
    Ok(())
}
