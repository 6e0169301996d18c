//! Recovering from hallucinated tool names with `on_invalid_tool_call`.
//!
//! Models sometimes call tools that don't exist. Some mistakes are predictable — a model
//! trained on another API calls `default_api` when it means `search_web` — and can be repaired
//! by renaming the call. Others are not, and the best move is to tell the model which tools
//! exist and let it try again.
//!
//! The `RepairToolNames` hook does both:
//!
//! - `default_api` is repaired to `search_web` with `InvalidToolCallAction::repair`, and the
//!   call runs as if the model had named it correctly;
//! - any other unknown tool gets `InvalidToolCallAction::retry(feedback)`: the turn is
//!   dropped and the feedback is sent as a user message. Retries must be allowed per run with
//!   `.max_invalid_tool_call_retries(n)`; this example allows one.
//!
//! The second run shows the budget at work: a second unknown tool after the one allowed retry
//! fails the run with `PromptError::UnknownToolCall`. Runs offline on `ScriptedModel`:
//!
//! ```text
//! cargo run -p reins --example invalid_tool_call_repair
//! ```

use reins::agent::{
    AgentBuilder, AgentHook, HookContext, InvalidToolCallAction, InvalidToolCallContext,
    InvalidToolCallReason, PromptError,
};
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct SearchArgs {
    /// What to search for.
    query: String,
}

/// Renames `default_api` to `search_web`; asks the model again about other unknown tools.
struct RepairToolNames;

impl AgentHook for RepairToolNames {
    async fn on_invalid_tool_call(
        &self,
        ctx: &HookContext,
        event: &InvalidToolCallContext,
    ) -> Option<InvalidToolCallAction> {
        let decision = match event.reason {
            InvalidToolCallReason::UnknownTool if event.tool_name == "default_api" => {
                Some(InvalidToolCallAction::repair("search_web"))
            }
            InvalidToolCallReason::UnknownTool => Some(InvalidToolCallAction::retry(format!(
                "There is no tool named `{}`. Use one of these tools: {}.",
                event.tool_name,
                event.available_tools.join(", ")
            ))),
            // Malformed arguments can't be fixed by renaming: leave them to the default.
            _ => None,
        };
        println!(
            "[hook] turn {}: invalid call `{}` ({:?}, args {}) -> {:?}",
            ctx.turn(),
            event.tool_name,
            event.reason,
            event.args,
            decision
        );
        decision
    }
}

fn print_history(history: &[Message]) {
    for message in history {
        match message {
            Message::User { content } => println!("    user:      {content}"),
            Message::Assistant { .. } => {
                let calls: Vec<String> = message
                    .tool_calls()
                    .map(|call| format!("{}({})", call.name, call.arguments))
                    .collect();
                if calls.is_empty() {
                    println!("    assistant: {}", message.text());
                } else {
                    println!("    assistant: calls {}", calls.join(", "));
                }
            }
            Message::Tool(result) => {
                println!("    tool:      {} -> {}", result.tool_name, result.content);
            }
            Message::System { content } => println!("    system:    {content}"),
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let search_web = || {
        tool_fn(
            "search_web",
            "Searches the web and returns the top result.",
            |args: SearchArgs| async move {
                println!("[tool] search_web({:?})", args.query);
                Ok::<_, std::convert::Infallible>(format!(
                    "Top result for {:?}: the Rust 2024 edition shipped with Rust 1.85.",
                    args.query
                ))
            },
        )
    };

    println!("== Run 1: one repair, one retry ==");
    let model = ScriptedModel::new([
        // Turn 1: a hallucinated namespace instead of the tool's name -> repaired.
        Turn::tool_call("default_api", json!({"query": "rust 2024 edition release"})),
        // Turn 2: a tool that doesn't exist -> dropped, the model is told what exists.
        Turn::tool_call("browse", json!({"url": "https://blog.rust-lang.org"})),
        // Turn 3: the model corrects itself.
        Turn::tool_call("search_web", json!({"query": "rust 1.85 release date"})),
        Turn::text("The Rust 2024 edition shipped with Rust 1.85."),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(search_web())
        .add_hook(RepairToolNames)
        .build();
    let response = agent
        .prompt("Which Rust release shipped the 2024 edition?")
        .max_invalid_tool_call_retries(1)
        .extended_details()
        .await?;
    println!(
        "  answer after {} model calls: {}",
        response.turns(),
        response.output
    );
    println!("  history (the dropped `browse` turn is not in it):");
    print_history(response.history());

    println!("\n== Run 2: a second unknown tool, but only one retry is allowed ==");
    let model = ScriptedModel::new([
        Turn::tool_call("browse", json!({"url": "https://blog.rust-lang.org"})),
        Turn::tool_call("fetch_url", json!({"url": "https://blog.rust-lang.org"})),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(search_web())
        .add_hook(RepairToolNames)
        .build();
    match agent
        .prompt("Which Rust release shipped the 2024 edition?")
        .max_invalid_tool_call_retries(1)
        .await
    {
        Ok(answer) => println!("  unexpected answer: {answer}"),
        Err(PromptError::UnknownToolCall {
            tool_name,
            reason,
            history,
            ..
        }) => {
            println!("  run failed: unknown tool `{tool_name}` ({reason:?}), retry budget spent");
            println!("  history when it failed:");
            print_history(&history);
        }
        Err(other) => return Err(other.into()),
    }
    Ok(())
}
