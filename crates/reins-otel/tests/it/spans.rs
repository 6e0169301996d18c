//! The spans of a run, their GenAI attributes, and an event per hook decision.

use crate::harness::{NamedModel, Recorded, attr, attr_i64, attr_str, decisions, names, span};
use opentelemetry::trace::Status;
use opentelemetry::{Array, StringValue, Value as OtelValue};
use reins::agent::*;
use reins::completion::{CompletionError, Usage};
use reins::testing::Turn;
use reins::tool::tool_fn;
use reins_otel::{ContentKind, Telemetry};
use serde_json::{Value, json};
use std::convert::Infallible;

fn lookup_tool() -> impl reins::tool::Tool {
    tool_fn("lookup", "Looks a city up.", |args: Value| async move {
        Ok::<_, Infallible>(format!("weather in {}: sunny", args["city"]))
    })
}

fn tool_then_answer() -> Vec<Turn> {
    vec![
        Turn::tool_call("lookup", json!({"city": "Paris"})).usage(Usage::new(11, 7)),
        Turn::text("It is sunny in Paris.").usage(Usage::new(23, 5)),
    ]
}

fn agent(model: NamedModel, hook: impl AgentHook) -> Agent {
    AgentBuilder::new(model)
        .name("weather")
        .temperature(0.25)
        .max_tokens(300)
        .tool(lookup_tool())
        .add_hook(hook)
        .build()
}

/// A hook that changes nothing.
struct Quiet;
impl AgentHook for Quiet {}

