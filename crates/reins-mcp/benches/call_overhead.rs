//! The per-call cost of a tool reached over MCP, against calling the same function directly.
//!
//! The tool is `add` (`{"a": 2, "b": 3}` → `5`), a `tool_fn` closure. Every case calls it
//! through a reins `ToolSet` (what an agent does for each tool call), so the differences are
//! the MCP round trip alone:
//!
//! - `direct`: the `tool_fn` itself in the `ToolSet`.
//! - `mcp_stdio`: an `McpTool` of `reins-mcp-demo` (this crate's binary, which serves the same
//!   `add`), started as a child process over stdio.
//! - `mcp_http`: an `McpTool` of the same tool set served in this process by `McpService`
//!   over streamable HTTP on loopback.
//!
//! Run with `cargo bench -p reins-mcp --bench call_overhead`.

use criterion::{Criterion, criterion_group, criterion_main};
use reins::tool::{ToolCallContext, ToolSet, tool_fn};
use reins_mcp::{McpServer, McpService};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::convert::Infallible;
use std::hint::black_box;

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

fn direct_set() -> ToolSet {
    let mut set = ToolSet::new();
    set.add(tool_fn(
        "add",
        "Adds two integers.",
        |args: AddArgs| async move { Ok::<_, Infallible>(args.a + args.b) },
    ));
    set
}

async fn mcp_set(server: McpServer) -> (ToolSet, reins_mcp::McpClient) {
    let client = match server.connect().await {
        Ok(client) => client,
        Err(error) => panic!("could not connect: {error}"),
    };
    let tools = match client.tools().await {
        Ok(tools) => tools.only(["add"]),
        Err(error) => panic!("could not list: {error}"),
    };
    let mut set = ToolSet::new();
    for tool in tools {
        set.add(tool);
    }
    (set, client)
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|error| panic!("no runtime: {error}"));
    let args = json!({"a": 2, "b": 3});
    let direct = direct_set();
    let (stdio, _stdio_client) = runtime.block_on(mcp_set(McpServer::stdio(
        env!("CARGO_BIN_EXE_reins-mcp-demo"),
        Vec::<String>::new(),
    )));
    let (http, _http_client, _served) = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|error| panic!("no loopback port: {error}"));
        let served = McpService::new(direct_set())
            .serve_http(listener)
            .unwrap_or_else(|error| panic!("could not serve: {error}"));
        let (set, client) = mcp_set(McpServer::http(served.url())).await;
        (set, client, served)
    });

    let mut group = c.benchmark_group("call_overhead");
    for (name, set) in [
        ("direct", &direct),
        ("mcp_stdio", &stdio),
        ("mcp_http", &http),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| async {
                let execution = set
                    .call("add", &args, ToolCallContext::new("bench", "1", "1"))
                    .await;
                assert!(execution.outcome.is_success(), "{:?}", execution.output);
                black_box(execution)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
