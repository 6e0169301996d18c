//! A server's tool list that changes mid-run: an agent given the tools as a source lists them
//! again after `notifications/tools/list_changed` and advertises the new tool from the next
//! turn. The server is built on the official TypeScript SDK (`fixtures/growing_server.cjs`),
//! which sends the notification itself when a tool is registered.

use crate::servers::{connect, sdk_fixture_server};
use reins::agent::AgentBuilder;
use reins::hooks::approval::{ApprovalPolicy, Rule};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::RetrySafety;
use serde_json::json;

#[tokio::test]
async fn an_agent_takes_a_new_tool_list_between_turns() {
    let client = connect(sdk_fixture_server("growing_server.cjs", "growing")).await;
    let tools = client.tools().await.unwrap().prefix("door_");
    assert_eq!(tools.names().collect::<Vec<_>>(), ["door_unlock"]);
    assert!(!tools.is_stale());
    let source = tools.into_source();

    let model = ScriptedModel::new([
        Turn::tool_call("door_unlock", json!({})),
        Turn::tool_call("door_open", json!({"how": "wide"})),
        Turn::text("The door is open."),
    ]);
    // The policy is told nothing about the tools: `door_open`, unknown when the agent was
    // built, is allowed because the server declares it not destructive.
    let policy = ApprovalPolicy::new()
        .rule(Rule::allow("door_unlock"))
        .rule(Rule::allow("*").when_traits(|traits| !traits.destructive));
    let agent = AgentBuilder::new(model.clone())
        .tool_source(source)
        .add_hook(policy)
        .build();
    let run = agent
        .prompt("Open the door.")
        .extended_details()
        .await
        .unwrap();
    assert_eq!(run.output, "The door is open.");

    let advertised: Vec<Vec<String>> = model
        .requests()
        .iter()
        .map(|request| request.tools.iter().map(|tool| tool.name.clone()).collect())
        .collect();
    assert_eq!(advertised[0], ["door_unlock"]);
    assert_eq!(advertised[1], ["door_unlock", "door_open"]);
    let results: Vec<&str> = run
        .tool_results()
        .map(|result| result.content.as_str())
        .collect();
    assert_eq!(results, ["unlocked", "opened wide (1)"]);

    // What the new tool says about itself reaches the durable runtime: the server declares it
    // idempotent, so a call cut off by a crash may run again; `unlock` declares nothing.
    let listed = client.tools().await.unwrap();
    assert_eq!(
        listed.get("open").unwrap().annotations().retry_safety(),
        RetrySafety::Idempotent
    );
    assert_eq!(
        listed.get("unlock").unwrap().annotations().retry_safety(),
        RetrySafety::Undeclared
    );
}