#[tokio::test]
async fn a_run_is_an_invoke_agent_span_over_its_chat_and_execute_tool_spans() {
    let recorded = Recorded::start(Telemetry::new());
    let response = agent(NamedModel::new(tool_then_answer()), Quiet)
        .prompt("Weather in Paris?")
        .run_id("run-1")
        .await
        .unwrap();
    assert_eq!(response, "It is sunny in Paris.");
    let spans = recorded.spans();
    assert_eq!(
        names(&spans),
        [
            "chat gpt-test",
            "execute_tool lookup",
            "chat gpt-test",
            "invoke_agent weather"
        ]
    );

    let run = span(&spans, "invoke_agent weather");
    let run_id = run.span_context.span_id();
    assert_eq!(run.parent_span_id, opentelemetry::trace::SpanId::INVALID);
    assert_eq!(attr_str(run, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(attr_str(run, "gen_ai.agent.name"), "weather");
    assert_eq!(attr_str(run, "gen_ai.conversation.id"), "run-1");
    assert_eq!(attr_str(run, "gen_ai.provider.name"), "openai");
    assert_eq!(attr_str(run, "gen_ai.request.model"), "gpt-test");
    assert_eq!(
        attr(run, "gen_ai.request.temperature"),
        Some(OtelValue::F64(0.25))
    );
    assert_eq!(attr_i64(run, "gen_ai.request.max_tokens"), 300);
    assert_eq!(attr_i64(run, "gen_ai.usage.input_tokens"), 34);
    assert_eq!(attr_i64(run, "gen_ai.usage.output_tokens"), 12);
    assert_eq!(attr_i64(run, "reins.turn"), 2);
    assert_eq!(attr_str(run, "reins.run.status"), "completed");
    assert_eq!(attr(run, "error.type"), None);

    let chats: Vec<_> = spans.iter().filter(|s| s.name == "chat gpt-test").collect();
    for (index, chat) in chats.iter().enumerate() {
        let turn = index as i64 + 1;
        assert_eq!(
            chat.parent_span_id, run_id,
            "chat spans are children of the run"
        );
        assert_eq!(chat.span_context.trace_id(), run.span_context.trace_id());
        assert_eq!(chat.span_kind, opentelemetry::trace::SpanKind::Client);
        assert_eq!(attr_str(chat, "gen_ai.operation.name"), "chat");
        assert_eq!(attr_str(chat, "gen_ai.provider.name"), "openai");
        assert_eq!(attr_str(chat, "gen_ai.request.model"), "gpt-test");
        assert_eq!(
            attr_str(chat, "gen_ai.response.model"),
            "gpt-test-2026-01-01"
        );
        assert_eq!(
            attr_str(chat, "gen_ai.response.id"),
            format!("scripted-{turn}")
        );
        assert_eq!(
            attr(chat, "gen_ai.request.temperature"),
            Some(OtelValue::F64(0.25))
        );
        assert_eq!(attr_i64(chat, "gen_ai.request.max_tokens"), 300);
        assert_eq!(attr_i64(chat, "reins.turn"), turn);
        assert_eq!(attr_str(chat, "reins.model.label"), "default");
        assert_eq!(attr_str(chat, "reins.effect_id"), format!("run-1/t{turn}"));
        assert_eq!(
            attr(chat, "gen_ai.input.messages"),
            None,
            "content is off by default"
        );
        assert_eq!(attr(chat, "gen_ai.output.messages"), None);
    }
    assert_eq!(attr_i64(chats[0], "gen_ai.usage.input_tokens"), 11);
    assert_eq!(attr_i64(chats[0], "gen_ai.usage.output_tokens"), 7);
    assert_eq!(attr_i64(chats[1], "gen_ai.usage.input_tokens"), 23);
    let reasons = |values: &[&str]| {
        Some(OtelValue::Array(Array::String(
            values
                .iter()
                .map(|v| StringValue::from(v.to_string()))
                .collect(),
        )))
    };
    assert_eq!(
        attr(chats[0], "gen_ai.response.finish_reasons"),
        reasons(&["tool_call"])
    );
    assert_eq!(
        attr(chats[1], "gen_ai.response.finish_reasons"),
        reasons(&["stop"])
    );

    let tool = span(&spans, "execute_tool lookup");
    assert_eq!(
        tool.parent_span_id, run_id,
        "tool spans are children of the run"
    );
    assert_eq!(attr_str(tool, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(attr_str(tool, "gen_ai.tool.name"), "lookup");
    assert_eq!(attr_str(tool, "gen_ai.tool.call.id"), "call_1_0");
    assert_eq!(attr_str(tool, "gen_ai.tool.type"), "function");
    assert_eq!(
        attr_str(tool, "gen_ai.tool.description"),
        "Looks a city up."
    );
    assert_eq!(attr_str(tool, "reins.effect_id"), "run-1/t1c0");
    assert_eq!(attr_str(tool, "reins.tool.outcome"), "success");
    assert_eq!(attr(tool, "gen_ai.tool.call.arguments"), None);
    assert_eq!(attr(tool, "gen_ai.tool.call.result"), None);
    assert_eq!(attr(tool, "reins.hook.action"), None);
    assert!(
        spans.iter().all(|s| decisions(s).is_empty()),
        "no hook changed anything"
    );
    for key in [
        "code.file.path",
        "code.line.number",
        "thread.id",
        "thread.name",
    ] {
        assert!(
            spans.iter().all(|s| attr(s, key).is_none()),
            "{key} names reins's trace module or a worker thread, nothing of the run"
        );
    }
}

#[tokio::test]
async fn content_is_recorded_only_when_opted_in_and_as_the_redactor_returns_it() {
    let telemetry = Telemetry::new().capture_content(|kind, text| match kind {
        ContentKind::ToolResult => None,
        _ => Some(text.replace("Paris", "[city]")),
    });
    let recorded = Recorded::start(telemetry);
    agent(NamedModel::new(tool_then_answer()), Quiet)
        .prompt("Weather in Paris?")
        .await
        .unwrap();
    let spans = recorded.spans();
    let chats: Vec<_> = spans.iter().filter(|s| s.name == "chat gpt-test").collect();
    let input = attr_str(chats[0], "gen_ai.input.messages");
    assert!(input.contains("Weather in [city]?"), "{input}");
    let output = attr_str(chats[1], "gen_ai.output.messages");
    assert!(output.contains("It is sunny in [city]."), "{output}");
    let run = spans
        .iter()
        .find(|s| s.name.starts_with("invoke_agent"))
        .expect("the run's span");
    assert_eq!(attr_str(run, "input.value"), "Weather in [city]?");
    assert_eq!(attr_str(run, "output.value"), "It is sunny in [city].");
    assert!(!spans.iter().any(|s| {
        s.attributes
            .iter()
            .any(|kv| kv.value.as_str().contains("Paris"))
    }));
    let tool = span(&spans, "execute_tool lookup");
    assert_eq!(
        attr_str(tool, "gen_ai.tool.call.arguments"),
        r#"{"city":"[city]"}"#
    );
    assert_eq!(
        attr(tool, "gen_ai.tool.call.result"),
        None,
        "the redactor dropped it"
    );
}

#[tokio::test]
async fn a_failed_model_call_sets_error_type_on_the_chat_and_run_spans() {
    let recorded = Recorded::start(Telemetry::new());
    let model = NamedModel::new([Turn::error(CompletionError::Timeout("slow".into()))]);
    let error = agent(model, Quiet).prompt("hi").await.unwrap_err();
    assert!(matches!(error, PromptError::Completion { .. }), "{error:?}");
    let spans = recorded.spans();
    assert_eq!(
        attr_str(span(&spans, "chat gpt-test"), "error.type"),
        "timeout"
    );
    let run = span(&spans, "invoke_agent weather");
    assert_eq!(attr_str(run, "error.type"), "timeout");
    assert_eq!(attr_str(run, "reins.run.status"), "failed");
}

#[tokio::test]
async fn a_failed_tool_sets_error_type_on_its_span() {
    let recorded = Recorded::start(Telemetry::new());
    let failing = tool_fn("lookup", "Fails.", |_: Value| async move {
        Err::<String, _>("backend down")
    });
    let agent = AgentBuilder::new(NamedModel::new(tool_then_answer()))
        .tool(failing)
        .build();
    agent.prompt("Weather?").await.unwrap();
    let spans = recorded.spans();
    let tool = span(&spans, "execute_tool lookup");
    assert_eq!(attr_str(tool, "error.type"), "tool_execution");
    assert_eq!(attr_str(tool, "reins.tool.outcome"), "failed");
    assert_eq!(
        names(&spans).last().map(String::as_str),
        Some("invoke_agent")
    );
}

/// Whether a trace viewer shows `span` as failed: its status, not only its `error.type`.
fn failed(span: &opentelemetry_sdk::trace::SpanData) -> bool {
    matches!(span.status, Status::Error { .. })
}

#[tokio::test]
async fn failed_model_calls_tools_and_runs_have_error_status_and_the_rest_do_not() {
    let recorded = Recorded::start(Telemetry::new());
    let model = NamedModel::new([Turn::error(CompletionError::Timeout("slow".into()))]);
    agent(model, Quiet).prompt("hi").await.unwrap_err();
    let spans = recorded.spans();
    assert!(failed(span(&spans, "chat gpt-test")));
    assert!(failed(span(&spans, "invoke_agent weather")));

    let recorded = Recorded::start(Telemetry::new());
    let failing = tool_fn("lookup", "Fails.", |_: Value| async move {
        Err::<String, _>("backend down")
    });
    let agent = AgentBuilder::new(NamedModel::new(tool_then_answer()))
        .tool(failing)
        .build();
    agent.prompt("Weather?").await.unwrap();
    let spans = recorded.spans();
    assert!(failed(span(&spans, "execute_tool lookup")));
    assert!(
        spans
            .iter()
            .filter(|s| s.name != "execute_tool lookup")
            .all(|s| s.status == Status::Unset),
        "the model read the failure and the run answered: {:?}",
        spans
            .iter()
            .map(|s| (&s.name, &s.status))
            .collect::<Vec<_>>()
    );
}

/// How a test hook answers a tool dispatch.
type DispatchAnswer = fn(&DispatchEvent<'_>) -> DispatchAction;

/// Answers every tool dispatch with its function.
struct OnDispatch(DispatchAnswer);
impl AgentHook for OnDispatch {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if event.tool_name().is_some() {
            (self.0)(&event)
        } else {
            DispatchAction::proceed()
        }
    }
}

/// Runs the tool-then-answer script with `hook` and returns the tool span's decisions and
/// `reins.hook.action`.
async fn tool_decision(hook: impl AgentHook) -> (Vec<(String, String)>, Option<String>) {
    let recorded = Recorded::start(Telemetry::new());
    let _ = agent(NamedModel::new(tool_then_answer()), hook)
        .prompt("Weather in Paris?")
        .await;
    let spans = recorded.spans();
    let tool = span(&spans, "execute_tool lookup");
    let action = attr(tool, "reins.hook.action").map(|v| v.as_str().into_owned());
    (decisions(tool), action)
}

fn decision(action: &str, hook: &str) -> Vec<(String, String)> {
    vec![(action.to_owned(), hook.to_owned())]
}

#[tokio::test]
async fn skip_deny_rewrite_and_suspend_of_a_tool_call_are_events_on_its_span() {
    let cases: [(&str, DispatchAnswer); 4] = [
        ("skip", |_| DispatchAction::skip("not today")),
        ("deny", |_| DispatchAction::deny("not allowed")),
        ("rewrite", |event| {
            DispatchAction::rewrite_tool_args(event.kind, json!({"city": "Lyon"}))
        }),
        ("suspend", |_| DispatchAction::suspend("ask a person")),
    ];
    for (action, answer) in cases {
        let (events, recorded) = tool_decision(OnDispatch(answer)).await;
        assert_eq!(events, decision(action, "on_tool_dispatch"), "{action}");
        assert_eq!(recorded.as_deref(), Some(action));
    }
}

#[tokio::test]
async fn a_stop_is_one_event_on_the_run_span() {
    let recorded = Recorded::start(Telemetry::new());
    let hook = OnDispatch(|_| DispatchAction::stop("enough"));
    let error = agent(NamedModel::new(tool_then_answer()), hook)
        .prompt("Weather?")
        .await
        .unwrap_err();
    assert!(matches!(error, PromptError::Cancelled { .. }), "{error:?}");
    let spans = recorded.spans();
    let tool = span(&spans, "execute_tool lookup");
    assert_eq!(attr_str(tool, "reins.hook.action"), "stop");
    assert!(decisions(tool).is_empty());
    let run = span(&spans, "invoke_agent weather");
    assert_eq!(decisions(run), decision("stop", "hook"));
    assert_eq!(attr_str(run, "error.type"), "stopped_by_hook");
}

/// Asks for the first turn again once.
struct RepeatFirst;
impl AgentHook for RepeatFirst {
    async fn on_model_turn_finished(
        &self,
        ctx: &HookContext,
        _event: ModelTurnFinished<'_>,
    ) -> ModelTurnAction {
        if ctx.turn() == 1 {
            ModelTurnAction::retry_with_feedback("be brief")
        } else {
            ModelTurnAction::continue_run()
        }
    }
}

#[tokio::test]
async fn a_retried_turn_is_an_event_on_the_run_span() {
    let recorded = Recorded::start(Telemetry::new());
    let model = NamedModel::new([Turn::text("long answer"), Turn::text("short")]);
    let answer = agent(model, RepeatFirst).prompt("hi").await.unwrap();
    assert_eq!(answer, "short");
    let spans = recorded.spans();
    let run = span(&spans, "invoke_agent weather");
    assert_eq!(decisions(run), decision("retry", "on_model_turn_finished"));
}

/// Routes every call to the `big` model and patches the request.
struct SwitchAndPatch;
impl AgentHook for SwitchAndPatch {
    fn on_model_select(
        &self,
        _ctx: &HookContext,
        _event: ModelSelectEvent<'_>,
    ) -> ModelSelectionAction {
        ModelSelectionAction::select("big")
    }

    async fn on_completion_call(
        &self,
        _ctx: &HookContext,
        _event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        CompletionCallAction::patch(RequestPatch::new().temperature(0.5))
    }
}

#[tokio::test]
async fn a_model_switch_and_a_request_rewrite_are_events_on_the_chat_span() {
    let recorded = Recorded::start(Telemetry::new());
    let big = NamedModel {
        provider: "anthropic",
        model: "claude-test",
        ..NamedModel::new([Turn::text("from the big one")])
    };
    let agent = AgentBuilder::new(NamedModel::new([]))
        .named_model("big", big)
        .add_hook(SwitchAndPatch)
        .build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "from the big one");
    let spans = recorded.spans();
    let chat = span(&spans, "chat claude-test");
    assert_eq!(attr_str(chat, "gen_ai.provider.name"), "anthropic");
    assert_eq!(attr_str(chat, "gen_ai.request.model"), "claude-test");
    assert_eq!(attr_str(chat, "reins.model.label"), "big");
    assert_eq!(
        attr(chat, "gen_ai.request.temperature"),
        Some(OtelValue::F64(0.5))
    );
    assert_eq!(
        decisions(chat),
        [
            ("rewrite".to_owned(), "on_completion_call".to_owned()),
            ("model_switch".to_owned(), "on_model_select".to_owned())
        ]
    );
    let run = span(&spans, "invoke_agent");
    assert_eq!(
        attr_str(run, "gen_ai.request.model"),
        "gpt-test",
        "the default model"
    );
}

#[tokio::test]
async fn a_fallback_is_a_failed_chat_span_then_one_for_the_model_that_answered() {
    let recorded = Recorded::start(Telemetry::new().capture_content(|_, text| Some(text)));
    let primary = NamedModel::new([Turn::error(CompletionError::Timeout("slow".into()))]);
    let backup = NamedModel {
        provider: "anthropic",
        model: "claude-test",
        ..NamedModel::new([Turn::text("from the backup").usage(Usage::new(9, 4))])
    };
    let agent = AgentBuilder::new(primary)
        .named_model("backup", backup)
        .add_hook(reins::hooks::fallback::ModelFallback::new([
            "default", "backup",
        ]))
        .build();
    assert_eq!(agent.prompt("hi").await.unwrap(), "from the backup");
    let spans = recorded.spans();
    assert_eq!(
        names(&spans),
        ["chat gpt-test", "chat claude-test", "invoke_agent"]
    );
    let run = span(&spans, "invoke_agent").span_context.span_id();

    let failed_call = span(&spans, "chat gpt-test");
    assert_eq!(failed_call.parent_span_id, run);
    assert_eq!(attr_str(failed_call, "reins.model.label"), "default");
    assert_eq!(attr_str(failed_call, "error.type"), "timeout");
    assert!(failed(failed_call));
    assert_eq!(decisions(failed_call), decision("retry", "on_outcome"));

    let answered = span(&spans, "chat claude-test");
    assert_eq!(
        answered.parent_span_id, run,
        "beside the failed call, not in it"
    );
    assert_eq!(attr_str(answered, "gen_ai.provider.name"), "anthropic");
    assert_eq!(attr_str(answered, "reins.model.label"), "backup");
    assert_eq!(attr_i64(answered, "gen_ai.usage.input_tokens"), 9);
    assert_eq!(attr(answered, "error.type"), None);
    assert!(decisions(answered).is_empty());

    for span in &spans {
        let mut keys: Vec<&str> = span.attributes.iter().map(|kv| kv.key.as_str()).collect();
        let count = keys.len();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(
            keys.len(),
            count,
            "{} repeats an attribute: {:?}",
            span.name,
            span.attributes
        );
    }
}
