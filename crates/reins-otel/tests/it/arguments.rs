//! An `execute_tool` span shows the arguments its tool ran with: a hook's rewrite, or a
//! person's edit when approving a suspended call, not the model's ask. A person reading the
//! trace of a transfer approved for 10 must not read that 1000 were sent.

use crate::harness::{NamedModel, Recorded, attr_str, span};
use opentelemetry_sdk::trace::SpanData;
use reins::agent::*;
use reins::store::MemoryStore;
use reins::testing::Turn;
use reins::tool::tool_fn;
use reins_otel::Telemetry;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::future::IntoFuture;
use std::sync::Arc;
use tokio::sync::Notify;

const ARGUMENTS: [&str; 2] = ["gen_ai.tool.call.arguments", "input.value"];

/// A `transfer` tool that says what it moved.
fn transfer() -> impl reins::tool::Tool {
    tool_fn("transfer", "Moves money.", |args: Value| async move {
        Ok::<_, Infallible>(format!("moved {}", args["amount"]))
    })
}

fn asking_for_1000() -> NamedModel {
    NamedModel::new([
        Turn::tool_call("transfer", json!({"amount": 1000})),
        Turn::text("Transferred."),
    ])
}

/// The arguments `span` shows (each attribute set once, both alike).
fn shown_arguments(span: &SpanData) -> Value {
    for key in ARGUMENTS {
        let times = span.attributes.iter().filter(|kv| kv.key.as_str() == key);
        assert_eq!(times.count(), 1, "{key} set once: {:?}", span.attributes);
    }
    let arguments = attr_str(span, "gen_ai.tool.call.arguments");
    assert_eq!(attr_str(span, "input.value"), arguments);
    serde_json::from_str(&arguments).expect("JSON arguments")
}

/// Rewrites every call's arguments to move 10.
struct CapsAt10;
impl AgentHook for CapsAt10 {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.tool_name() {
            Some(_) => DispatchAction::rewrite_tool_args(event.kind, json!({"amount": 10})),
            None => DispatchAction::proceed(),
        }
    }
}

#[tokio::test]
async fn a_call_a_hook_rewrites_shows_the_arguments_it_ran_with() {
    let recorded = Recorded::start(Telemetry::new().capture_content(|_, text| Some(text)));
    let agent = AgentBuilder::new(asking_for_1000())
        .tool(transfer())
        .add_hook(CapsAt10)
        .build();
    agent.prompt("Transfer 1000").await.unwrap();
    let spans = recorded.spans();
    let call = span(&spans, "execute_tool transfer");
    assert_eq!(attr_str(call, "gen_ai.tool.call.result"), "moved 10");
    assert_eq!(shown_arguments(call), json!({"amount": 10}));
}

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

#[tokio::test]
async fn a_call_approved_with_edited_arguments_shows_the_edit_and_the_waiting_one_the_ask() {
    let model = asking_for_1000();
    let agent = || {
        AgentBuilder::new(model.clone())
            .tool(transfer())
            .add_hook(NeedsApproval)
            .build()
    };
    let store = MemoryStore::new();
    let telemetry = || Telemetry::new().capture_content(|_, text| Some(text));

    let first = Recorded::start(telemetry());
    let error = agent()
        .prompt("Transfer 1000")
        .run_id("pay-1")
        .durable(store.clone())
        .await
        .unwrap_err();
    assert!(matches!(error, PromptError::Suspended { .. }), "{error:?}");
    let spans = first.spans();
    drop(first);
    let waiting = span(&spans, "execute_tool transfer");
    assert_eq!(attr_str(waiting, "reins.tool.outcome"), "suspended");
    assert_eq!(shown_arguments(waiting), json!({"amount": 1000}));

    let resumed = Recorded::start(telemetry());
    let edited = ToolDecision::ApproveWithArgs {
        args: json!({"amount": 10}),
    };
    let answer = agent()
        .resume_stored(store, "pay-1")
        .decide("t1c0", edited)
        .await
        .unwrap();
    assert_eq!(answer, "Transferred.");
    let spans = resumed.spans();
    let approved = span(&spans, "execute_tool transfer");
    assert_eq!(attr_str(approved, "gen_ai.tool.call.result"), "moved 10");
    assert_eq!(shown_arguments(approved), json!({"amount": 10}));
}

/// Denies every tool call.
struct DenyAll;
impl AgentHook for DenyAll {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.tool_name() {
            Some(_) => DispatchAction::deny("not allowed"),
            None => DispatchAction::proceed(),
        }
    }
}

#[tokio::test]
async fn a_call_not_run_shows_what_the_model_asked() {
    let recorded = Recorded::start(Telemetry::new().capture_content(|_, text| Some(text)));
    let agent = AgentBuilder::new(asking_for_1000())
        .tool(transfer())
        .add_hook(DenyAll)
        .build();
    agent.prompt("Transfer 1000").await.unwrap();
    let spans = recorded.spans();
    let denied = span(&spans, "execute_tool transfer");
    assert_eq!(attr_str(denied, "reins.tool.outcome"), "denied");
    assert_eq!(shown_arguments(denied), json!({"amount": 1000}));
}

/// Says it was asked (`asked`), then never decides.
struct NeverDecides(Arc<Notify>);
impl AgentHook for NeverDecides {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if event.tool_name().is_some() {
            self.0.notify_one();
            std::future::pending::<()>().await;
        }
        DispatchAction::proceed()
    }
}

#[tokio::test]
async fn a_call_cut_off_while_its_hooks_decide_shows_what_the_model_asked() {
    let recorded = Recorded::start(Telemetry::new().capture_content(|_, text| Some(text)));
    let asked = Arc::new(Notify::new());
    let run = AgentBuilder::new(asking_for_1000())
        .tool(transfer())
        .add_hook(NeverDecides(Arc::clone(&asked)))
        .build()
        .prompt("Transfer 1000")
        .into_future();
    tokio::select! {
        _ = run => panic!("the hook never decides"),
        () = asked.notified() => {}
    }
    let spans = recorded.spans();
    let cut_off = span(&spans, "execute_tool transfer");
    assert_eq!(attr_str(cut_off, "error.type"), "cancelled");
    assert_eq!(shown_arguments(cut_off), json!({"amount": 1000}));
}
