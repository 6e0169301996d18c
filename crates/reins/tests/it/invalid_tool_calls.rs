//! Invalid tool calls: unknown or disallowed tools and malformed arguments, with every action.

use crate::common::{Recorder, add_tool, echo_tool};
use reins::agent::*;
use reins::message::{Message, ToolChoice};
use reins::testing::{ScriptedModel, Turn};
use serde_json::json;
use std::sync::{Arc, Mutex};

struct RepairDefaultApi;
impl AgentHook for RepairDefaultApi {
    async fn on_invalid_tool_call(
        &self,
        _ctx: &HookContext,
        event: &InvalidToolCallContext,
    ) -> Option<InvalidToolCallAction> {
        match event.reason {
            InvalidToolCallReason::UnknownTool if event.tool_name == "default_api" => {
                Some(InvalidToolCallAction::repair("echo"))
            }
            InvalidToolCallReason::UnknownTool => Some(InvalidToolCallAction::retry(format!(
                "Use one of these tools: {:?}",
                event.available_tools
            ))),
            _ => None,
        }
    }
}

/// Answers every invalid call with one fixed action, and records what it saw.
#[derive(Clone)]
struct Always {
    action: InvalidToolCallAction,
    seen: Arc<Mutex<Vec<InvalidToolCallContext>>>,
}
impl Always {
    fn new(action: InvalidToolCallAction) -> Self {
        Always {
            action,
            seen: Arc::default(),
        }
    }
}
impl AgentHook for Always {
    async fn on_invalid_tool_call(
        &self,
        _ctx: &HookContext,
        event: &InvalidToolCallContext,
    ) -> Option<InvalidToolCallAction> {
        self.seen.lock().unwrap().push(event.clone());
        Some(self.action.clone())
    }
}

fn calls() -> Arc<Mutex<Vec<String>>> {
    Arc::new(Mutex::new(Vec::new()))
}

#[tokio::test]
async fn an_unknown_tool_fails_the_run_when_no_hook_decides() {
    let model = ScriptedModel::new([Turn::tool_call("nope", json!({}))]);
    let agent = AgentBuilder::new(model).tool(add_tool()).build();
    let error = agent.prompt("x").await.unwrap_err();
    // The message says why in words, not in the enum's Rust name.
    assert_eq!(
        error.to_string(),
        "the model made an invalid call to tool `nope`: no tool of that name"
    );
    let PromptError::UnknownToolCall {
        tool_name,
        reason,
        history,
        ..
    } = error
    else {
        panic!("expected UnknownToolCall");
    };
    assert_eq!(tool_name, "nope");
    assert_eq!(reason, InvalidToolCallReason::UnknownTool);
    assert_eq!(history, vec![Message::user("x")]);
}

