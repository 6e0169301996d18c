//! Every row of the hooks guide's "Events and actions" table.
//!
//! Over 500 lines because the table is checked in one place, row after row, in the guide's
//! order, so a row without its test is easy to see.

use crate::common::{Recorder, SummariseFirstDispatch, add_tool, echo_tool};
use reins::agent::*;
use reins::completion::{CompletionResponse, FinishReason};
use reins::message::{AssistantContent, Document, Message, OneOrMany, ToolChoice};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{ToolOutcome, ToolOutput};
use serde_json::json;
use std::sync::{Arc, Mutex};

struct RewritePrompt(&'static str);
impl AgentHook for RewritePrompt {
    async fn on_run_start(&self, _ctx: &HookContext, event: RunStartEvent<'_>) -> RunStartAction {
        RunStartAction::rewrite(format!("{} {}", event.prompt.text(), self.0))
    }
}

#[tokio::test]
async fn run_start_rewrites_chain_and_reach_the_model() {
    let model = ScriptedModel::new([Turn::text("ok")]);
    let agent = AgentBuilder::new(model.clone())
        .add_hook(RewritePrompt("[agent]"))
        .build();
    agent
        .prompt("hi")
        .add_hook(RewritePrompt("[run]"))
        .await
        .unwrap();
    assert_eq!(
        model.requests()[0].history,
        vec![Message::user("hi [agent] [run]")]
    );
}

/// A prompt `on_run_start` saw, with the history before it.
type SeenStart = (Message, Vec<Message>);

/// Records what `on_run_start` saw, and stops the run when asked to.
struct SeeRunStart {
    seen: Arc<Mutex<Vec<SeenStart>>>,
    stop: bool,
}
impl AgentHook for SeeRunStart {
    async fn on_run_start(&self, _ctx: &HookContext, event: RunStartEvent<'_>) -> RunStartAction {
        let seen = (event.prompt.clone(), event.history.to_vec());
        self.seen.lock().unwrap().push(seen);
        if self.stop {
            RunStartAction::stop("not today")
        } else {
            RunStartAction::continue_run()
        }
    }
}

#[tokio::test]
async fn run_start_sees_the_earlier_conversation_without_the_prompt() {
    let earlier = vec![
        Message::user("Who are you?"),
        Message::assistant("A helper."),
    ];
    for stop in [false, true] {
        let model = ScriptedModel::new([Turn::text("ok")]);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let agent = AgentBuilder::new(model.clone())
            .add_hook(SeeRunStart {
                seen: Arc::clone(&seen),
                stop,
            })
            .build();
        let result = agent
            .prompt("Add 1 and 2.")
            .with_history(earlier.clone())
            .await;
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen,
            vec![(Message::user("Add 1 and 2."), earlier.clone())],
            "stop: {stop}"
        );
        let mut prompted = earlier.clone();
        prompted.push(Message::user("Add 1 and 2."));
        if stop {
            let error = result.unwrap_err();
            assert!(matches!(error, PromptError::Cancelled { .. }), "{error}");
            assert_eq!(error.history(), Some(prompted.as_slice()));
            assert!(model.requests().is_empty());
        } else {
            assert_eq!(result.unwrap(), "ok");
            assert_eq!(model.requests()[0].history, prompted);
        }
    }
}

/// Stops at one kind of event.
struct StopAt(StepEventKind);
impl AgentHook for StopAt {
    async fn on_event(&self, _ctx: &HookContext, event: StepEvent<'_>) -> Flow {
        if event.kind() == self.0 {
            Flow::terminate(format!("stopped at {:?}", self.0))
        } else {
            Flow::Continue
        }
    }
}

