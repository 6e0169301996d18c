//! Ways a model might try to get a call past an approval policy: a hallucinated tool name an
//! invalid-call hook repairs onto a denied tool, and a denied call hidden among allowed ones
//! of one turn run in parallel, a name in another case, style or script than the rule's glob.

use reins::agent::{
    AgentBuilder, AgentHook, HookContext, InvalidToolCallAction, InvalidToolCallContext,
    PromptError,
};
use reins::hooks::approval::{ApprovalPolicy, Rule};
use reins::hooks::invalid_calls::InvalidCalls;
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{Tool, tool_fn};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// A tool that notes each run of it in `ran`.
fn noting(name: &'static str, ran: &Arc<Mutex<Vec<String>>>) -> impl Tool + use<> {
    let ran = Arc::clone(ran);
    tool_fn(name, "A test tool.", move |args: Value| {
        ran.lock().unwrap().push(format!("{name} {args}"));
        async move { Ok::<_, std::convert::Infallible>(format!("ran {name}")) }
    })
}

/// The tool results the model read in its second request.
fn results(model: &ScriptedModel) -> Vec<String> {
    model.requests()[1]
        .history
        .iter()
        .filter(|message| matches!(message, Message::Tool(_)))
        .map(Message::text)
        .collect()
}

/// Renames every unknown tool to `delete_file`.
struct RepairToDelete;

impl AgentHook for RepairToDelete {
    async fn on_invalid_tool_call(
        &self,
        _ctx: &HookContext,
        _event: &InvalidToolCallContext,
    ) -> Option<InvalidToolCallAction> {
        Some(InvalidToolCallAction::repair("delete_file"))
    }
}

#[tokio::test]
async fn a_repaired_tool_name_is_judged_under_its_new_name() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        Turn::tool_call("functions.delete_file", json!({"path": "/etc/passwd"})),
        Turn::text("done"),
    ]);
    let policy = ApprovalPolicy::new()
        .rule(Rule::deny("delete_*", "deleting is not allowed"))
        .rule(Rule::allow("*"));
    let agent = AgentBuilder::new(model.clone())
        .tool(noting("delete_file", &ran))
        .add_hook(RepairToDelete)
        .add_hook(policy)
        .build();
    assert_eq!(agent.prompt("tidy up").await.unwrap(), "done");
    assert!(ran.lock().unwrap().is_empty());
    assert_eq!(results(&model), ["deleting is not allowed"]);
}

#[tokio::test]
async fn a_denied_call_among_parallel_calls_does_not_run() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        Turn::tool_calls([
            ("read_file", json!({"path": "a"})),
            ("delete_file", json!({"path": "a"})),
            ("read_file", json!({"path": "b"})),
            ("delete_file", json!({"path": "b", "force": true})),
        ]),
        Turn::text("done"),
    ]);
    let policy = ApprovalPolicy::new()
        .rule(Rule::allow("read_*"))
        .rule(Rule::deny("delete_*", "deleting is not allowed"));
    let agent = AgentBuilder::new(model.clone())
        .tool(noting("read_file", &ran))
        .tool(noting("delete_file", &ran))
        .add_hook(policy)
        .build();
    let answer = agent.prompt("tidy up").tool_concurrency(4).await.unwrap();
    assert_eq!(answer, "done");
    let mut ran = ran.lock().unwrap().clone();
    ran.sort();
    assert_eq!(
        ran,
        [r#"read_file {"path":"a"}"#, r#"read_file {"path":"b"}"#]
    );
    assert_eq!(
        results(&model),
        [
            "ran read_file",
            "deleting is not allowed",
            "ran read_file",
            "deleting is not allowed"
        ]
    );
}

/// With the ready-made name repair in front of the policy, a denied tool's name in another
/// case or style is repaired onto it and denied under its own name; one in look-alike letters
/// of another script, with an invisible character or with a wildcard of its own is no tool's
/// name, and ends the run unrun: no spelling gets past a deny rule's glob.
#[tokio::test]
async fn no_spelling_of_a_denied_tools_name_gets_it_run() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let agent = |model: &ScriptedModel| {
        let policy = ApprovalPolicy::new()
            .rule(Rule::deny("delete_*", "deleting is not allowed"))
            .rule(Rule::allow("*"));
        AgentBuilder::new(model.clone())
            .tool(noting("delete_file", &ran))
            .tool(noting("read_file", &ran))
            .add_hook(InvalidCalls::new())
            .add_hook(policy)
            .build()
    };
    let model = ScriptedModel::new([
        Turn::tool_calls([
            ("DELETE_FILE", json!({"path": "a"})),
            ("delete-file", json!({"path": "b"})),
            ("deleteFile", json!({"path": "c"})),
        ]),
        Turn::text("done"),
    ]);
    assert_eq!(agent(&model).prompt("tidy up").await.unwrap(), "done");
    assert_eq!(results(&model), ["deleting is not allowed"; 3]);
    for name in [
        "d\u{0435}lete_file",
        "delete_file\u{200B}",
        "delete_*",
        "read_*",
    ] {
        let model = ScriptedModel::new([Turn::tool_call(name, json!({"path": "d"}))]);
        let error = agent(&model).prompt("tidy up").await.unwrap_err();
        assert!(
            matches!(error, PromptError::UnknownToolCall { .. }),
            "{name:?}: {error:?}"
        );
    }
    assert_eq!(*ran.lock().unwrap(), Vec::<String>::new());
}