#[tokio::test]
async fn an_unhandled_unknown_tool_can_be_ignored() {
    let log = calls();
    let model = ScriptedModel::new([
        Turn::text("Let me check.")
            .then_tool_call("nope", json!({}))
            .then_tool_call("echo", json!({"text": "real"})),
        Turn::text("done"),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .tool(echo_tool("echo", log.clone()))
        .build();
    let response = agent
        .prompt("x")
        .unhandled_invalid_tool_call(UnhandledInvalidToolCall::Ignore)
        .extended_details()
        .await
        .unwrap();
    assert_eq!(response.output, "done");
    assert_eq!(*log.lock().unwrap(), vec!["real"]);
    let assistant = &response.history()[1];
    let names: Vec<_> = assistant.tool_calls().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        vec!["echo"],
        "the ignored call is dropped from the turn"
    );
}

#[tokio::test]
async fn repair_renames_the_tool_and_suppresses_the_turn_events() {
    let log = calls();
    let model = ScriptedModel::new([
        Turn::tool_call("default_api", json!({"text": "hello"})),
        Turn::text("done"),
    ]);
    let recorder = Recorder::default();
    let agent = AgentBuilder::new(model.clone())
        .tool(echo_tool("echo", log.clone()))
        .add_hook(RepairDefaultApi)
        .add_hook(recorder.clone())
        .build();
    let response = agent.prompt("x").extended_details().await.unwrap();
    assert_eq!(*log.lock().unwrap(), vec!["hello"]);
    let names: Vec<_> = response.history()[1]
        .tool_calls()
        .map(|c| c.name.clone())
        .collect();
    assert_eq!(names, vec!["echo"]);
    let lines = recorder.lines();
    assert!(!lines.contains(&"turn_finished 1".to_string()), "{lines:?}");
    assert!(
        !lines.contains(&"completion_response 1".to_string()),
        "{lines:?}"
    );
    assert!(lines.contains(&"turn_finished 2".to_string()));
    // The recorder comes after the deciding hook: first decision wins.
    assert!(!lines.iter().any(|l| l.starts_with("invalid")), "{lines:?}");
}

#[tokio::test]
async fn a_repaired_name_is_checked_again() {
    let model = ScriptedModel::new([Turn::tool_call("a", json!({}))]);
    let hook = Always::new(InvalidToolCallAction::repair("still_unknown"));
    let agent = AgentBuilder::new(model)
        .tool(add_tool())
        .add_hook(hook.clone())
        .build();
    let error = agent.prompt("x").await.unwrap_err();
    assert!(
        matches!(error, PromptError::UnknownToolCall { ref tool_name, .. } if tool_name == "still_unknown")
    );
    let seen: Vec<_> = hook
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|c| c.tool_name.clone())
        .collect();
    assert_eq!(
        seen,
        vec!["a", "still_unknown", "still_unknown", "still_unknown"]
    );
}