#[tokio::test]
async fn stop_from_any_event_cancels_with_the_history() {
    let kinds = [
        StepEventKind::RunStart,
        StepEventKind::CompletionCall,
        StepEventKind::CompletionDispatch,
        StepEventKind::CompletionResponse,
        StepEventKind::ModelTurnFinished,
        StepEventKind::ToolDispatch,
        StepEventKind::ToolOutcome,
        StepEventKind::TextDelta,
        StepEventKind::ToolCallDelta,
        StepEventKind::StreamResponseFinish,
    ];
    for kind in kinds {
        let model = ScriptedModel::new([
            Turn::tool_call("add", json!({"a": 1, "b": 2})),
            Turn::text("three"),
        ]);
        let agent = AgentBuilder::new(model).tool(add_tool()).build();
        let streaming = matches!(
            kind,
            StepEventKind::TextDelta
                | StepEventKind::ToolCallDelta
                | StepEventKind::StreamResponseFinish
        );
        let request = agent.prompt("1+2").add_hook(StopAt(kind));
        let error = if streaming {
            use futures::StreamExt;
            let mut stream = request.stream();
            let mut last = None;
            while let Some(item) = stream.next().await {
                if let Err(error) = item {
                    last = Some(error);
                }
            }
            last.expect("the stream ends with the error")
        } else {
            request.await.unwrap_err()
        };
        let PromptError::Cancelled {
            reason, history, ..
        } = error
        else {
            panic!("{kind:?}: expected Cancelled, got {error:?}");
        };
        assert_eq!(reason, format!("stopped at {kind:?}"));
        assert_eq!(history.first(), Some(&Message::user("1+2")), "{kind:?}");
    }
}

struct ForceToolOnFirstTurn;
impl AgentHook for ForceToolOnFirstTurn {
    async fn on_completion_call(
        &self,
        ctx: &HookContext,
        _event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        if ctx.turn() == 1 {
            CompletionCallAction::patch(
                RequestPatch::new()
                    .active_tools(["echo"])
                    .tool_choice(ToolChoice::Required)
                    .temperature(0.0)
                    .max_tokens(5)
                    .preamble("patched")
                    .additional_params(json!({"top_p": 0.5}))
                    .context(Document::new("p", "patched doc")),
            )
        } else {
            CompletionCallAction::continue_run()
        }
    }
}

#[tokio::test]
async fn a_patch_applies_to_one_turn_only() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        Turn::tool_call("echo", json!({"text": "hello"})),
        Turn::text("done"),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .preamble("base")
        .temperature(0.7)
        .additional_params(json!({"seed": 1}))
        .tool(add_tool())
        .tool(echo_tool("echo", calls.clone()))
        .add_hook(ForceToolOnFirstTurn)
        .build();
    agent.prompt("go").await.unwrap();
    let requests = model.requests();
    let first = &requests[0];
    assert_eq!(first.tool_names().collect::<Vec<_>>(), vec!["echo"]);
    assert_eq!(first.tool_choice, Some(ToolChoice::Required));
    assert_eq!(first.temperature, Some(0.0));
    assert_eq!(first.max_tokens, Some(5));
    assert_eq!(first.preamble.as_deref(), Some("patched"));
    assert_eq!(
        first.additional_params,
        Some(json!({"seed": 1, "top_p": 0.5}))
    );
    assert_eq!(first.documents, vec![Document::new("p", "patched doc")]);
    let second = &requests[1];
    assert_eq!(second.tool_names().collect::<Vec<_>>(), vec!["add", "echo"]);
    assert_eq!(second.tool_choice, None);
    assert_eq!(second.temperature, Some(0.7));
    assert_eq!(second.preamble.as_deref(), Some("base"));
    assert_eq!(second.additional_params, Some(json!({"seed": 1})));
    assert!(second.documents.is_empty());
    assert_eq!(*calls.lock().unwrap(), vec!["hello"]);
}

struct ReplaceHistory;
impl AgentHook for ReplaceHistory {
    async fn on_completion_call(
        &self,
        _ctx: &HookContext,
        _event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        CompletionCallAction::patch(RequestPatch::new().history(vec![Message::user("summary")]))
    }
}

#[tokio::test]
async fn a_history_patch_changes_what_is_sent_not_the_run() {
    let model = ScriptedModel::new([Turn::text("ok")]);
    let agent = AgentBuilder::new(model.clone())
        .add_hook(ReplaceHistory)
        .build();
    let response = agent
        .prompt("long question")
        .with_history(vec![Message::user("a"), Message::assistant("b")])
        .extended_details()
        .await
        .unwrap();
    assert_eq!(model.requests()[0].history, vec![Message::user("summary")]);
    assert_eq!(response.history().len(), 4);
    assert_eq!(response.history()[2], Message::user("long question"));
}

