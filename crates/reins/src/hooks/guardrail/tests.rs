use super::*;
use crate::agent::{Agent, AgentBuilder, PromptError};
use crate::completion::{RawResponse, Usage};
use crate::message::{AssistantContent, Message, OneOrMany};
use crate::testing::{ScriptedModel, Turn};
use crate::tool::tool_fn;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Mutex;

/// An agent with a `record` tool that logs the arguments it ran with, and the log.
fn agent_with_tool(
    model: &ScriptedModel,
    hooks: impl FnOnce(AgentBuilder) -> AgentBuilder,
) -> (Agent, Arc<Mutex<Vec<Value>>>) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&calls);
    let tool = tool_fn("record", "Records its arguments.", move |args: Value| {
        let log = Arc::clone(&log);
        async move {
            log.lock().unwrap().push(args);
            Ok::<_, Infallible>("recorded")
        }
    });
    let builder = AgentBuilder::new(model.clone()).tool(tool);
    (hooks(builder).build(), calls)
}

fn agent(model: &ScriptedModel, guardrails: Guardrails) -> Agent {
    agent_with_tool(model, |b| b.add_hook(guardrails)).0
}

fn tripped(error: &PromptError) -> GuardrailTripped {
    GuardrailTripped::from_error(error).unwrap_or_else(|| panic!("not a guardrail trip: {error}"))
}

fn last_user_text(model: &ScriptedModel, request: usize) -> String {
    let requests = model.requests();
    let history = &requests[request].history;
    history
        .iter()
        .rev()
        .find(|m| matches!(m, Message::User { .. }))
        .unwrap()
        .text()
}

/// Stands in for a classifier model: trips on "attack", after an await point.
struct Classifier;

impl Check for Classifier {
    async fn check(&self, text: &str) -> Verdict {
        tokio::task::yield_now().await;
        if text.contains("attack") {
            Verdict::trip("flagged")
        } else {
            Verdict::Pass
        }
    }
}

#[tokio::test]
async fn input_rewrites_chain_and_reach_the_model() {
    let model = ScriptedModel::new([Turn::text("ok")]);
    let guard = Guardrails::new()
        .input_fn("trim", |text| Verdict::rewrite(text.trim()))
        .input_fn("sees_rewrite", |text| {
            if text.starts_with(' ') {
                Verdict::trip("saw the original")
            } else {
                Verdict::Pass
            }
        });
    agent(&model, guard).prompt("  hello  ").await.unwrap();
    assert_eq!(last_user_text(&model, 0), "hello");
}

#[tokio::test]
async fn input_trip_and_reject_stop_before_any_model_call() {
    for verdict in [Verdict::trip("no"), Verdict::reject("no")] {
        let model = ScriptedModel::new([Turn::text("ok")]);
        let guard = Guardrails::new()
            .input("length", MaxLength::chars(100))
            .input_fn("policy", move |_| verdict.clone());
        let error = agent(&model, guard).prompt("hi").await.unwrap_err();
        assert_eq!(
            tripped(&error),
            GuardrailTripped::new(Stage::Input, "policy", "no")
        );
        assert!(model.requests().is_empty());
    }
}

#[tokio::test]
async fn async_checks_trip_and_pass() {
    let model = ScriptedModel::new([Turn::text("fine")]);
    let guard = Guardrails::new().input("classifier", Classifier);
    let agent = agent(&model, guard);
    assert_eq!(agent.prompt("hello").await.unwrap(), "fine");
    let error = agent.prompt("plan an attack").await.unwrap_err();
    assert_eq!(tripped(&error).check, "classifier");
}

