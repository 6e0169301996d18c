//! Changing one turn's request with `on_completion_call` and `RequestPatch`.
//!
//! The agent has three tools and a temperature of 0.7. The `SearchFirst` hook patches the
//! first turn only: it advertises just `search_web`, requires a tool call
//! (`ToolChoice::Required`) and sets the temperature to 0.0. Patches are not sticky — the
//! event fires again on every turn — so the second turn goes out with the agent's own
//! settings and the model is free to answer.
//!
//! After the run, the example prints what the model received on each turn, from
//! `ScriptedModel::requests()`: the advertised tools, the tool choice and the temperature.
//! Runs offline on `ScriptedModel`:
//!
//! ```text
//! cargo run -p reins --example per_turn_patch
//! ```

use reins::agent::{
    AgentBuilder, AgentHook, CompletionCallAction, CompletionCallEvent, HookContext, RequestPatch,
};
use reins::message::ToolChoice;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::convert::Infallible;

#[derive(Deserialize, JsonSchema)]
struct SearchArgs {
    /// What to search for.
    query: String,
}

#[derive(Deserialize, JsonSchema)]
struct CalcArgs {
    /// An arithmetic expression.
    expression: String,
}

#[derive(Deserialize, JsonSchema)]
struct EmailArgs {
    /// The recipient.
    to: String,
    /// The message body.
    body: String,
}

/// Forces a web search, deterministically, on the first turn.
struct SearchFirst;

impl AgentHook for SearchFirst {
    async fn on_completion_call(
        &self,
        ctx: &HookContext,
        event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        if ctx.turn() == 1 {
            println!("[hook] turn {}: patching the request", event.turn);
            CompletionCallAction::patch(
                RequestPatch::new()
                    .active_tools(["search_web"])
                    .tool_choice(ToolChoice::Required)
                    .temperature(0.0),
            )
        } else {
            println!("[hook] turn {}: no patch", event.turn);
            CompletionCallAction::continue_run()
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let search_web = tool_fn(
        "search_web",
        "Searches the web.",
        |args: SearchArgs| async move {
            Ok::<_, Infallible>(format!(
                "Top result for {:?}: Lisbon, 21 °C, sunny.",
                args.query
            ))
        },
    );
    let calculator = tool_fn(
        "calculator",
        "Evaluates arithmetic.",
        |args: CalcArgs| async move { Ok::<_, Infallible>(format!("{} = 42", args.expression)) },
    );
    let send_email = tool_fn(
        "send_email",
        "Sends an email.",
        |args: EmailArgs| async move {
            Ok::<_, Infallible>(format!("sent {} bytes to {}", args.body.len(), args.to))
        },
    );

    let model = ScriptedModel::new([
        Turn::tool_call("search_web", json!({"query": "weather in Lisbon today"})),
        Turn::text("It's sunny in Lisbon today, around 21 °C."),
    ]);
    let agent = AgentBuilder::new(model.clone())
        .tool(search_web)
        .tool(calculator)
        .tool(send_email)
        .temperature(0.7)
        .add_hook(SearchFirst)
        .build();

    let answer = agent.prompt("What's the weather in Lisbon today?").await?;

    println!("\nWhat the model received on each turn:");
    for (index, request) in model.requests().iter().enumerate() {
        let tools: Vec<&str> = request.tool_names().collect();
        println!("  turn {}:", index + 1);
        println!("    tools advertised: {tools:?}");
        println!("    tool_choice:      {:?}", request.tool_choice);
        println!("    temperature:      {:?}", request.temperature);
    }
    println!("\nassistant: {answer}");
    Ok(())
}
