//! Routing turns between models with `on_model_select`.
//!
//! The agent registers two models with `AgentBuilder::named_model`: a cheap `"fast"` one and
//! a capable `"smart"` one. The `EscalateAfterTools` hook sends the first turn (deciding which
//! tool to call) to `"fast"`, and escalates to `"smart"` once tool results are in the history,
//! when there is real material to reason about.
//!
//! `on_model_select` is synchronous: it decides from the event (default, selected and
//! previous labels, and the history so far), the context and the scratchpad, without I/O.
//!
//! The example prints which label served each turn (from `on_dispatch`, which names the model
//! about to be called) and how many requests each `ScriptedModel` received. Runs offline:
//!
//! ```text
//! cargo run -p reins --example model_routing
//! ```

use reins::agent::{
    AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext, ModelSelectEvent,
    ModelSelectionAction,
};
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct OrderArgs {
    /// The order number.
    order_id: String,
}

/// Serves tool-free turns with `"fast"`, and turns with tool results in view with `"smart"`.
struct EscalateAfterTools;

impl AgentHook for EscalateAfterTools {
    fn on_model_select(
        &self,
        _ctx: &HookContext,
        event: ModelSelectEvent<'_>,
    ) -> ModelSelectionAction {
        let escalate = event
            .history
            .iter()
            .any(|message| matches!(message, Message::Tool(_)));
        let label = if escalate { "smart" } else { "fast" };
        println!(
            "[select] turn {}: previous {:?}, tool results in history: {escalate} -> {label:?}",
            event.turn, event.previous_model
        );
        ModelSelectionAction::select(label)
    }

    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if let Some(label) = event.model() {
            println!("[dispatch] turn {} is served by {label:?}", ctx.turn());
        }
        DispatchAction::proceed()
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let order_status = tool_fn(
        "order_status",
        "Looks up where an order is.",
        |args: OrderArgs| async move {
            Ok::<_, std::convert::Infallible>(json!({
                "order_id": args.order_id,
                "status": "held at customs",
                "since": "3 days",
            }))
        },
    );

    // The fast model only ever picks the tool; the smart one reads the results.
    let fast = ScriptedModel::new([Turn::tool_call(
        "order_status",
        json!({"order_id": "A-1009"}),
    )]);
    let smart = ScriptedModel::new([Turn::text(
        "Your order A-1009 has been held at customs for 3 days. That usually means missing \
         import paperwork; I'd contact the carrier with your invoice to release it.",
    )]);

    // `AgentBuilder::new` needs a model, which it registers as "default"; the hook always
    // selects "fast" or "smart" explicitly, so "default" never serves a call.
    let agent = AgentBuilder::new(fast.clone())
        .named_model("fast", fast.clone())
        .named_model("smart", smart.clone())
        .tool(order_status)
        .add_hook(EscalateAfterTools)
        .build();
    println!("registered models: {:?}\n", agent.model_labels());

    let response = agent
        .prompt("Where is my order A-1009, and what should I do?")
        .extended_details()
        .await?;

    println!(
        "\nrequests served: fast = {}, smart = {}",
        fast.requests().len(),
        smart.requests().len()
    );
    println!("last model used: {:?}", response.state.last_model);
    println!("assistant: {}", response.output);
    Ok(())
}