#[tokio::test]
async fn retry_drops_the_turn_and_asks_again_with_feedback() {
    let log = calls();
    let model = ScriptedModel::new([
        Turn::tool_call("search", json!({})),
        Turn::tool_call("echo", json!({"text": "ok"})),
        Turn::text("done"),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .tool(echo_tool("echo", log.clone()))
        .add_hook(RepairDefaultApi)
        .build();
    let response = agent
        .prompt("x")
        .max_invalid_tool_call_retries(1)
        .extended_details()
        .await
        .unwrap();
    assert_eq!(response.output, "done");
    assert_eq!(response.turns(), 3, "the retry counts as a model call");
    assert_eq!(
        model.requests()[1].history,
        vec![
            Message::user("x"),
            Message::user("Use one of these tools: [\"echo\"]"),
        ]
    );
}

#[tokio::test]
async fn retry_needs_an_allowance() {
    let model = ScriptedModel::new([Turn::tool_call("search", json!({})), Turn::text("x")]);
    let agent = AgentBuilder::new(model)
        .tool(add_tool())
        .add_hook(RepairDefaultApi)
        .build();
    let error = agent.prompt("x").await.unwrap_err();
    assert!(matches!(error, PromptError::UnknownToolCall { .. }));
}

#[tokio::test]
async fn retry_counts_against_max_turns() {
    let model = ScriptedModel::new([
        Turn::tool_call("search", json!({})),
        Turn::tool_call("search", json!({})),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(add_tool())
        .add_hook(RepairDefaultApi)
        .build();
    let error = agent
        .prompt("x")
        .max_invalid_tool_call_retries(5)
        .max_turns(2)
        .await
        .unwrap_err();
    assert!(matches!(error, PromptError::MaxTurns { .. }), "{error:?}");
}

#[tokio::test]
async fn skip_answers_every_call_of_the_turn_without_running_any() {
    let log = calls();
    let model = ScriptedModel::new([
        Turn::tool_calls([
            ("echo", json!({"text": "first"})),
            ("bogus", json!({})),
            ("echo", json!({"text": "third"})),
        ]),
        Turn::text("adapted"),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .tool(echo_tool("echo", log.clone()))
        .add_hook(Always::new(InvalidToolCallAction::skip("no such tool")))
        .build();
    let answer = agent.prompt("x").await.unwrap();
    assert_eq!(answer, "adapted");
    assert!(log.lock().unwrap().is_empty());
    let history = &model.requests()[1].history;
    assert_eq!(history.len(), 5);
    assert!(history[2].text().starts_with("Not executed"));
    assert_eq!(
        history[3],
        Message::tool_result("call_1_1", "bogus", "no such tool")
    );
    assert!(history[4].text().starts_with("Not executed"));
}

#[tokio::test]
async fn stop_and_fail_end_the_run() {
    let model = ScriptedModel::new([Turn::tool_call("bogus", json!({}))]);
    let agent = AgentBuilder::new(model)
        .add_hook(Always::new(InvalidToolCallAction::stop("halt")))
        .build();
    let error = agent.prompt("x").await.unwrap_err();
    assert!(matches!(error, PromptError::Cancelled { ref reason, .. } if reason == "halt"));

    let model = ScriptedModel::new([Turn::tool_call("bogus", json!({}))]);
    let agent = AgentBuilder::new(model)
        .add_hook(Always::new(InvalidToolCallAction::fail()))
        .build();
    let error = agent.prompt("x").await.unwrap_err();
    assert!(matches!(error, PromptError::UnknownToolCall { .. }));
}

struct OnlyEcho;
impl AgentHook for OnlyEcho {
    async fn on_completion_call(
        &self,
        _ctx: &HookContext,
        _event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        CompletionCallAction::patch(RequestPatch::new().active_tools(["echo"]))
    }
}

#[tokio::test]
async fn a_tool_outside_active_tools_or_tool_choice_is_not_allowed() {
    // Outside active_tools.
    let hook = Always::new(InvalidToolCallAction::fail());
    let model = ScriptedModel::new([Turn::tool_call("add", json!({"a": 1, "b": 1}))]);
    let agent = AgentBuilder::new(model)
        .tool(add_tool())
        .tool(echo_tool("echo", calls()))
        .add_hook(OnlyEcho)
        .add_hook(hook.clone())
        .build();
    agent.prompt("x").await.unwrap_err();
    let seen = hook.seen.lock().unwrap().clone();
    assert_eq!(seen[0].reason, InvalidToolCallReason::NotAllowed);
    assert_eq!(seen[0].available_tools, vec!["echo"]);

    // Excluded by tool_choice.
    for choice in [ToolChoice::None, ToolChoice::Specific("echo".into())] {
        let hook = Always::new(InvalidToolCallAction::fail());
        let model = ScriptedModel::new([Turn::tool_call("add", json!({"a": 1, "b": 1}))]);
        let agent = AgentBuilder::new(model)
            .tool(add_tool())
            .tool(echo_tool("echo", calls()))
            .tool_choice(choice.clone())
            .add_hook(hook.clone())
            .build();
        let error = agent.prompt("x").await.unwrap_err();
        assert!(matches!(
            error,
            PromptError::UnknownToolCall {
                reason: InvalidToolCallReason::NotAllowed,
                ..
            }
        ));
        assert_eq!(
            hook.seen.lock().unwrap()[0].reason,
            InvalidToolCallReason::NotAllowed
        );
    }
}

/// Arguments a token limit cut off: the model is told why they do not parse.
#[tokio::test]
async fn arguments_cut_off_by_the_token_limit_are_answered_as_cut_off() {
    use reins::completion::FinishReason;
    let model = ScriptedModel::new([
        Turn::tool_call("add", json!("{\"a\": 1, \"b")).finish_reason(FinishReason::Length),
        Turn::tool_call("add", json!("{\"a\": 1, oops")),
        Turn::text("fixed"),
    ]);
    let agent = AgentBuilder::new(model.clone()).tool(add_tool()).build();
    assert_eq!(agent.prompt("x").await.unwrap(), "fixed");
    let cut_off = model.requests()[1].history.last().unwrap().text();
    assert!(
        cut_off.contains("cut off at its output token limit"),
        "{cut_off}"
    );
    // Arguments the model wrote whole but wrong are not said to be cut off.
    let malformed = model.requests()[2].history.last().unwrap().text();
    assert!(malformed.contains("must be a JSON object"), "{malformed}");
    assert!(!malformed.contains("cut off"), "{malformed}");
}

#[tokio::test]
async fn malformed_arguments_are_answered_with_feedback_by_default() {
    let model = ScriptedModel::new([
        Turn::tool_call("add", json!("{\"a\": 1, oops")),
        Turn::text("fixed"),
    ]);
    let recorder = Recorder::default();
    let agent = AgentBuilder::new(model.clone())
        .tool(add_tool())
        .add_hook(recorder.clone())
        .build();
    let answer = agent.prompt("x").await.unwrap();
    assert_eq!(answer, "fixed");
    let feedback = model.requests()[1].history.last().unwrap().text();
    assert!(feedback.contains("must be a JSON object"), "{feedback}");
    assert!(feedback.contains("{\"a\": 1, oops"), "{feedback}");
    let lines = recorder.lines();
    assert!(lines.contains(&"invalid add MalformedArguments".to_string()));
    assert!(lines.contains(&"turn_finished 1".to_string()));
}

#[tokio::test]
async fn malformed_arguments_cannot_be_repaired() {
    let model = ScriptedModel::new([Turn::tool_call("add", json!([1, 2]))]);
    let hook = Always::new(InvalidToolCallAction::repair("add"));
    let agent = AgentBuilder::new(model)
        .tool(add_tool())
        .add_hook(hook.clone())
        .build();
    let error = agent.prompt("x").await.unwrap_err();
    assert!(matches!(
        error,
        PromptError::UnknownToolCall {
            reason: InvalidToolCallReason::MalformedArguments,
            ..
        }
    ));
    let seen = hook.seen.lock().unwrap()[0].clone();
    assert_eq!(seen.args, "[1,2]");
    assert_eq!(seen.history, vec![Message::user("x")]);
}

/// The step view: `Flow::Repair` through `on_event`.
struct RepairViaFlow;
impl AgentHook for RepairViaFlow {
    async fn on_event(&self, _ctx: &HookContext, event: StepEvent<'_>) -> Flow {
        match event {
            StepEvent::InvalidToolCall(context) if context.tool_name == "ech0" => {
                Flow::Repair("echo".into())
            }
            _ => Flow::Continue,
        }
    }
}

#[tokio::test]
async fn the_step_view_can_repair_too() {
    let log = calls();
    let model = ScriptedModel::new([
        Turn::tool_call("ech0", json!({"text": "via flow"})),
        Turn::text("ok"),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(echo_tool("echo", log.clone()))
        .add_hook(RepairViaFlow)
        .build();
    agent.prompt("x").await.unwrap();
    assert_eq!(*log.lock().unwrap(), vec!["via flow"]);
}

/// Arguments that are not JSON are answered with why, even holding an integer beyond 64 bits:
/// only JSON refused for that integer alone is answered by asking for it as a string.
#[tokio::test]
async fn arguments_broken_besides_a_huge_integer_are_not_answered_about_the_integer() {
    use reins::completion::FinishReason;
    let huge = "123456789012345678901234";
    let model = ScriptedModel::new([
        Turn::tool_call("add", json!(format!("{{\"a\": {huge}, \"b")))
            .finish_reason(FinishReason::Length),
        // Quoted already, though not as JSON quotes.
        Turn::tool_call("add", json!(format!("{{'a': '{huge}', 'b': 1}}"))),
        Turn::tool_call("add", json!(format!("{{\"a\": {huge}, \"b\": 1}}"))),
        Turn::text("fixed"),
    ]);
    let agent = AgentBuilder::new(model.clone()).tool(add_tool()).build();
    assert_eq!(agent.prompt("x").await.unwrap(), "fixed");
    let answer = |turn: usize| model.requests()[turn].history.last().unwrap().text();
    let cut_off = answer(1);
    assert!(
        cut_off.contains("cut off at its output token limit"),
        "{cut_off}"
    );
    let quoted = answer(2);
    assert!(quoted.contains("must be a JSON object"), "{quoted}");
    for text in [&cut_off, &quoted] {
        assert!(!text.contains("send it as a string"), "{text}");
    }
    let too_large = answer(3);
    assert!(too_large.contains("send it as a string"), "{too_large}");
}
