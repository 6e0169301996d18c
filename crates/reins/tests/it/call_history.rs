//! A turn's tool calls keep their arguments in the history, however the run ends: while a
//! turn's calls run, the pending calls hold the arguments and the history's message gets them
//! back before anyone can see the history.

use crate::common::{add_tool, echo_tool};
use reins::agent::*;
use reins::message::{Message, ToolCall};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// Every tool call the history's assistant messages hold, as (name, arguments).
fn calls_in(history: &[Message]) -> Vec<(String, Value)> {
    history
        .iter()
        .flat_map(Message::tool_calls)
        .map(|call: &ToolCall| (call.name.clone(), call.arguments.clone()))
        .collect()
}

fn two_adds() -> Vec<(String, Value)> {
    vec![
        ("add".to_owned(), json!({"a": 1, "b": 2})),
        ("add".to_owned(), json!({"a": 3, "b": 4})),
    ]
}

fn two_add_turns() -> Vec<Turn> {
    vec![
        Turn::tool_calls([
            ("add", json!({"a": 1, "b": 2})),
            ("add", json!({"a": 3, "b": 4})),
        ]),
        Turn::text("3 and 7"),
    ]
}

#[tokio::test]
async fn the_next_request_and_the_answer_carry_every_calls_arguments() {
    for concurrency in [1, 2] {
        let model = ScriptedModel::new(two_add_turns());
        let agent = AgentBuilder::new(model.clone()).tool(add_tool()).build();
        let response = agent
            .prompt("add")
            .tool_concurrency(concurrency)
            .extended_details()
            .await
            .unwrap();
        assert_eq!(response.output, "3 and 7");
        assert_eq!(calls_in(&response.state.history), two_adds());
        let requests = model.requests();
        assert_eq!(calls_in(&requests[1].history), two_adds(), "{concurrency}");
    }
}

/// Stops the run from the outcome of the first call.
struct StopAfterFirstCall;
impl AgentHook for StopAfterFirstCall {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if event.tool_outcome().is_some() {
            return OutcomeAction::stop(StopReason::new("enough"));
        }
        OutcomeAction::proceed()
    }
}

#[tokio::test]
async fn a_run_stopped_while_its_calls_run_keeps_their_arguments() {
    let agent = AgentBuilder::new(ScriptedModel::new(two_add_turns()))
        .tool(add_tool())
        .add_hook(StopAfterFirstCall)
        .build();
    let error = agent.prompt("add").await.unwrap_err();
    assert!(matches!(error, PromptError::Cancelled { .. }), "{error:?}");
    assert_eq!(calls_in(error.history().unwrap()), two_adds());
}

#[tokio::test]
async fn a_run_failed_by_a_tool_keeps_every_calls_arguments() {
    let failing = tool_fn(
        "fail",
        "Fails.",
        |_: serde_json::Map<String, Value>| async {
            Err::<String, _>(std::io::Error::other("out of paper"))
        },
    );
    let model = ScriptedModel::new([Turn::tool_calls([
        ("add", json!({"a": 1, "b": 2})),
        ("fail", json!({"why": "test"})),
    ])]);
    let agent = AgentBuilder::new(model)
        .tool(add_tool())
        .tool(failing)
        .build();
    let error = agent
        .prompt("add, then fail")
        .tool_errors(ToolErrorPolicy::Fail)
        .await
        .unwrap_err();
    assert!(matches!(error, PromptError::Tool { .. }), "{error:?}");
    assert_eq!(
        calls_in(error.history().unwrap()),
        vec![
            ("add".to_owned(), json!({"a": 1, "b": 2})),
            ("fail".to_owned(), json!({"why": "test"})),
        ]
    );
}

/// Suspends every call to `pay`.
struct PayNeedsApproval;
impl AgentHook for PayNeedsApproval {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.tool_name() {
            Some("pay") => DispatchAction::suspend("needs a person"),
            _ => DispatchAction::proceed(),
        }
    }
}

#[tokio::test]
async fn a_suspended_run_holds_the_arguments_in_its_history_and_its_pending_calls() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        Turn::tool_calls([
            ("echo", json!({"text": "lookup"})),
            ("pay", json!({"text": "100 to bob"})),
        ]),
        Turn::text("Paid."),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .tool(echo_tool("echo", log.clone()))
        .tool(echo_tool("pay", log.clone()))
        .add_hook(PayNeedsApproval)
        .build();
    let error = agent.prompt("pay").await.unwrap_err();
    let PromptError::Suspended { run } = error else {
        panic!("expected a suspended run, got {error:?}");
    };
    let expected = vec![
        ("echo".to_owned(), json!({"text": "lookup"})),
        ("pay".to_owned(), json!({"text": "100 to bob"})),
    ];
    assert_eq!(calls_in(&run.state.history), expected);
    let pending: Vec<_> = run
        .state
        .pending_calls
        .iter()
        .map(|pending| (pending.call.name.clone(), pending.call.arguments.clone()))
        .collect();
    assert_eq!(pending, expected);

    // Resumed (here, after a round trip through JSON as a store would make), the run answers
    // the waiting call and the model reads both calls with their arguments.
    let stored: SuspendedRun =
        serde_json::from_str(&serde_json::to_string(&*run).unwrap()).unwrap();
    let internal_id = stored.pending().next().unwrap().internal_call_id.clone();
    let response = agent
        .resume(stored)
        .decide(internal_id, ToolDecision::approve())
        .extended_details()
        .await
        .unwrap();
    assert_eq!(response.output, "Paid.");
    assert_eq!(*log.lock().unwrap(), ["lookup", "100 to bob"]);
    assert_eq!(calls_in(&model.requests()[1].history), expected);
    assert_eq!(calls_in(&response.state.history), expected);
}

#[tokio::test]
async fn a_run_out_of_turns_keeps_the_calls_it_did_not_run() {
    let agent = AgentBuilder::new(ScriptedModel::new(two_add_turns()))
        .tool(add_tool())
        .build();
    let error = agent.prompt("add").max_turns(1).await.unwrap_err();
    assert!(matches!(error, PromptError::MaxTurns { .. }), "{error:?}");
    assert_eq!(calls_in(error.history().unwrap()), two_adds());
}
