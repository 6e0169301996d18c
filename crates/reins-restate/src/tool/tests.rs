//! What a journaled tool attaches to its call, journaled with its result: a first execution
//! and a replay (stand-ins for the step port) count and show the same; and entries journaled
//! before attachments were still replay.

use super::recorded::{JournaledCall, RecordedCall};
use crate::steps::{Journal, MAX_STEP_BYTES, Steps, recording_port, replaying_port};
use reins::agent::{AgentBuilder, AgentHook, HookContext, OutcomeAction, OutcomeEvent};
use reins::completion::Usage;
use reins::hooks::redaction::Redaction;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{
    RetrySafety, ToolAttachments, ToolCallContext, ToolFailure, ToolOutcome, tool_fn,
};
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
    for answer in [
        ToolOutcome::Denied {
            report: "mail ada@example.com first".to_owned(),
        },
        // Arguments that did not fit quote what the model wrote.
        ToolOutcome::Failed(ToolFailure::InvalidArguments {
            message: "at `to`: unknown payee ada@example.com".to_owned(),
        }),
    ] {
        let mut attached = ToolAttachments::default();
        attached.answer = Some(answer.clone());
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
        let kept = read.attached.answer.expect("the answer");
        assert_eq!(
            std::mem::discriminant(&kept),
            std::mem::discriminant(&answer)
        );
    }
}

/// What the model read as the first call's result, and how hooks saw that call end.
async fn bad_call(steps: Option<&Steps>, id: &str) -> (String, ToolOutcome) {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Transfer {
        to: String,
        amount: u64,
    }
    let pay = tool_fn("pay", "Pays.", |args: Transfer| async move {
        Ok::<_, &str>(args.amount.to_string())
    });
    let model = ScriptedModel::new([
        Turn::tool_call("pay", json!({"to": "bob", "amount": "lots"})),
        Turn::text("done"),
    ]);
    let seen = Seen::default();
    let builder = AgentBuilder::new(model.clone());
    let builder = match steps {
        Some(steps) => builder.tool(steps.tool(pay)),
        None => builder.tool(pay),
    };
    let agent = builder.add_hook(Watch(Arc::clone(&seen))).build();
    agent
        .prompt("Pay bob.")
        .run_id(id)
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
    let outcome = seen.lock().expect("seen")[0].1.clone();
    (read, outcome)
}

/// A call whose arguments do not read as its tool's, through a journaled tool (embedded, on
/// a first execution and on replay): the model reads the field that did not fit and hooks see
/// invalid arguments, as for the same tool unwrapped.
#[tokio::test]
async fn a_bad_call_reads_as_it_does_for_the_tool_unwrapped() {
    let unwrapped = bad_call(None, "run-8").await;
    assert_eq!(
        unwrapped,
        (
            "invalid arguments: at `amount`: invalid type: string \"lots\", expected u64"
                .to_owned(),
            ToolOutcome::Failed(ToolFailure::InvalidArguments {
                message: "at `amount`: invalid type: string \"lots\", expected u64".to_owned()
            })
        )
    );
    let journal = Journal::default();
    for steps in [
        Steps::embedded(),
        recording_port("run-8", Arc::clone(&journal)),
        replaying_port("run-8", journal),
    ] {
        assert_eq!(bad_call(Some(&steps), "run-8").await, unwrapped);
    }
}

/// A bad call journaled before such calls were answered as invalid arguments (its entry the
/// tool's error alone) replays as it first ran: the tool's failure.
#[tokio::test]
async fn a_bad_call_journaled_as_the_tools_error_replays_as_it_first_ran() {
    let text = "invalid arguments: at `amount`: invalid type: string \"lots\", expected u64";
    let journal = Journal::default();
    journal.lock().expect("journal").extend([
        ("run-8/t1c0/started".to_owned(), Value::Null),
        (
            "run-8/t1c0".to_owned(),
            json!({"outcome": "error", "message": text}),
        ),
    ]);
    let steps = replaying_port("run-8", journal);
    assert_eq!(
        bad_call(Some(&steps), "run-8").await,
        (
            format!("the tool failed: {text}"),
            ToolOutcome::Failed(ToolFailure::Execution {
                message: text.to_owned()
            })
        )
    );
}

/// A result too large for one journal entry: the model reads that it was, with its size and
/// the limit, and what the tool counted and attached still reaches the run, on the first
/// execution and on replay.
#[tokio::test]
async fn a_result_too_large_to_journal_keeps_what_the_tool_attached() {
    let journal = Journal::default();
    for steps in [
        recording_port("run-9", Arc::clone(&journal)),
        replaying_port("run-9", Arc::clone(&journal)),
    ] {
        let big = tool_fn("big", "Returns a lot.", |_: Value| async {
            let call = ToolCallContext::current().ok_or("outside a call")?;
            call.add_usage(Usage::new(100, 10));
            call.set_extension("by", json!("archivist"));
            Ok::<_, &str>("x".repeat(MAX_STEP_BYTES))
        });
        let model = ScriptedModel::new([
            Turn::tool_call("big", json!({})).usage(Usage::new(20, 5)),
            Turn::text("done").usage(Usage::new(30, 5)),
        ]);
        let seen = Seen::default();
        let agent = AgentBuilder::new(model.clone())
            .tool(steps.tool(big))
            .add_hook(Watch(Arc::clone(&seen)))
            .build();
        let response = agent
            .prompt("Fetch it all.")
            .run_id("run-9")
            .extended_details()
            .await
            .expect("the run answers");
        assert_eq!(response.usage(), Usage::new(150, 20));
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
            format!(
                "the tool failed: the tool's result is {} bytes as JSON, more than a journaled \
                 step may hold (8388608 bytes); it was not kept: return large data by reference",
                MAX_STEP_BYTES + 2
            )
        );
        let seen = seen.lock().expect("seen");
        assert!(
            matches!(
                &seen[..],
                [(_, ToolOutcome::Failed(ToolFailure::Execution { .. }), Some(by))]
                    if *by == json!("archivist")
            ),
            "{seen:?}"
        );
    }
}

/// What a tool attached for hooks that is too large by itself gives way too; its usage stays.
#[test]
fn attachments_too_large_to_journal_leave_the_usage() {
    let huge = json!("x".repeat(MAX_STEP_BYTES));
    for value in [json!("small"), huge.clone()] {
        let mut attached = ToolAttachments::default();
        attached.usage = Usage::new(100, 10);
        attached.extensions.insert("dump", huge.clone());
        let entry = JournaledCall {
            call: RecordedCall::Output { value },
            attached,
        }
        .within_journal_limit();
        let RecordedCall::Error { message } = &entry.call else {
            panic!("the call fails: {:?}", entry.call)
        };
        assert!(message.contains("(8388608 bytes)"), "{message}");
        assert!(message.contains("attached for hooks"), "{message}");
        assert_eq!(entry.attached.usage, Usage::new(100, 10));
        assert!(entry.attached.extensions.is_empty());
    }
}
