//! An approval policy for money transfers, written as an `on_dispatch` hook.
//!
//! The scripted model asks for three `transfer_funds` calls in one turn: a small one, a large
//! one and one without an amount. The `TransferPolicy` hook sees every tool call before it runs
//! and decides:
//!
//! - amounts up to the automatic limit are approved and the tool runs;
//! - larger amounts are skipped with a reason, which the model receives as the tool result;
//! - a missing or unreadable amount is denied too (fail-closed: no clear answer is never an
//!   approval).
//!
//! A second hook, `OutcomeAudit`, prints the structured outcome of each call (`Success` or
//! `Skipped`). The example then prints the tool results exactly as the model received them on its next
//! turn. Runs offline on `ScriptedModel`:
//!
//! ```text
//! cargo run -p reins --example approval_policy
//! ```

use reins::agent::{
    AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext, OutcomeAction,
    OutcomeEvent,
};
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The arguments of `transfer_funds`.
#[derive(Deserialize, JsonSchema)]
struct TransferArgs {
    /// The account to pay.
    to: String,
    /// The amount in whole dollars.
    amount: u64,
}

/// Approves transfers up to `max_auto_transfer` dollars; refuses everything else.
struct TransferPolicy {
    max_auto_transfer: u64,
}

impl AgentHook for TransferPolicy {
    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        // `on_dispatch` also fires for model calls, which have no tool name.
        let (Some(tool_name), Some(args)) = (event.tool_name(), event.tool_args()) else {
            return DispatchAction::proceed();
        };
        if tool_name != "transfer_funds" {
            return DispatchAction::proceed();
        }

        // The arguments read as the tool's own type (with any earlier hook's rewrite).
        let amount = event
            .tool_args_as::<TransferArgs>()
            .map(|read| read.map(|t| t.amount));

        let action = match amount {
            Some(Ok(n)) if n <= self.max_auto_transfer => DispatchAction::proceed(),
            Some(Ok(n)) => DispatchAction::skip(format!(
                "denied by policy: ${n} exceeds the ${} automatic transfer limit; \
                 ask the user to approve it in the banking app",
                self.max_auto_transfer
            )),
            // Fail closed: an unreadable request is a denial, never an approval.
            _ => DispatchAction::skip("denied by policy: missing transfer amount"),
        };
        let verdict = match &action {
            DispatchAction::Proceed => "APPROVED".to_owned(),
            DispatchAction::Skip(reason) => format!("SKIPPED ({reason})"),
            other => format!("{other:?}"),
        };
        println!(
            "[policy] turn {} {tool_name}({args}) -> {verdict}",
            ctx.turn()
        );
        action
    }
}

/// Prints each tool call's structured outcome: `Success` for the approved call, `Skipped` with
/// the policy's reason for the others.
struct OutcomeAudit;

impl AgentHook for OutcomeAudit {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        // `tool_outcome` (unlike `tool_result`) also returns skipped and denied calls.
        if let Some(result) = event.tool_outcome() {
            println!(
                "[audit]  {} {} outcome: {:?}",
                result.internal_call_id(),
                result.tool_name(),
                result.outcome()
            );
        }
        OutcomeAction::proceed()
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Total actually moved, to show that only the approved call ran.
    let moved = Arc::new(AtomicU64::new(0));
    let moved_by_tool = Arc::clone(&moved);
    let transfer_funds = tool_fn(
        "transfer_funds",
        "Transfers money to another account.",
        move |args: TransferArgs| {
            let moved = Arc::clone(&moved_by_tool);
            async move {
                moved.fetch_add(args.amount, Ordering::Relaxed);
                println!("[tool] transferring ${} to {}", args.amount, args.to);
                Ok::<_, std::convert::Infallible>(json!({
                    "status": "completed",
                    "to": args.to,
                    "amount": args.amount,
                }))
            }
        },
    );

    let model = ScriptedModel::new([
        Turn::tool_calls([
            ("transfer_funds", json!({"to": "alice", "amount": 40})),
            ("transfer_funds", json!({"to": "bob", "amount": 5000})),
            ("transfer_funds", json!({"to": "carol"})),
        ]),
        Turn::text(
            "I sent $40 to Alice. The $5000 transfer to Bob needs your approval in the \
             banking app, and I could not send anything to Carol without an amount.",
        ),
    ]);

    let agent = AgentBuilder::new(model.clone())
        .preamble("You move money between accounts for the user.")
        .tool(transfer_funds)
        .add_hook(TransferPolicy {
            max_auto_transfer: 100,
        })
        .add_hook(OutcomeAudit)
        .build();

    let prompt = "Pay Alice $40, Bob $5000, and send Carol something.";
    println!("user: {prompt}\n");
    let answer = agent.prompt(prompt).await?;

    // The second request is the one the model answered after the tools: its history ends
    // with one tool result per call, exactly as the model saw them.
    println!("\nWhat the model received as tool results:");
    let requests = model.requests();
    if let Some(last) = requests.last() {
        for message in &last.history {
            if let Message::Tool(result) = message {
                println!(
                    "  {} {} -> {}",
                    result.tool_call_id, result.tool_name, result.content
                );
            }
        }
    }

    println!("\nmoney actually moved: ${}", moved.load(Ordering::Relaxed));
    println!("assistant: {answer}");
    Ok(())
}