struct RepeatOnce;
impl AgentHook for RepeatOnce {
    async fn on_model_turn_finished(
        &self,
        ctx: &HookContext,
        _event: ModelTurnFinished<'_>,
    ) -> ModelTurnAction {
        if ctx.turn() == 1 {
            ModelTurnAction::repeat()
        } else {
            ModelTurnAction::continue_run()
        }
    }
}

#[tokio::test]
async fn repeat_discards_the_response_and_asks_again() {
    let model = ScriptedModel::new([Turn::text("bad"), Turn::text("good")]);
    let agent = AgentBuilder::new(model.clone())
        .add_hook(RepeatOnce)
        .build();
    let response = agent.prompt("q").extended_details().await.unwrap();
    assert_eq!(response.output, "good");
    assert_eq!(response.turns(), 2);
    let requests = model.requests();
    assert_eq!(requests[0].history, requests[1].history);
    assert_eq!(
        response.history(),
        &[Message::user("q"), Message::assistant("good")]
    );
}

#[tokio::test]
async fn repeat_counts_against_max_turns() {
    let model = ScriptedModel::new([Turn::text("bad"), Turn::text("good")]);
    let agent = AgentBuilder::new(model).add_hook(RepeatOnce).build();
    let error = agent.prompt("q").max_turns(1).await.unwrap_err();
    assert!(matches!(error, PromptError::MaxTurns { max_turns: 1, .. }));
}

/// Retries truncated answers at most twice, counting in the scratchpad.
struct RetryTruncated;
#[derive(Default)]
struct Retries(usize);
impl AgentHook for RetryTruncated {
    async fn on_model_turn_finished(
        &self,
        ctx: &HookContext,
        event: ModelTurnFinished<'_>,
    ) -> ModelTurnAction {
        if event.finish_reason != Some(&FinishReason::Length) {
            return ModelTurnAction::continue_run();
        }
        let attempt = ctx.scratchpad().update(|retries: &mut Retries| {
            retries.0 += 1;
            retries.0
        });
        if attempt > 2 {
            return ModelTurnAction::stop("response kept getting truncated");
        }
        ModelTurnAction::retry_with_feedback("That was cut off. Answer again, more briefly.")
    }
}

#[tokio::test]
async fn retry_with_feedback_keeps_the_response_and_adds_the_feedback() {
    let model = ScriptedModel::new([
        Turn::text("a very long").finish_reason(FinishReason::Length),
        Turn::text("short"),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .add_hook(RetryTruncated)
        .build();
    let response = agent.prompt("q").extended_details().await.unwrap();
    assert_eq!(response.output, "short");
    assert_eq!(
        model.requests()[1].history,
        vec![
            Message::user("q"),
            Message::assistant("a very long"),
            Message::user("That was cut off. Answer again, more briefly."),
        ]
    );
}

#[tokio::test]
async fn a_scratchpad_counter_bounds_the_retries() {
    let truncated = || Turn::text("cut").finish_reason(FinishReason::Length);
    let model = ScriptedModel::new([truncated(), truncated(), truncated(), Turn::text("x")]);
    let agent = AgentBuilder::new(model).add_hook(RetryTruncated).build();
    let error = agent.prompt("q").await.unwrap_err();
    let PromptError::Cancelled {
        reason, history, ..
    } = error
    else {
        panic!("expected Cancelled");
    };
    assert_eq!(reason, "response kept getting truncated");
    // prompt, 3 × (truncated answer), 2 × feedback: the stopped turn is kept too.
    assert_eq!(history.len(), 6);
    assert_eq!(history.last(), Some(&Message::assistant("cut")));
}

struct AlwaysRetry;
impl AgentHook for AlwaysRetry {
    async fn on_model_turn_finished(
        &self,
        _ctx: &HookContext,
        _event: ModelTurnFinished<'_>,
    ) -> ModelTurnAction {
        ModelTurnAction::retry_with_feedback("again")
    }
}

#[tokio::test]
async fn retrying_a_turn_with_tool_calls_is_rejected() {
    let model = ScriptedModel::new([Turn::tool_call("add", json!({"a": 1, "b": 1}))]);
    let agent = AgentBuilder::new(model)
        .tool(add_tool())
        .add_hook(AlwaysRetry)
        .build();
    let error = agent.prompt("q").await.unwrap_err();
    assert!(
        matches!(&error, PromptError::RejectedAction { reason, .. } if reason.contains("tool calls")),
        "{error:?}"
    );
}

#[tokio::test]
async fn retry_with_feedback_counts_against_max_turns() {
    let model = ScriptedModel::new([Turn::text("1"), Turn::text("2"), Turn::text("3")]);
    let agent = AgentBuilder::new(model.clone())
        .add_hook(AlwaysRetry)
        .build();
    let error = agent.prompt("q").max_turns(3).await.unwrap_err();
    assert!(matches!(error, PromptError::MaxTurns { max_turns: 3, .. }));
    assert_eq!(model.requests().len(), 3);
}

struct TransferPolicy {
    max_auto_transfer: u64,
}
impl AgentHook for TransferPolicy {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        let (Some(tool_name), Some(args)) = (event.tool_name(), event.tool_args()) else {
            return DispatchAction::proceed();
        };
        if tool_name != "echo" {
            return DispatchAction::proceed();
        }
        let amount = serde_json::from_str::<serde_json::Value>(args)
            .ok()
            .and_then(|v| v.get("amount").and_then(|a| a.as_u64()));
        match amount {
            Some(n) if n <= self.max_auto_transfer => DispatchAction::proceed(),
            Some(n) => DispatchAction::skip(format!("denied by policy: ${n} is over the limit")),
            None => DispatchAction::skip("denied by policy: missing amount"),
        }
    }
}

#[derive(Clone, Default)]
struct Outcomes(Arc<Mutex<Vec<ToolOutcome>>>);
impl AgentHook for Outcomes {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(result) = event.tool_outcome() {
            self.0.lock().unwrap().push(result.outcome().clone());
        }
        OutcomeAction::proceed()
    }
}

