//! reins tool sets and agents served over MCP, driven by the MCP Inspector's CLI mode and by
//! reins-mcp's own client.

use crate::servers::{connect, inspector};
use reins::agent::{AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{ToolSet, tool_fn};
use reins_mcp::{AgentTool, McpError, McpServer, McpService};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

const DEMO: &str = env!("CARGO_BIN_EXE_reins-mcp-demo");

fn names(listed: &Value) -> Vec<String> {
    listed["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {listed}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn first_text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {result}"))
}

#[tokio::test]
async fn the_inspector_lists_and_calls_a_tool_set_served_over_stdio() {
    let listed = inspector(&[DEMO, "--method", "tools/list"]).await;
    assert_eq!(names(&listed), ["add", "shout", "ask_agent"]);
    let add = &listed["tools"][0];
    assert_eq!(add["description"], "Adds two integers.");
    assert_eq!(add["inputSchema"]["properties"]["a"]["type"], "integer");
    assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]));

    let sum = inspector(&[
        DEMO,
        "--method",
        "tools/call",
        "--tool-name",
        "add",
        "--tool-arg",
        "a=2",
        "b=3",
    ])
    .await;
    assert_eq!(first_text(&sum), "5");
    assert_eq!(sum["isError"], false);

    // The agent as one tool: prompt in, answer out (its model called its own `add`).
    let answer = inspector(&[
        DEMO,
        "--method",
        "tools/call",
        "--tool-name",
        "ask_agent",
        "--tool-arg",
        "prompt=What is 20 + 22?",
    ])
    .await;
    assert_eq!(first_text(&answer), "The agent added 20 and 22: 42.");
}

#[derive(Deserialize, JsonSchema)]
struct TextArgs {
    text: String,
}

fn text_tools() -> ToolSet {
    let mut tools = ToolSet::new();
    tools.add(tool_fn(
        "shout",
        "Upper-cases a text.",
        |args: TextArgs| async move { Ok::<_, String>(args.text.to_uppercase()) },
    ));
    tools.add(tool_fn(
        "refuse",
        "Always fails.",
        |args: TextArgs| async move { Err::<String, _>(format!("refused {}", args.text)) },
    ));
    tools.add(tool_fn(
        "measure",
        "Counts the characters of a text.",
        |args: TextArgs| async move {
            let context = reins::tool::ToolCallContext::current();
            Ok::<_, String>(json!({
                "chars": args.text.chars().count(),
                "call": context.map(|c| c.internal_call_id().to_owned()),
            }))
        },
    ));
    tools
}

async fn loopback() -> tokio::net::TcpListener {
    tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inspector_calls_a_tool_set_served_over_streamable_http() {
    let served = McpService::new(text_tools())
        .serve_http(loopback().await)
        .unwrap();
    let url = served.url();
    let listed = inspector(&[&url, "--transport", "http", "--method", "tools/list"]).await;
    assert_eq!(names(&listed), ["shout", "refuse", "measure"]);
    let shouted = inspector(&[
        &url,
        "--transport",
        "http",
        "--method",
        "tools/call",
        "--tool-name",
        "shout",
        "--tool-arg",
        "text=hello",
    ])
    .await;
    assert_eq!(first_text(&shouted), "HELLO");
    served.shutdown();
}

/// Records the tools the served agent dispatches, proving its hooks run inside the call.
struct Recorder(Arc<Mutex<Vec<String>>>);

impl AgentHook for Recorder {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if let Some(name) = event.tool_name() {
            self.0.lock().unwrap().push(name.to_owned());
        }
        DispatchAction::proceed()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reins_client_uses_a_served_tool_set_and_agent_behind_a_bearer_token() {
    let dispatched = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        Turn::tool_call("shout", json!({"text": "inner"})),
        Turn::text("The agent shouted."),
    ]);
    let agent = AgentBuilder::new(model)
        .tools(text_tools_vec())
        .add_hook(Recorder(dispatched.clone()))
        .build();
    let mut tools = text_tools();
    tools.add(AgentTool::new("ask", "Asks the agent.", agent));
    let served = McpService::new(tools)
        .name("served")
        .serve_http_with_bearer_token(loopback().await, "served-token-1")
        .unwrap();

    // Without the token: refused, and the error names the server.
    let error = McpServer::http(served.url())
        .name("served")
        .bearer_token("wrong-token-2")
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Handshake { .. }), "{error:?}");
    assert!(!error.to_string().contains("wrong-token-2"), "{error}");

    let client = connect(
        McpServer::http(served.url())
            .name("served")
            .bearer_token("served-token-1"),
    )
    .await;
    assert_eq!(client.server_version().unwrap().0, "served");
    let listed = client.tools().await.unwrap();
    assert_eq!(
        listed.names().collect::<Vec<_>>(),
        ["shout", "refuse", "measure", "ask"]
    );

    let answer = client
        .call_tool("ask", json!({"prompt": "Shout something."}), None)
        .await
        .unwrap();
    assert_eq!(answer.text(), "The agent shouted.");
    assert_eq!(*dispatched.lock().unwrap(), ["shout"]);

    // A failing tool is an error result the caller's model reads.
    let refused = client
        .call_tool("refuse", json!({"text": "this"}), None)
        .await
        .unwrap();
    assert!(refused.is_error);
    assert!(refused.text().contains("refused this"), "{refused:?}");

    // JSON output is structured content too; the effect id reaches the served tool.
    let measured = client
        .call_tool("measure", json!({"text": "four"}), Some("effect-7"))
        .await
        .unwrap();
    assert_eq!(
        measured.structured_content,
        Some(json!({"chars": 4, "call": "effect-7"}))
    );

    // An unknown tool is a protocol error.
    let error = client
        .call_tool("missing", json!({}), None)
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Protocol { .. }), "{error:?}");
}

