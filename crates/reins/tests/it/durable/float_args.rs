//! A number in a call's arguments comes back from the store as the very number the model
//! gave: a run suspended on a call whose amount is `985.6906946328695` (written by JSON as
//! its shortest exact form, which a parser that is not exact reads as the next number up)
//! is resumed, and the tool is given the same `f64`, bit for bit.

use super::per_store::per_store;
use super::{PaymentsWait, decide};
use reins::agent::*;
use reins::store::RunStore;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// Amounts whose shortest decimal form a fast, inexact parser misreads by one unit in the
/// last place.
const AMOUNTS: [f64; 3] = [985.6906946328695, 212.91890726713459, 479.60756426982596];

/// An agent whose `pay` tool records the amounts it is given.
fn payer(model: ScriptedModel, paid: Arc<Mutex<Vec<f64>>>) -> Agent {
    let pay = tool_fn("pay", "Pays amounts.", move |args: Value| {
        let paid = paid.clone();
        async move {
            let amounts = args["amounts"].as_array().cloned().unwrap_or_default();
            paid.lock()
                .unwrap()
                .extend(amounts.iter().filter_map(Value::as_f64));
            Ok::<_, String>("paid".to_owned())
        }
    });
    AgentBuilder::new(model)
        .tool(pay)
        .add_hook(PaymentsWait)
        .build()
}

async fn amounts_survive_the_store_exactly(store: impl RunStore + Clone) {
    let model = ScriptedModel::new([
        Turn::tool_call("pay", json!({ "amounts": AMOUNTS })),
        Turn::text("Paid."),
    ]);
    let paid = Arc::new(Mutex::new(Vec::new()));
    let error = payer(model.clone(), paid.clone())
        .prompt("pay")
        .durable(store.clone())
        .await
        .unwrap_err();
    let PromptError::Suspended { run } = error else {
        panic!("expected a suspension, got {error:?}");
    };
    let run_id = run.run_id().to_string();
    assert_eq!(store.load(&run_id).await.unwrap(), run.state);
    decide(&store, &run_id, "t1c0", ToolDecision::approve())
        .await
        .unwrap();
    let answer = payer(model, paid.clone())
        .resume_stored(store.clone(), &run_id)
        .await
        .unwrap();
    assert_eq!(answer, "Paid.");
    let paid: Vec<u64> = paid.lock().unwrap().iter().map(|f| f.to_bits()).collect();
    let given: Vec<u64> = AMOUNTS.iter().map(|f| f.to_bits()).collect();
    assert_eq!(
        paid, given,
        "the tool was given other numbers than the model's"
    );
}

per_store!(amounts_survive_the_store_exactly, sqlite file);