#[tokio::test]
async fn skip_answers_the_call_with_the_reason_and_the_model_goes_on() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        Turn::tool_call("echo", json!({"text": "pay", "amount": 5000})),
        Turn::text("I could not pay."),
    ]);
    let outcomes = Outcomes::default();
    let agent = AgentBuilder::new(model.clone())
        .tool(echo_tool("echo", calls.clone()))
        .add_hook(TransferPolicy {
            max_auto_transfer: 100,
        })
        .add_hook(outcomes.clone())
        .build();
    let answer = agent.prompt("pay").await.unwrap();
    assert_eq!(answer, "I could not pay.");
    assert!(calls.lock().unwrap().is_empty(), "the tool must not run");
    assert_eq!(
        model.requests()[1].history.last(),
        Some(&Message::tool_result(
            "call_1_0",
            "echo",
            "denied by policy: $5000 is over the limit"
        ))
    );
    assert_eq!(
        *outcomes.0.lock().unwrap(),
        vec![ToolOutcome::Skipped {
            reason: "denied by policy: $5000 is over the limit".into()
        }]
    );
}

struct DenyAll;
impl AgentHook for DenyAll {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if event.tool_name().is_some() {
            DispatchAction::deny("not allowed for this user")
        } else {
            DispatchAction::proceed()
        }
    }
}

#[tokio::test]
async fn deny_reports_to_the_model_and_records_a_denial() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        Turn::tool_call("echo", json!({"text": "x"})),
        Turn::text("ok"),
    ]);
    let outcomes = Outcomes::default();
    let agent = AgentBuilder::new(model.clone())
        .tool(echo_tool("echo", calls.clone()))
        .add_hook(DenyAll)
        .add_hook(outcomes.clone())
        .build();
    agent.prompt("x").await.unwrap();
    assert!(calls.lock().unwrap().is_empty());
    assert_eq!(
        *outcomes.0.lock().unwrap(),
        vec![ToolOutcome::Denied {
            report: "not allowed for this user".into()
        }]
    );
    assert_eq!(
        model.requests()[1].history.last().unwrap().text(),
        "not allowed for this user"
    );
}

