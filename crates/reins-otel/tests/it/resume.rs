//! A durable run resumed under another subscriber (as in another process) continues the trace
//! it started in.

use crate::harness::{NamedModel, Recorded, attr, attr_i64, attr_str, span};
use opentelemetry::Value as OtelValue;
use reins::agent::*;
use reins::store::{MemoryStore, RunStore};
use reins::testing::Turn;
use reins::tool::tool_fn;
use reins_otel::Telemetry;
use serde_json::{Value, json};
use std::convert::Infallible;

/// Suspends every tool call for a person's decision.
struct NeedsApproval;
impl AgentHook for NeedsApproval {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.tool_name() {
            Some(_) => DispatchAction::suspend("needs approval"),
            None => DispatchAction::proceed(),
        }
    }
}

fn agent(model: NamedModel) -> Agent {
    AgentBuilder::new(model)
        .name("payer")
        .tool(tool_fn("pay", "Pays.", |_: Value| async move {
            Ok::<_, Infallible>("paid")
        }))
        .add_hook(NeedsApproval)
        .build()
}

#[tokio::test]
async fn a_resumed_stored_run_continues_the_trace_of_its_first_half() {
    let model = NamedModel::new([
        Turn::tool_call("pay", json!({"to": "bob"})).usage(reins::completion::Usage::new(100, 20)),
        Turn::text("Done.").usage(reins::completion::Usage::new(150, 30)),
    ]);
    let store = MemoryStore::new();

    // The first half, exported by one tracer provider.
    let first = Recorded::start(Telemetry::new());
    let error = agent(model.clone())
        .prompt("pay bob")
        .run_id("run-9")
        .durable(store.clone())
        .await
        .unwrap_err();
    assert!(matches!(error, PromptError::Suspended { .. }), "{error:?}");
    let first_spans = first.spans();
    drop(first);
    let first_run = span(&first_spans, "invoke_agent payer");
    assert_eq!(attr_str(first_run, "reins.run.status"), "suspended");
    assert_eq!(
        attr(first_run, "reins.resumed"),
        Some(OtelValue::Bool(false))
    );
    let stored = store.load("run-9").await.unwrap();
    let context = stored
        .trace_context
        .expect("the run stores its trace context");
    assert_eq!(
        context,
        format!(
            "00-{}-{}-01",
            first_run.span_context.trace_id(),
            first_run.span_context.span_id()
        )
    );

    // The second half, under a new tracer provider, as a resuming process has.
    let second = Recorded::start(Telemetry::new());
    let answer = agent(model)
        .resume_stored(store.clone(), "run-9")
        .decide("t1c0", ToolDecision::Approve)
        .await
        .unwrap();
    assert_eq!(answer, "Done.");
    let second_spans = second.spans();
    let resumed = span(&second_spans, "invoke_agent payer");
    assert_eq!(
        resumed.span_context.trace_id(),
        first_run.span_context.trace_id()
    );
    assert_eq!(resumed.parent_span_id, first_run.span_context.span_id());
    assert!(resumed.parent_span_is_remote);
    assert_eq!(attr(resumed, "reins.resumed"), Some(OtelValue::Bool(true)));
    assert_eq!(attr_str(resumed, "reins.run.status"), "completed");
    assert_eq!(attr_str(resumed, "gen_ai.conversation.id"), "run-9");
    // Each half's span counts its own model calls: summed over the trace, nothing twice.
    assert_eq!(attr_i64(first_run, "gen_ai.usage.input_tokens"), 100);
    assert_eq!(attr_i64(resumed, "gen_ai.usage.input_tokens"), 150);
    assert_eq!(attr_i64(resumed, "gen_ai.usage.output_tokens"), 30);
    let tool = span(&second_spans, "execute_tool pay");
    assert_eq!(tool.parent_span_id, resumed.span_context.span_id());
    assert_eq!(
        attr(tool, "reins.hook.action"),
        None,
        "an approval changes nothing"
    );
    assert_eq!(attr_str(tool, "reins.tool.outcome"), "success");
    let suspended = span(&first_spans, "execute_tool pay");
    assert_eq!(attr_str(suspended, "reins.hook.action"), "suspend");
    // It waits, which is no failure; what it waits for is content, not recorded here.
    assert_eq!(attr_str(suspended, "reins.tool.outcome"), "suspended");
    assert_eq!(suspended.status, opentelemetry::trace::Status::Unset);
    assert_eq!(attr(suspended, "output.value"), None);
    assert_eq!(attr(first_run, "output.value"), None);
    let chat = span(&second_spans, "chat gpt-test");
    assert_eq!(
        chat.span_context.trace_id(),
        first_run.span_context.trace_id()
    );

    // The stored context stays the first half's, so later resumes join the same trace.
    let stored = store.load("run-9").await.unwrap();
    assert_eq!(stored.trace_context.as_deref(), Some(context.as_str()));
}
