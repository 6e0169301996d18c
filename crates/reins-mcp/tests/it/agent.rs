//! An agent on `ScriptedModel` calling MCP tools through hooks and an approval policy fed
//! with the tools' annotations.

use crate::servers::{connect, everything_server};
use reins::agent::{
    AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext, OutcomeAction,
    OutcomeEvent,
};
use reins::hooks::approval::{ApprovalPolicy, Rule};
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::ToolOutcome;
use reins::tool::ToolTraits;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// Records what it sees of each tool call, from the events alone: at dispatch, the name,
/// arguments, the tool's MCP traits and its server; at outcome, the same traits and server,
/// the `mcp` extension and the outcome.
struct Observer {
    seen: Arc<Mutex<Vec<String>>>,
}

impl AgentHook for Observer {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if let (Some(name), Some(args)) = (event.tool_name(), event.tool_args()) {
            self.seen.lock().unwrap().push(format!(
                "dispatch {name} {args} read_only={:?} server={:?}",
                event.tool_traits().map(|t| t.read_only),
                event.tool_origin(),
            ));
        }
        DispatchAction::proceed()
    }

    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(result) = event.tool_outcome() {
            let outcome = match result.outcome() {
                ToolOutcome::Success => "success".to_owned(),
                ToolOutcome::Denied { .. } => "denied".to_owned(),
                other => format!("{other:?}"),
            };
            self.seen.lock().unwrap().push(format!(
                "outcome {} {outcome} read_only={:?} server={:?} mcp={}",
                result.tool_name(),
                event.tool_traits().map(|t| t.read_only),
                event.tool_origin(),
                result
                    .extensions()
                    .get("mcp")
                    .cloned()
                    .unwrap_or(Value::Null)
            ));
        }
        OutcomeAction::proceed()
    }
}

#[tokio::test]
async fn an_agent_calls_mcp_tools_through_hooks_and_annotation_approvals() {
    let client = connect(everything_server()).await;
    let tools = client
        .tools()
        .await
        .unwrap()
        .only(["echo", "toggle-simulated-logging"])
        .prefix("ev_");
    assert_eq!(
        tools.get("ev_echo").unwrap().traits(),
        ToolTraits::read_only().with_open_world(false)
    );
    assert!(
        !tools
            .get("ev_toggle-simulated-logging")
            .unwrap()
            .traits()
            .read_only
    );

    let policy = tools
        .register_traits(ApprovalPolicy::new())
        .rule(Rule::allow("*").when_traits(|traits| traits.read_only))
        .rule(Rule::deny("*", "only read-only MCP tools may run"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let observer = Observer { seen: seen.clone() };
    let model = ScriptedModel::new([
        Turn::tool_calls([
            ("ev_echo", json!({"message": "from the agent"})),
            ("ev_toggle-simulated-logging", json!({})),
        ]),
        Turn::text("Done."),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .tools(tools)
        .add_hook(observer)
        .add_hook(policy)
        .build();
    assert_eq!(agent.prompt("Echo something.").await.unwrap(), "Done.");

    let results: Vec<String> = model.requests()[1]
        .history
        .iter()
        .filter(|message| matches!(message, Message::Tool(_)))
        .map(Message::text)
        .collect();
    assert_eq!(
        results,
        ["Echo: from the agent", "only read-only MCP tools may run"]
    );

    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.contains(&r#"dispatch ev_echo {"message":"from the agent"} read_only=Some(true) server=Some("everything")"#.to_owned()),
        "{seen:#?}"
    );
    assert!(
        seen.contains(&r#"dispatch ev_toggle-simulated-logging {} read_only=Some(false) server=Some("everything")"#.to_owned()),
        "{seen:#?}"
    );
    assert!(
        seen.contains(
            &r#"outcome ev_echo success read_only=Some(true) server=Some("everything") mcp={"server":"everything","tool":"echo"}"#.to_owned()
        ),
        "{seen:#?}"
    );
    // The refused call never reached the server, and its outcome still says whose it was.
    assert!(
        seen.contains(
            &r#"outcome ev_toggle-simulated-logging denied read_only=Some(false) server=Some("everything") mcp=null"#.to_owned()
        ),
        "{seen:#?}"
    );
}
