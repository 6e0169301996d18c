//! The tokens of a call in doubt: what the attempt a dying worker cut off spent never reached
//! the journal and is not counted; a rerun's are, once.

use crate::steps::{StepKind, StepRequest, Steps};
use reins::agent::{AgentBuilder, ToolDecision};
use reins::completion::Usage;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{ToolCallContext, tool_fn};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::{mpsc, oneshot};

/// A replay of `run-5` whose journal holds the first start marker of every tool call and
/// nothing after it (the worker died while the tool ran): every other step executes, and a
/// call in doubt is decided with `decision`.
fn cut_off_port(decision: ToolDecision) -> Steps {
    let (sender, mut receiver) = mpsc::unbounded_channel::<StepRequest>();
    tokio::spawn(async move {
        while let Some(request) = receiver.recv().await {
            let value = match request.kind {
                StepKind::Decision(_) => serde_json::to_value(&decision).map_err(|e| e.to_string()),
                StepKind::StartMarker if request.name.ends_with("/started") => {
                    // From the journal: the tool started before.
                    drop(request.execute);
                    Ok(Value::Null)
                }
                _ => {
                    let (done, done_rx) = oneshot::channel();
                    let _ = request.execute.send(done);
                    done_rx
                        .await
                        .unwrap_or_else(|_| Err("abandoned".to_owned()))
                }
            };
            let _ = request.result.send(value);
        }
    });
    Steps::journaled("run-5".to_owned(), sender)
}

/// Runs `run-5` on `steps`: one call of `charge` (which counts 100/10 tokens, as another
/// agent's run would), then the answer. Returns the run's usage and the tool's executions.
async fn charged(steps: &Steps) -> (Usage, usize) {
    let executed = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&executed);
    let charge = tool_fn("charge", "Charges a card.", move |_: Value| {
        counted.fetch_add(1, Ordering::SeqCst);
        async {
            let call = ToolCallContext::current().ok_or("outside a call")?;
            call.add_usage(Usage::new(100, 10));
            Ok::<_, &str>("charged")
        }
    });
    let model = ScriptedModel::new([
        Turn::tool_call("charge", json!({})).usage(Usage::new(20, 5)),
        Turn::text("done").usage(Usage::new(30, 5)),
    ]);
    let agent = AgentBuilder::new(model).tool(steps.tool(charge)).build();
    let response = agent
        .prompt("Charge.")
        .run_id("run-5")
        .extended_details()
        .await
        .expect("the run answers");
    (response.usage(), executed.load(Ordering::SeqCst))
}

#[tokio::test]
async fn a_call_in_doubt_counts_the_tokens_of_a_rerun_and_none_of_the_cut_off_attempt() {
    // Rerun: the tool runs once more here, and what that run counted is counted once.
    let rerun = charged(&cut_off_port(ToolDecision::Rerun)).await;
    assert_eq!(rerun, (Usage::new(150, 20), 1));
    // Answered without running it: the two model turns alone (the cut-off attempt's tokens
    // never reached the journal).
    for decision in [
        ToolDecision::Skip {
            message: "not charged again".to_owned(),
        },
        ToolDecision::supply_result("charged (receipt 17)"),
        ToolDecision::deny("not charged"),
    ] {
        assert_eq!(
            charged(&cut_off_port(decision)).await,
            (Usage::new(50, 10), 0)
        );
    }
}