#[tokio::test]
async fn rejected_answer_is_retried_with_feedback() {
    let model = ScriptedModel::new([Turn::text("not json"), Turn::text(r#"{"a":1}"#)]);
    let guard = Guardrails::new().answer("json", ValidJson::new());
    let answer = agent(&model, guard).prompt("give json").await.unwrap();
    assert_eq!(answer, r#"{"a":1}"#);
    let feedback = last_user_text(&model, 1);
    assert!(feedback.starts_with("Not valid JSON"), "{feedback}");
    // The rejected answer stays in the history, before the feedback.
    let history = &model.requests()[1].history;
    assert_eq!(history[history.len() - 2].text(), "not json");
}

#[tokio::test]
async fn retries_are_bounded_then_trip() {
    let model = ScriptedModel::new([Turn::text("a"), Turn::text("b"), Turn::text("c")]);
    let guard = Guardrails::new()
        .answer_fn("never", |_| Verdict::reject("try again"))
        .max_retries(2);
    let error = agent(&model, guard).prompt("q").await.unwrap_err();
    let trip = tripped(&error);
    assert_eq!((trip.stage, trip.check.as_str()), (Stage::Answer, "never"));
    assert_eq!(trip.message, "try again (still rejected after 2 retries)");
    assert_eq!(model.requests().len(), 3);
}

#[tokio::test]
async fn the_retry_budget_is_per_run_not_per_hook() {
    let model = ScriptedModel::new([
        Turn::text("bad"),
        Turn::text("good"),
        Turn::text("bad"),
        Turn::text("good"),
    ]);
    let guard = Guardrails::new()
        .answer("deny", DenyList::new(["BAD"]))
        .max_retries(1);
    let agent = agent(&model, guard);
    // Each run has its own single retry: a count kept in the hook would trip the second run.
    assert_eq!(agent.prompt("one").await.unwrap(), "good");
    assert_eq!(agent.prompt("two").await.unwrap(), "good");
}

#[tokio::test]
async fn the_retry_count_is_read_from_the_runs_entries() {
    let guard = Guardrails::new()
        .answer_fn("never", |_| Verdict::reject("again"))
        .max_retries(2);
    let content = OneOrMany::one(AssistantContent::text("x"));
    let raw = RawResponse::none();
    let event = ModelTurnFinished {
        turn: 3,
        content: &content,
        usage: Usage::default(),
        finish_reason: None,
        response_id: None,
        raw: &raw,
    };
    // A resumed run brings the entries of its earlier retries.
    let ctx = HookContext::new("resumed");
    let record = RetryRecord {
        check: "never".into(),
        turn: 1,
    };
    ctx.append_entry(RETRY_ENTRY, &record).unwrap();
    let action = guard.on_model_turn_finished(&ctx, event).await;
    assert_eq!(action, ModelTurnAction::retry_with_feedback("again"));
    assert_eq!(ctx.entries::<RetryRecord>(RETRY_ENTRY).unwrap().len(), 2);
    let ModelTurnAction::Stop(reason) = guard.on_model_turn_finished(&ctx, event).await else {
        panic!("the third rejection must trip");
    };
    assert_eq!(reason.cause::<GuardrailTripped>().unwrap().check, "never");
    // An entry of that kind that cannot be read fails closed.
    let ctx = HookContext::new("corrupt");
    ctx.append_entry(RETRY_ENTRY, &"garbage").unwrap();
    let action = guard.on_model_turn_finished(&ctx, event).await;
    assert!(matches!(action, ModelTurnAction::Stop(_)), "{action:?}");
}

#[tokio::test]
async fn answer_trip_and_rewrite_stop_the_run_keeping_the_turn() {
    for verdict in [Verdict::trip("leak"), Verdict::rewrite("changed")] {
        let model = ScriptedModel::new([Turn::text("secret stuff")]);
        let guard = Guardrails::new().answer_fn("leaks", move |_| verdict.clone());
        let error = agent(&model, guard).prompt("q").await.unwrap_err();
        assert_eq!(tripped(&error).stage, Stage::Answer);
        assert_eq!(
            error.history().unwrap().last().unwrap().text(),
            "secret stuff"
        );
    }
}

#[tokio::test]
async fn turns_that_call_tools_are_not_answer_checked() {
    let model = ScriptedModel::new([
        Turn::text("let me check the forbidden thing").then_tool_call("record", json!({})),
        Turn::text("done"),
    ]);
    let guard = Guardrails::new().answer("deny", DenyList::new(["forbidden"]).tripping());
    assert_eq!(agent(&model, guard).prompt("q").await.unwrap(), "done");
}

#[tokio::test]
async fn rejected_tool_args_skip_the_call_and_tell_the_model() {
    let model = ScriptedModel::new([
        Turn::tool_call("record", json!({"cmd": "rm -rf /"})),
        Turn::text("understood"),
    ]);
    let guard =
        Guardrails::new().tool_args("no_rm", DenyList::new(["rm -rf"]).message("not allowed"));
    let (agent, calls) = agent_with_tool(&model, |b| b.add_hook(guard));
    assert_eq!(agent.prompt("q").await.unwrap(), "understood");
    assert!(calls.lock().unwrap().is_empty());
    let tool_message = model.requests()[1].history.last().unwrap().clone();
    assert_eq!(
        tool_message,
        Message::tool_result("call_1_0", "record", "not allowed")
    );
}

#[tokio::test]
async fn tool_args_rewrites_chain_and_trips_stop() {
    let model = ScriptedModel::new([
        Turn::tool_call("record", json!({"n": 1})),
        Turn::tool_call("record", json!({"n": 2, "trip": true})),
    ]);
    let guard = Guardrails::new()
        .tool_args_fn("double", |args| {
            let mut value: Value = serde_json::from_str(args).unwrap_or_default();
            value["n"] = json!(value["n"].as_i64().unwrap_or(0) * 2);
            Verdict::rewrite(value.to_string())
        })
        .tool_args_fn("no_trip", |args| {
            if args.contains("trip") {
                Verdict::trip(format!("saw {args}"))
            } else {
                Verdict::Pass
            }
        });
    let (agent, calls) = agent_with_tool(&model, |b| b.add_hook(guard));
    let error = agent.prompt("q").await.unwrap_err();
    assert_eq!(*calls.lock().unwrap(), vec![json!({"n": 2})]);
    let trip = tripped(&error);
    assert_eq!(
        (trip.stage, trip.check.as_str()),
        (Stage::ToolArgs, "no_trip")
    );
    // The second check saw the first one's rewrite.
    assert_eq!(trip.message, r#"saw {"n":4,"trip":true}"#);
}

#[tokio::test]
async fn a_rewrite_to_arguments_that_are_not_an_object_skips_the_call() {
    for replacement in ["not json at all", "\"a string\"", "[1]"] {
        let model = ScriptedModel::new([
            Turn::tool_call("record", json!({"n": 1})),
            Turn::text("understood"),
        ]);
        let guard =
            Guardrails::new().tool_args_fn("mangle", move |_| Verdict::rewrite(replacement));
        let (agent, calls) = agent_with_tool(&model, |b| b.add_hook(guard));
        assert_eq!(agent.prompt("q").await.unwrap(), "understood");
        assert!(calls.lock().unwrap().is_empty(), "{replacement} ran");
        let told = model.requests()[1].history.last().unwrap().text();
        assert!(
            told.contains("`mangle`") && told.contains("not a JSON object"),
            "{told}"
        );
    }
}

#[tokio::test]
async fn tool_args_for_checks_only_that_tool() {
    let model = ScriptedModel::new([Turn::tool_call("record", json!({})), Turn::text("done")]);
    let guard =
        Guardrails::new().tool_args_for("shell", "shell_only", DenyList::new(["{"]).tripping());
    let (agent, calls) = agent_with_tool(&model, |b| b.add_hook(guard));
    assert_eq!(agent.prompt("q").await.unwrap(), "done");
    assert_eq!(calls.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn panicking_failing_and_hanging_checks_trip() {
    let failing = |_: &str| Verdict::from_result(Err::<Verdict, _>("classifier unreachable"));
    let hanging = Guardrails::new()
        .input("hangs", HangingCheck)
        .timeout(Duration::from_millis(20));
    let cases = [
        (
            Guardrails::new().input_fn("panics", |_| panic!("boom")),
            "the check panicked: boom",
        ),
        (
            Guardrails::new().input_fn("fails", failing),
            "the check failed: classifier unreachable",
        ),
        (hanging, "the check did not answer within 20 ms"),
        (
            Guardrails::new().input("panics early", PanicsBeforeItsFuture),
            "the check panicked: broke before its future",
        ),
    ];
    for (guard, message) in cases {
        let model = ScriptedModel::new([Turn::text("ok")]);
        let error = agent(&model, guard).prompt("q").await.unwrap_err();
        assert_eq!(tripped(&error).message, message);
        assert!(model.requests().is_empty());
    }
}

#[tokio::test(start_paused = true)]
async fn a_hanging_check_trips_after_the_default_timeout() {
    let model = ScriptedModel::new([Turn::text("ok")]);
    let guard = Guardrails::new().input("hangs", HangingCheck);
    // The clock is paused and only moves when the run waits: an hour of it is no real time,
    // and a run that waits that long has no timeout at all.
    let run = agent(&model, guard).prompt("q");
    let error = tokio::time::timeout(Duration::from_secs(3_600), async { run.await })
        .await
        .expect("the check never timed out")
        .unwrap_err();
    assert_eq!(
        tripped(&error).message,
        "the check did not answer within 60000 ms"
    );
    assert!(model.requests().is_empty());
}

#[test]
fn checks_that_answer_at_once_need_no_timer() {
    // A runtime without a timer: the default timeout must not trip a synchronous check.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let model = ScriptedModel::new([Turn::text("fine")]);
    let guard = Guardrails::new().input("short", MaxLength::chars(100));
    let agent = agent(&model, guard);
    let answer = runtime.block_on(async { agent.prompt("q").await });
    assert_eq!(answer.unwrap(), "fine");
}

struct HangingCheck;

/// A check written as a plain `fn` returning a future, which panics before it returns one.
struct PanicsBeforeItsFuture;

impl Check for PanicsBeforeItsFuture {
    #[allow(unreachable_code)]
    fn check(&self, _text: &str) -> impl Future<Output = Verdict> + Send {
        panic!("broke before its future");
        async { Verdict::Pass }
    }
}

impl Check for HangingCheck {
    async fn check(&self, _text: &str) -> Verdict {
        std::future::pending().await
    }
}

#[tokio::test]
async fn a_tool_skip_ends_the_dispatch_chain() {
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let log = Arc::clone(&seen);
    let model = ScriptedModel::new([
        Turn::tool_calls([("record", json!({"bad": 1})), ("record", json!({"ok": 1}))]),
        Turn::text("done"),
    ]);
    let guard = Guardrails::new().tool_args("deny", DenyList::new(["bad"]));
    let (agent, calls) = agent_with_tool(&model, |b| b.add_hook(guard).add_hook(Observer(log)));
    assert_eq!(agent.prompt("q").await.unwrap(), "done");
    assert_eq!(*seen.lock().unwrap(), vec![r#"{"ok":1}"#.to_owned()]);
    assert_eq!(*calls.lock().unwrap(), vec![json!({"ok": 1})]);
}

/// A later hook that records the tool arguments it is asked about, and stops on "halt".
struct Observer(Arc<Mutex<Vec<String>>>);

impl AgentHook for Observer {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if let Some(args) = event.tool_args() {
            self.0.lock().unwrap().push(args.to_owned());
        }
        DispatchAction::proceed()
    }
    async fn on_run_start(&self, _ctx: &HookContext, event: RunStartEvent<'_>) -> RunStartAction {
        if event.prompt.text() == "halt" {
            RunStartAction::stop("halted by another hook")
        } else {
            RunStartAction::continue_run()
        }
    }
}

#[tokio::test]
async fn another_hooks_stop_is_not_a_guardrail_trip() {
    let model = ScriptedModel::new([Turn::text("ok")]);
    let guard = Guardrails::new().input("length", MaxLength::chars(10));
    let observer = Observer(Arc::default());
    let (agent, _) = agent_with_tool(&model, |b| b.add_hook(observer).add_hook(guard));
    let error = agent.prompt("halt").await.unwrap_err();
    assert!(matches!(error, PromptError::Cancelled { .. }));
    assert_eq!(GuardrailTripped::from_error(&error), None);
}