struct Shout;
impl AgentHook for Shout {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        let Some(args) = event.tool_args() else {
            return DispatchAction::proceed();
        };
        let mut value: serde_json::Value = serde_json::from_str(args).unwrap();
        let text = value["text"].as_str().unwrap().to_uppercase();
        value["text"] = json!(format!("{text}!"));
        DispatchAction::rewrite_tool_args(event.kind, value)
    }
}

#[tokio::test]
async fn rewritten_arguments_chain_and_reach_the_tool() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        Turn::tool_call("echo", json!({"text": "hi"})),
        Turn::text("ok"),
    ]);
    let recorder = Recorder::default();
    let agent = AgentBuilder::new(model)
        .tool(echo_tool("echo", calls.clone()))
        .add_hook(Shout)
        .add_hook(Shout)
        .add_hook(recorder.clone())
        .build();
    agent.prompt("x").await.unwrap();
    assert_eq!(*calls.lock().unwrap(), vec!["HI!!"]);
    // A later hook sees the earlier rewrites.
    assert!(
        recorder
            .lines()
            .contains(&"tool_call echo {\"text\":\"HI!!\"}".to_string())
    );
}

struct PatchAtDispatch;
impl AgentHook for PatchAtDispatch {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.request() {
            Some(request) if request.temperature.is_none() => {
                DispatchAction::patch(RequestPatch::new().temperature(0.1))
            }
            _ => DispatchAction::proceed(),
        }
    }
}

#[tokio::test]
async fn a_model_dispatch_can_patch_the_request() {
    let model = ScriptedModel::new([Turn::text("ok")]);
    let agent = AgentBuilder::new(model.clone())
        .add_hook(PatchAtDispatch)
        .build();
    agent.prompt("x").await.unwrap();
    assert_eq!(model.requests()[0].temperature, Some(0.1));
}

#[tokio::test]
async fn a_model_dispatch_patch_changes_its_turn_only_and_the_run_keeps_its_history() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        Turn::tool_call("add", json!({"a": 1, "b": 2})),
        Turn::text("3"),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .temperature(0.7)
        .tool(add_tool())
        .tool(echo_tool("echo", calls))
        .add_hook(SummariseFirstDispatch)
        .build();
    let response = agent.prompt("1+2").extended_details().await.unwrap();
    let requests = model.requests();
    assert_eq!(requests[0].temperature, Some(0.1));
    assert_eq!(requests[0].tool_names().collect::<Vec<_>>(), vec!["add"]);
    assert_eq!(requests[0].history, vec![Message::user("summary")]);
    // The next turn is sent the run's own request and history.
    assert_eq!(requests[1].temperature, Some(0.7));
    assert_eq!(
        requests[1].tool_names().collect::<Vec<_>>(),
        vec!["add", "echo"]
    );
    assert_eq!(requests[1].history.len(), 3);
    assert_eq!(requests[1].history[0], Message::user("1+2"));
    assert_eq!(response.history().len(), 4);
    assert_eq!(response.output, "3");
}

#[tokio::test]
async fn a_call_of_a_tool_a_dispatch_patch_withheld_is_not_run() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        Turn::tool_call("echo", json!({"text": "hi"})),
        Turn::text("done"),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .tool(add_tool())
        .tool(echo_tool("echo", calls.clone()))
        .add_hook(SummariseFirstDispatch)
        .build();
    let _ = agent.prompt("x").await;
    assert!(
        calls.lock().unwrap().is_empty(),
        "`echo` was not advertised on the turn that called it"
    );
}

struct Redact;
impl AgentHook for Redact {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        let Some(result) = event.tool_result() else {
            return OutcomeAction::proceed();
        };
        let text = result.output().render();
        OutcomeAction::rewrite_tool_result(&event, text.replace("secret", "[redacted]"))
    }
}

struct SeeOutcome(Arc<Mutex<Vec<(String, ToolOutcome)>>>);
impl AgentHook for SeeOutcome {
    async fn on_event(&self, _ctx: &HookContext, event: StepEvent<'_>) -> Flow {
        if let StepEvent::ToolResult {
            result, outcome, ..
        } = event
        {
            self.0
                .lock()
                .unwrap()
                .push((result.to_string(), outcome.clone()));
        }
        Flow::Continue
    }
}