fn text_tools_vec() -> Vec<impl reins::tool::Tool> {
    vec![tool_fn(
        "shout",
        "Upper-cases a text.",
        |args: TextArgs| async move { Ok::<_, String>(args.text.to_uppercase()) },
    )]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_follows_every_page() {
    let served = McpService::new(text_tools())
        .page_size(1)
        .serve_http(loopback().await)
        .unwrap();
    // The Inspector sees the first page only, with a cursor for the next.
    let first_page = inspector(&[
        &served.url(),
        "--transport",
        "http",
        "--method",
        "tools/list",
    ])
    .await;
    assert_eq!(names(&first_page), ["shout"]);
    assert_eq!(first_page["nextCursor"], "1");
    // reins-mcp's client follows the cursors to the end.
    let client = connect(McpServer::http(served.url())).await;
    let tools = client.tools().await.unwrap();
    assert_eq!(
        tools.names().collect::<Vec<_>>(),
        ["shout", "refuse", "measure"]
    );
}

/// Sets its flag when dropped: whether a served call's future was dropped.
struct DropFlag(Arc<std::sync::atomic::AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_dropped_by_the_client_is_cancelled_on_the_server() {
    let started = Arc::new(tokio::sync::Notify::new());
    let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut tools = ToolSet::new();
    let (started_in, dropped_in) = (started.clone(), dropped.clone());
    tools.add(tool_fn("hang", "Never returns.", move |_: TextArgs| {
        let (started, dropped) = (started_in.clone(), dropped_in.clone());
        async move {
            let _flag = DropFlag(dropped);
            started.notify_one();
            std::future::pending::<()>().await;
            Ok::<String, String>("unreachable".to_owned())
        }
    }));
    let served = McpService::new(tools).serve_http(loopback().await).unwrap();
    let client = connect(McpServer::http(served.url())).await;

    let call = client.call_tool("hang", json!({"text": "x"}), None);
    tokio::select! {
        result = call => panic!("the hanging call returned: {result:?}"),
        () = started.notified() => {}
    }
    // The call's future is dropped here: rmcp sends `notifications/cancelled`.
    for _ in 0..200 {
        if dropped.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("the server never dropped the cancelled call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_served_tool_declares_about_itself_is_its_annotations() {
    use reins::tool::{RetrySafety, ToolTraits};
    let answer = |_: Value| async { Ok::<_, std::convert::Infallible>("ok") };
    let mut tools = ToolSet::new();
    tools.add(
        tool_fn("read", "Reads.", answer).traits(ToolTraits::read_only().with_open_world(false)),
    );
    tools.add(
        tool_fn("append", "Appends.", answer).traits(ToolTraits::additive().with_idempotent(true)),
    );
    tools.add(tool_fn("anything", "Declares nothing.", answer));
    tools.add(tool_fn("fetch", "Safe to repeat.", answer).retry_safety(RetrySafety::Idempotent));
    let served = McpService::new(tools).serve_http(loopback().await).unwrap();

    // On the wire, as another client reads it.
    let url = served.url();
    let listed = inspector(&[&url, "--transport", "http", "--method", "tools/list"]).await;
    assert_eq!(
        listed["tools"][0]["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(
        listed["tools"][1]["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true})
    );
    assert!(
        listed["tools"][2]
            .get("annotations")
            .is_none_or(Value::is_null),
        "{listed}"
    );
    assert_eq!(
        listed["tools"][3]["annotations"],
        json!({"idempotentHint": true})
    );

    // And back as reins traits: an undeclared tool is the worst case either way.
    let client = McpServer::http(&url).connect().await.unwrap();
    let traits: Vec<_> = client
        .tools()
        .await
        .unwrap()
        .iter()
        .map(|tool| tool.traits())
        .collect();
    assert_eq!(
        traits,
        [
            ToolTraits::read_only().with_open_world(false),
            ToolTraits::additive().with_idempotent(true),
            ToolTraits::default(),
            ToolTraits::default().with_idempotent(true),
        ]
    );
    // A client's durable run may run that one again after a crash.
    let fetch = client.tools().await.unwrap().into_iter().last().unwrap();
    assert_eq!(
        reins::tool::Tool::retry_safety(&fetch),
        RetrySafety::Idempotent
    );
    client.close();
    served.shutdown();
}
