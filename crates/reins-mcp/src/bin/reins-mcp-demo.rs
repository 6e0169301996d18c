//! A reins tool set served over MCP, for MCP clients to try (the MCP Inspector, an IDE) and for
//! reins-mcp's tests that drive it with the Inspector.
//!
//! ```text
//! reins-mcp-demo                          # serves one client on stdin/stdout
//! reins-mcp-demo --http 127.0.0.1:8931    # serves streamable HTTP at http://127.0.0.1:8931/mcp
//! ```
//!
//! Tools: `add` (two integers), `shout` (upper-cases a text), and `ask_agent`: an agent, as one
//! tool, whose scripted model calls `add` and reports the sum; an audit hook inside it records
//! each tool call on standard error, so a client sees the agent's hooks ran.

use reins::agent::{AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{ToolSet, tool_fn};
use reins_mcp::{AgentTool, McpService};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::convert::Infallible;

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first integer.
    a: i64,
    /// The second integer.
    b: i64,
}

#[derive(Deserialize, JsonSchema)]
struct ShoutArgs {
    /// The text to upper-case.
    text: String,
}

/// Writes every tool call the agent makes to standard error (stdout carries MCP over stdio).
struct AuditToStderr;

impl AgentHook for AuditToStderr {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if let (Some(name), Some(args)) = (event.tool_name(), event.tool_args()) {
            eprintln!("agent calls {name} {args}");
        }
        DispatchAction::proceed()
    }
}

fn add_tool() -> impl reins::tool::Tool {
    tool_fn("add", "Adds two integers.", |args: AddArgs| async move {
        Ok::<_, Infallible>(args.a + args.b)
    })
}

fn tools() -> ToolSet {
    let model = ScriptedModel::new([
        Turn::tool_call("add", json!({"a": 20, "b": 22})),
        Turn::text("The agent added 20 and 22: 42."),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(add_tool())
        .add_hook(AuditToStderr)
        .build();
    let mut tools = ToolSet::new();
    tools.add(add_tool());
    tools.add(tool_fn(
        "shout",
        "Upper-cases a text.",
        |args: ShoutArgs| async move { Ok::<_, Infallible>(args.text.to_uppercase()) },
    ));
    tools.add(AgentTool::new(
        "ask_agent",
        "Asks a reins agent; it adds numbers with its own `add` tool.",
        agent,
    ));
    tools
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let service = McpService::new(tools()).name("reins-mcp-demo");
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => service.serve_stdio().await,
        [flag, address] if flag == "--http" => {
            let listener = tokio::net::TcpListener::bind(address).await?;
            let server = service.serve_http(listener)?;
            println!("listening on {}", server.url());
            tokio::signal::ctrl_c().await?;
            server.shutdown();
            Ok(())
        }
        _ => {
            eprintln!("usage: reins-mcp-demo [--http ADDRESS]");
            std::process::exit(2);
        }
    }
}
