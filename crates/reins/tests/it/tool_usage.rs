//! Tokens a tool spends on model calls of its own (another agent's run), counted in the run
//! that called it.

use reins::agent::*;
use reins::completion::Usage;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{Tool, ToolCallContext, tool_fn};
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Deserialize, schemars::JsonSchema)]
struct Ask {
    prompt: String,
}

/// `ask`: runs a sub-agent whose model answers with `usage` per run, counting it in the
/// caller's run; `runs` counts the sub-agent's runs.
fn ask_tool(usage: Usage, runs: Arc<AtomicUsize>) -> impl Tool {
    tool_fn("ask", "Asks another agent.", move |ask: Ask| {
        let runs = runs.clone();
        async move {
            runs.fetch_add(1, Ordering::SeqCst);
            let model = ScriptedModel::new([Turn::text("Paris.").usage(usage)]);
            let sub = AgentBuilder::new(model).build();
            let run = sub.prompt(ask.prompt).extended_details().await?;
            if let Some(call) = ToolCallContext::current() {
                call.add_usage(run.usage());
            }
            Ok::<_, PromptError>(run.output)
        }
    })
}

#[tokio::test]
async fn a_sub_agents_usage_is_counted_in_the_callers_run() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        Turn::tool_calls([
            ("ask", json!({"prompt": "Capital of France?"})),
            ("ask", json!({"prompt": "And of Italy?"})),
        ])
        .usage(Usage::new(20, 5)),
        Turn::text("Paris and Rome.").usage(Usage::new(30, 5)),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(ask_tool(Usage::new(100, 10), runs.clone()))
        .build();
    let run = agent
        .prompt("Two capitals?")
        .tool_concurrency(2)
        .extended_details()
        .await
        .unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    let usage = run.usage();
    // Its own two model calls, and each of the two sub-runs once.
    assert_eq!((usage.input_tokens, usage.output_tokens), (250, 30));
    assert_eq!(usage.total_tokens, 280);
}

/// Suspends every call to `pay`.
struct PayWaits;
impl AgentHook for PayWaits {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.tool_name() {
            Some("pay") => DispatchAction::suspend("a person approves payments"),
            _ => DispatchAction::proceed(),
        }
    }
}

#[tokio::test]
async fn a_suspended_run_keeps_its_tools_usage_and_resuming_counts_it_once() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        Turn::tool_calls([
            ("ask", json!({"prompt": "How much?"})),
            ("pay", json!({"to": "bob"})),
        ])
        .usage(Usage::new(20, 5)),
        Turn::text("Paid.").usage(Usage::new(30, 5)),
    ]);
    let pay = tool_fn("pay", "Pays.", |_: serde_json::Value| async move {
        Ok::<_, std::convert::Infallible>("paid")
    });
    let agent = AgentBuilder::new(model)
        .tool(ask_tool(Usage::new(100, 10), runs.clone()))
        .tool(pay)
        .add_hook(PayWaits)
        .build();
    let error = agent.prompt("Pay bob.").await.unwrap_err();
    let PromptError::Suspended { run } = error else {
        panic!("expected a suspended run, got {error:?}");
    };
    // The finished call's sub-run is in the saved state, beside the model call.
    assert_eq!(run.state.usage.input_tokens, 120);
    let response = agent
        .resume(*run)
        .decide("t1c1", ToolDecision::approve())
        .extended_details()
        .await
        .unwrap();
    assert_eq!(response.output, "Paid.");
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the finished call is not run again"
    );
    let usage = response.usage();
    assert_eq!((usage.input_tokens, usage.output_tokens), (150, 20));
}
