//! The README's example, kept compiling and true.

use reins::agent::{AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct Transfer {
    to: String,
    amount: u64,
}

struct TransferPolicy;

impl AgentHook for TransferPolicy {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.tool_args().map(serde_json::from_str::<Transfer>) {
            Some(Ok(t)) if t.amount > 100 => DispatchAction::skip("over the $100 limit"),
            Some(Err(_)) => DispatchAction::skip("unreadable transfer"),
            _ => DispatchAction::proceed(),
        }
    }
}

#[tokio::test]
async fn the_readme_example_denies_the_large_transfer() {
    let model = ScriptedModel::new([
        Turn::tool_call("transfer", json!({"to": "bob", "amount": 5000})),
        Turn::text("That transfer needs your approval."),
    ]);
    let transfer = tool_fn("transfer", "Sends money.", |t: Transfer| async move {
        Ok::<_, std::io::Error>(format!("sent ${} to {}", t.amount, t.to))
    });
    let agent = AgentBuilder::new(model.clone())
        .tool(transfer)
        .add_hook(TransferPolicy)
        .build();
    let answer = agent.prompt("Send Bob $5000").max_turns(3).await.unwrap();
    assert_eq!(answer, "That transfer needs your approval.");
    assert_eq!(
        model.requests()[1].history.last().unwrap().text(),
        "over the $100 limit"
    );
}