#[tokio::test]
async fn rewritten_results_chain_while_the_raw_outcome_stays() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        Turn::tool_call("echo", json!({"text": "the secret code"})),
        Turn::text("ok"),
    ]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = AgentBuilder::new(model.clone())
        .tool(echo_tool("echo", calls))
        .add_hook(Redact)
        .add_hook(SeeOutcome(seen.clone()))
        .build();
    agent.prompt("x").await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![("the [redacted] code".to_string(), ToolOutcome::Success)]
    );
    assert_eq!(
        model.requests()[1].history.last().unwrap().text(),
        "the [redacted] code"
    );
}

struct StructuredRewrite;
impl AgentHook for StructuredRewrite {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if event.tool_result().is_some() {
            OutcomeAction::rewrite_tool_output(&event, ToolOutput::Json(json!({"redacted": true})))
        } else {
            OutcomeAction::proceed()
        }
    }
}

#[tokio::test]
async fn a_tool_output_can_be_replaced_with_structured_output() {
    let model = ScriptedModel::new([
        Turn::tool_call("add", json!({"a": 1, "b": 1})),
        Turn::text("ok"),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .tool(add_tool())
        .add_hook(StructuredRewrite)
        .build();
    agent.prompt("x").await.unwrap();
    assert_eq!(
        model.requests()[1].history.last().unwrap().text(),
        "{\"redacted\":true}"
    );
}

struct ReplaceModelAnswer;
impl AgentHook for ReplaceModelAnswer {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        match event.completion() {
            Some(response) if response.text().contains("rude") => OutcomeAction::replace(
                CompletionResponse::new(OneOrMany::one(AssistantContent::text("polite"))),
            ),
            _ => OutcomeAction::proceed(),
        }
    }
}

#[tokio::test]
async fn a_model_response_can_be_replaced() {
    let model = ScriptedModel::new([Turn::text("rude words")]);
    let agent = AgentBuilder::new(model)
        .add_hook(ReplaceModelAnswer)
        .build();
    assert_eq!(agent.prompt("x").await.unwrap(), "polite");
}

#[tokio::test]
async fn tool_result_is_none_for_a_failed_call() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct NoArgs {}
    let failing = reins::tool::tool_fn("fail", "Always fails.", |_: NoArgs| async {
        Err::<String, _>("disk full")
    });
    let seen = Arc::new(Mutex::new(Vec::new()));
    struct Inspect(Arc<Mutex<Vec<(bool, String)>>>);
    impl AgentHook for Inspect {
        async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
            if let Some(result) = event.tool_outcome() {
                self.0
                    .lock()
                    .unwrap()
                    .push((event.tool_result().is_some(), result.output().render()));
            }
            OutcomeAction::proceed()
        }
    }
    let model = ScriptedModel::new([Turn::tool_call("fail", json!({})), Turn::text("sorry")]);
    let agent = AgentBuilder::new(model.clone())
        .tool(failing)
        .add_hook(Inspect(seen.clone()))
        .build();
    agent.prompt("x").await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(false, "the tool failed: disk full".to_string())]
    );
}

#[derive(Clone, Default)]
struct Settled(Arc<Mutex<Vec<String>>>);
impl AgentHook for Settled {
    async fn on_run_settled(&self, _ctx: &HookContext, event: RunSettledEvent<'_>) {
        let line = match event.result {
            Ok(text) => format!("ok {text} {}", event.turns),
            Err(error) => format!("err {error}"),
        };
        self.0.lock().unwrap().push(line);
    }
}

#[tokio::test]
async fn every_hook_observes_the_settled_run() {
    let settled = Settled::default();
    let model = ScriptedModel::new([Turn::text("fine")]);
    let agent = AgentBuilder::new(model)
        .add_hook(settled.clone())
        .add_hook(settled.clone())
        .build();
    agent.prompt("x").await.unwrap();
    assert_eq!(*settled.0.lock().unwrap(), vec!["ok fine 1", "ok fine 1"]);

    let settled = Settled::default();
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("x")]))
        .add_hook(StopAt(StepEventKind::ModelTurnFinished))
        .add_hook(settled.clone())
        .build();
    agent.prompt("x").await.unwrap_err();
    assert_eq!(
        *settled.0.lock().unwrap(),
        vec!["err the run was stopped by a hook: stopped at ModelTurnFinished"]
    );
}
