//! JSON nested as deep as a parser takes it, in a stored run: a model's call whose arguments
//! nest that deep is answered as invalid (the model is told why) and kept as text, so the
//! run, stored with it, is read back and resumed; a tool's deep result is kept as text anyway.

use super::per_store::per_store;
use super::{PaymentsWait, RunStateBuilder, decide};
use crate::common::echo_tool;
use reins::agent::*;
use reins::message::Message;
use reins::store::{RunStore, StoreError};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// The deepest JSON `serde_json` parses on its own (its recursion limit is 128): the deepest
/// arguments a provider's answer can carry.
const DEEPEST_PARSED: usize = 127;

/// `levels` objects one inside the other around "pay 5".
fn nested(levels: usize) -> Value {
    (0..levels).fold(json!("pay 5"), |inner, _| json!({ "text": inner }))
}

fn payer(model: ScriptedModel, log: Arc<Mutex<Vec<String>>>) -> Agent {
    AgentBuilder::new(model)
        .tool(echo_tool("pay", log))
        .tool(tool_fn("deep_report", "A report.", |_: Value| async {
            Ok::<_, String>(nested(DEEPEST_PARSED))
        }))
        .add_hook(PaymentsWait)
        .build()
}

/// What the run's tools answered, in order.
fn tool_answers(history: &[Message]) -> Vec<String> {
    let answers = history.iter().filter_map(|message| match message {
        Message::Tool(result) => Some(result.content.clone()),
        _ => None,
    });
    answers.collect()
}

/// A call whose arguments nest 127 levels, then a tool answering 127 levels deep, then a
/// payment waiting for approval: the stored run is listed, read, decided and resumed by id
/// by a fresh agent.
async fn deep_json_leaves_the_run_resumable(store: impl RunStore + Clone) {
    let model = ScriptedModel::new([
        Turn::tool_call("pay", nested(DEEPEST_PARSED)),
        Turn::tool_call("deep_report", json!({})),
        Turn::tool_call("pay", json!({"text": "pay 5"})),
        Turn::text("Paid."),
    ]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let error = payer(model.clone(), log.clone())
        .prompt("pay")
        .durable(store.clone())
        .await
        .unwrap_err();
    let PromptError::Suspended { run } = error else {
        panic!("expected a suspension, got {error:?}");
    };
    let run_id = run.run_id().to_string();
    assert_eq!(store.load(&run_id).await.unwrap(), run.state);
    let listing = store.pending_approvals().await.unwrap();
    assert!(listing.unreadable.is_empty(), "{:?}", listing.unreadable);
    let [pending] = &listing.approvals[..] else {
        panic!("expected one pending call, got {:?}", listing.approvals);
    };
    assert_eq!(pending.internal_call_id, "t3c0");
    decide(&store, &run_id, "t3c0", ToolDecision::approve())
        .await
        .unwrap();

    let answer = payer(model, log.clone())
        .resume_stored(store.clone(), &run_id)
        .await
        .unwrap();
    assert_eq!(answer, "Paid.");
    assert_eq!(
        *log.lock().unwrap(),
        ["pay 5"],
        "only the readable call ran"
    );
    let finished = store.load(&run_id).await.unwrap();
    let answers = tool_answers(&finished.history);
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert!(
        answers[0].contains("invalid arguments") && answers[0].contains("nest deeper than"),
        "the model is told why its call was refused: {}",
        answers[0]
    );
    assert_eq!(
        answers[1],
        serde_json::to_string(&nested(DEEPEST_PARSED)).unwrap()
    );
}

per_store!(deep_json_leaves_the_run_resumable, sqlite file);

/// A typed run's answer: its `text` may be any JSON.
#[derive(Debug, Deserialize, JsonSchema)]
struct Report {
    text: Value,
}

/// A typed run's answer through the output tool, nested 127 levels: refused as invalid
/// arguments, the model answers again, and the finished run is read back.
async fn a_deep_structured_answer_leaves_the_run_readable(store: impl RunStore + Clone) {
    let model = ScriptedModel::new([
        Turn::tool_call("final_output", nested(DEEPEST_PARSED)),
        Turn::tool_call("final_output", json!({"text": "pay 5"})),
    ]);
    let answer: Report = AgentBuilder::new(model)
        .build()
        .prompt("report")
        .run_id("typed-deep")
        .durable(store.clone())
        .output::<Report>()
        .mode(OutputMode::Tool)
        .await
        .unwrap();
    assert_eq!(answer.text, "pay 5");
    let finished = store.load("typed-deep").await.unwrap();
    assert_eq!(finished.status, RunStatus::Completed);
    let answers = tool_answers(&finished.history);
    assert!(answers[0].contains("nest deeper than"), "{answers:?}");
}

per_store!(a_deep_structured_answer_leaves_the_run_readable);

/// A state nested deeper than a stored record is read back with (a hook's entry, here) is
/// not written: the store says why, and the record it had stays readable.
async fn a_state_too_deep_to_read_back_is_not_stored(store: impl RunStore) {
    let mut state = RunStateBuilder::suspended_example();
    let lease = store.create(&state, "w").await.unwrap();
    state.entries.push(Entry {
        kind: "report".to_owned(),
        value: nested(DEEPEST_PARSED),
    });
    let refused = store.checkpoint(&lease, &state, &[], false).await;
    assert!(
        matches!(&refused, Err(StoreError::TooDeep { depth, readable: 127, .. }) if *depth > 127),
        "{refused:?}"
    );
    let stored = store.load(&state.run_id).await.unwrap();
    assert!(stored.entries.is_empty());
}

per_store!(a_state_too_deep_to_read_back_is_not_stored);
