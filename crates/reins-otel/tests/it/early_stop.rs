//! A run stopped before its first model call still shows what it was asked: its
//! `invoke_agent` span records the prompt (when content is recorded), once, however early the
//! run ended.

use crate::harness::{NamedModel, Recorded, attr, attr_str, names, span};
use opentelemetry_sdk::trace::SpanData;
use reins::agent::*;
use reins::testing::Turn;
use reins_otel::Telemetry;

const PROMPT: &str = "Summarise the quarterly report.";

/// Stops every run on its start, before any model call.
struct StopOnStart;
impl AgentHook for StopOnStart {
    async fn on_run_start(&self, _ctx: &HookContext, _event: RunStartEvent<'_>) -> RunStartAction {
        RunStartAction::stop("reports are closed today")
    }
}

/// Stops every run before its model call is dispatched (as a budget spent already would).
struct StopBeforeTheCall;
impl AgentHook for StopBeforeTheCall {
    async fn on_completion_call(
        &self,
        _ctx: &HookContext,
        _event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        CompletionCallAction::stop("no model calls left")
    }
}

/// Runs `agent` on [`PROMPT`] and returns its spans; the run is stopped by a hook.
async fn stopped_run(recorded: &Recorded, hook: impl AgentHook) -> Vec<SpanData> {
    let agent = AgentBuilder::new(NamedModel::new([Turn::text("Never sent.")]))
        .name("reports")
        .add_hook(hook)
        .build();
    let error = agent.prompt(PROMPT).await.unwrap_err();
    assert!(matches!(error, PromptError::Cancelled { .. }), "{error}");
    recorded.spans()
}

/// How many times `key` is set on `span`.
fn times_set(span: &SpanData, key: &str) -> usize {
    span.attributes
        .iter()
        .filter(|kv| kv.key.as_str() == key)
        .count()
}

/// The run's input, recorded once, as a message and as plain text.
fn assert_input_recorded(run: &SpanData) {
    assert_eq!(attr_str(run, "input.value"), PROMPT);
    let messages: serde_json::Value =
        serde_json::from_str(&attr_str(run, "gen_ai.input.messages")).unwrap();
    assert_eq!(
        messages,
        serde_json::json!([{"role": "user", "parts": [{"type": "text", "content": PROMPT}]}])
    );
    assert_eq!(times_set(run, "input.value"), 1, "{:?}", run.attributes);
    assert_eq!(times_set(run, "gen_ai.input.messages"), 1);
}

#[tokio::test]
async fn a_run_stopped_on_its_start_records_its_input() {
    let recorded = Recorded::start(Telemetry::new().capture_content(|_, text| Some(text)));
    let spans = stopped_run(&recorded, StopOnStart).await;
    assert_eq!(names(&spans), ["invoke_agent reports"]);
    assert_input_recorded(span(&spans, "invoke_agent reports"));
}

#[tokio::test]
async fn a_run_stopped_before_its_first_model_call_records_its_input() {
    let recorded = Recorded::start(Telemetry::new().capture_content(|_, text| Some(text)));
    let spans = stopped_run(&recorded, StopBeforeTheCall).await;
    assert_input_recorded(span(&spans, "invoke_agent reports"));
}

/// The input goes through the telemetry's redactor like all content: off by default, and
/// masked as the redactor masks it.
#[tokio::test]
async fn a_stopped_runs_input_is_recorded_only_as_content_capture_allows() {
    let off = Recorded::start(Telemetry::new());
    let spans = stopped_run(&off, StopOnStart).await;
    let run = span(&spans, "invoke_agent reports");
    assert_eq!(attr(run, "input.value"), None);
    assert_eq!(attr(run, "gen_ai.input.messages"), None);
    drop(off);

    let masked = Recorded::start(
        Telemetry::new().capture_content(|_, text| Some(text.replace("quarterly", "[MASKED]"))),
    );
    let spans = stopped_run(&masked, StopOnStart).await;
    let run = span(&spans, "invoke_agent reports");
    assert_eq!(
        attr_str(run, "input.value"),
        "Summarise the [MASKED] report."
    );
}

/// A run that reaches its model records its input once, with the first call's request, not
/// again when it ends.
#[tokio::test]
async fn a_run_that_calls_its_model_records_its_input_once() {
    let recorded = Recorded::start(Telemetry::new().capture_content(|_, text| Some(text)));
    let agent = AgentBuilder::new(NamedModel::new([Turn::text("Done.")]))
        .name("reports")
        .build();
    agent.prompt(PROMPT).await.unwrap();
    let spans = recorded.spans();
    assert_input_recorded(span(&spans, "invoke_agent reports"));
}
