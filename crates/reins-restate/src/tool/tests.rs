//! What a journaled tool attaches to its call, journaled with its result: a first execution
//! and a replay (stand-ins for the step port) count and show the same; and entries journaled
//! before attachments were still replay.

use super::recorded::{JournaledCall, RecordedCall};
use crate::steps::{Journal, Steps, recording_port, replaying_port};
use reins::agent::{AgentBuilder, AgentHook, HookContext, OutcomeAction, OutcomeEvent};
use reins::completion::Usage;
use reins::hooks::redaction::Redaction;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{RetrySafety, ToolAttachments, ToolCallContext, ToolOutcome, tool_fn};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Each tool result the hooks saw: the tool, its outcome, its extension `by`.
type Seen = Arc<Mutex<Vec<(String, ToolOutcome, Option<Value>)>>>;

struct Watch(Seen);

impl AgentHook for Watch {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(result) = event.tool_outcome() {
            self.0.lock().expect("seen").push((
                result.tool_name().to_owned(),
                result.outcome().clone(),
                result.extensions().get("by").cloned(),
            ));
        }
        OutcomeAction::proceed()
    }
}

/// Runs `run-7` on `steps`: one turn calls `ask` (declared safe to run again: one step; it
/// counts 100/10 tokens and attaches who answered) and `skip` (undeclared: a start marker,
/// then its step; it answers the call as skipped), then the answer. `executed` counts the
/// tools' executions. Returns the run's usage and what the hooks saw.
async fn run(
    steps: &Steps,
    executed: &Arc<AtomicUsize>,
) -> (Usage, Vec<(String, ToolOutcome, Option<Value>)>) {
    let counted = Arc::clone(executed);
    let ask = tool_fn("ask", "Asks another agent.", move |_: Value| {
        counted.fetch_add(1, Ordering::SeqCst);
        async {
            let call = ToolCallContext::current().ok_or("outside a call")?;
            call.add_usage(Usage::new(100, 10));
            call.set_extension("by", json!("geographer"));
            Ok::<_, &str>("Paris")
        }
    })
    .retry_safety(RetrySafety::Idempotent);
    let counted = Arc::clone(executed);
    let skip = tool_fn("skip", "Skips.", move |_: Value| {
        counted.fetch_add(1, Ordering::SeqCst);
        async {
            let call = ToolCallContext::current().ok_or("outside a call")?;
            call.answer_skipped("not today");
            Ok::<_, &str>("ignored")
        }
    });
    let model = ScriptedModel::new([
        Turn::tool_calls([("ask", json!({})), ("skip", json!({}))]).usage(Usage::new(20, 5)),
        Turn::text("done").usage(Usage::new(30, 5)),
    ]);
    let seen = Seen::default();
    let agent = AgentBuilder::new(model)
        .tool(steps.tool(ask))
        .tool(steps.tool(skip))
        .add_hook(Watch(Arc::clone(&seen)))
        .build();
    let response = agent
        .prompt("Capital of France?")
        .run_id("run-7")
        .extended_details()
        .await
        .expect("the run answers");
    let seen = seen.lock().expect("seen").clone();
    (response.usage(), seen)
}

#[tokio::test]
async fn what_a_tool_attaches_reaches_the_run_once_on_the_first_execution_and_on_replay() {
    let journal = Journal::default();
    let executed = Arc::new(AtomicUsize::new(0));
    let first = run(&recording_port("run-7", Arc::clone(&journal)), &executed).await;
    let replayed = run(&replaying_port("run-7", journal), &executed).await;
    assert_eq!(executed.load(Ordering::SeqCst), 2, "each tool ran once");
    let expected = (
        // The two model turns, and what `ask` counted once.
        Usage::new(150, 20),
        vec![
            (
                "ask".to_owned(),
                ToolOutcome::Success,
                Some(json!("geographer")),
            ),
            (
                "skip".to_owned(),
                ToolOutcome::Skipped {
                    reason: "not today".to_owned(),
                },
                None,
            ),
        ],
    );
    assert_eq!(first, expected);
    assert_eq!(replayed, expected);
}

#[test]
fn an_entry_journaled_before_attachments_reads_as_one_with_nothing_attached() {
    for (old, call) in [
        (
            json!({"outcome": "output", "value": "Paris"}),
            RecordedCall::Output {
                value: json!("Paris"),
            },
        ),
        (
            json!({"outcome": "error", "message": "no"}),
            RecordedCall::Error {
                message: "no".to_owned(),
            },
        ),
        (json!({"outcome": "in_doubt"}), RecordedCall::InDoubt),
    ] {
        let entry: JournaledCall = serde_json::from_value(old.clone()).expect("an old entry");
        assert_eq!(entry, JournaledCall::bare(call));
        // Nothing attached is journaled as before.
        assert_eq!(entry.to_json(), old);
    }
    assert!(JournaledCall::is_in_doubt(&json!({"outcome": "in_doubt"})));
}

#[test]
fn an_answers_text_is_journaled_masked_like_the_result() {
    let steps = Steps::embedded();
    steps.redaction(Redaction::new());
    let mut attached = ToolAttachments::default();
    attached.answer = Some(ToolOutcome::Denied {
        report: "mail ada@example.com first".to_owned(),
    });
    attached.usage = Usage::new(1, 2);
    let entry = JournaledCall {
        call: RecordedCall::Output {
            value: json!("ignored"),
        },
        attached,
    };
    let journaled = steps.masked_entry(entry).to_json();
    let text = journaled.to_string();
    assert!(!text.contains("ada@example.com"), "{text}");
    let read: JournaledCall = serde_json::from_value(journaled).expect("the entry reads back");
    assert_eq!(read.attached.usage, Usage::new(1, 2));
    assert!(matches!(
        read.attached.answer,
        Some(ToolOutcome::Denied { .. })
    ));
}

/// What the model reads of a call whose arguments do not read as its tool's, through a
/// journaled tool (embedded and journaled alike): the field that did not fit named, as a
/// plain tool's run names it, but as the tool's failure (its arguments, read by the run
/// loop as JSON, fit; the journaled tool reads them as its inner tool's).
#[tokio::test]
async fn a_bad_calls_field_is_named_as_the_tools_failure() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Transfer {
        to: String,
        amount: u64,
    }
    for steps in [
        Steps::embedded(),
        recording_port("run-8", Journal::default()),
    ] {
        let pay = tool_fn("pay", "Pays.", |args: Transfer| async move {
            Ok::<_, &str>(args.amount.to_string())
        });
        let model = ScriptedModel::new([
            Turn::tool_call("pay", json!({"to": "bob", "amount": "lots"})),
            Turn::text("done"),
        ]);
        let seen = Seen::default();
        let agent = AgentBuilder::new(model.clone())
            .tool(steps.tool(pay))
            .add_hook(Watch(Arc::clone(&seen)))
            .build();
        agent
            .prompt("Pay bob.")
            .run_id("run-8")
            .extended_details()
            .await
            .expect("the run answers");
        let read = model.requests()[1]
            .history
            .iter()
            .find_map(|message| match message {
                reins::message::Message::Tool(result) => Some(result.content.clone()),
                _ => None,
            })
            .expect("the call's result");
        assert_eq!(
            read,
            "the tool failed: invalid arguments: at `amount`: invalid type: string \"lots\", \
             expected u64"
        );
        let seen = seen.lock().expect("seen");
        assert!(
            matches!(
                seen[0].1,
                ToolOutcome::Failed(reins::tool::ToolFailure::Execution { .. })
            ),
            "{seen:?}"
        );
    }
}
