//! What a tool declares about itself (`Tool::traits`) reaches hooks at dispatch and an
//! approval policy's trait rules, without telling the policy tool by tool.

use reins::agent::*;
use reins::hooks::approval::{ApprovalPolicy, Rule};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{ToolTraits, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::sync::{Arc, Mutex};

#[derive(Deserialize, JsonSchema)]
struct Path {
    path: String,
}

/// A tool's name and the traits its call carried at dispatch.
type Seen = Vec<(String, Option<ToolTraits>)>;

/// Records the traits each tool call carries at dispatch, and then at its outcome.
struct TraitsSeen {
    dispatched: Arc<Mutex<Seen>>,
    answered: Arc<Mutex<Seen>>,
}

impl AgentHook for TraitsSeen {
    async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if let Some(name) = event.tool_name() {
            let seen = (name.to_owned(), event.tool_traits());
            self.dispatched.lock().unwrap().push(seen);
        }
        DispatchAction::proceed()
    }

    async fn on_outcome(&self, _: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(result) = event.tool_outcome() {
            assert_eq!(event.tool_traits(), result.tool_traits());
            let seen = (result.tool_name().to_owned(), event.tool_traits());
            self.answered.lock().unwrap().push(seen);
        }
        OutcomeAction::proceed()
    }
}

#[tokio::test]
async fn declared_traits_reach_hooks_and_the_policy() {
    let model = ScriptedModel::new([
        Turn::tool_calls([
            ("read", json!({"path": "a.txt"})),
            ("wipe", json!({"path": "a.txt"})),
            ("append", json!({"path": "a.txt"})),
        ]),
        Turn::text("done"),
    ]);
    let tool = |name: &'static str| {
        tool_fn(name, "Touches a file.", move |args: Path| async move {
            Ok::<_, String>(format!("{name} {}", args.path))
        })
    };
    let seen = Arc::new(Mutex::new(Vec::new()));
    let answered = Arc::new(Mutex::new(Vec::new()));
    let policy = ApprovalPolicy::new()
        // What the policy is told wins over what the tool claims.
        .tool_traits("append", ToolTraits::destructive())
        .rule(Rule::allow("*").when_traits(|traits| !traits.destructive));
    let agent = AgentBuilder::new(model)
        .tool(tool("read").traits(ToolTraits::read_only()))
        .tool(tool("wipe"))
        .tool(tool("append").traits(ToolTraits::additive()))
        .add_hook(TraitsSeen {
            dispatched: seen.clone(),
            answered: answered.clone(),
        })
        .add_hook(policy)
        .build();
    let run = agent.prompt("go").extended_details().await.unwrap();
    assert_eq!(run.output, "done");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            ("read".to_owned(), Some(ToolTraits::read_only())),
            ("wipe".to_owned(), None),
            ("append".to_owned(), Some(ToolTraits::additive())),
        ]
    );
    // The outcome of every call carries the same traits, whether the call ran or was denied
    // ("wipe" and "append" were), so an outcome hook judges it as the dispatch hook did.
    assert_eq!(*answered.lock().unwrap(), *seen.lock().unwrap());
    let results: Vec<&str> = run
        .tool_results()
        .map(|result| result.content.as_str())
        .collect();
    assert_eq!(results[0], "read a.txt", "a read-only tool is allowed");
    assert!(
        results[1].contains("not allowed"),
        "undeclared: {}",
        results[1]
    );
    assert!(
        results[2].contains("not allowed"),
        "the policy's own traits win: {}",
        results[2]
    );
}
