//! Typed answers with `agent.prompt(..).output::<T>()`, in both output modes.
//!
//! The answer type derives `Deserialize` and `JsonSchema`; its schema is sent to the model and
//! the answer is parsed into it.
//!
//! - `OutputMode::Tool`: the schema becomes the parameters of an extra tool named
//!   `reins::agent::OUTPUT_TOOL_NAME` (`final_output`), and the model answers by calling it.
//!   Here the model's first attempt leaves out a required field: the run answers the call with
//!   the schema error and the model tries again.
//! - `OutputMode::Native`: for models that support it (`ScriptedModel::with_native_output()`),
//!   the schema travels in `CompletionRequest::output_schema` and the model answers with JSON
//!   text.
//!
//! A small `ShowTurns` hook prints each model turn as the run receives it, so the
//! `final_output` tool call and the native JSON text are visible. Runs offline:
//!
//! ```text
//! cargo run -p reins --example structured_output
//! ```

use reins::agent::{
    AgentBuilder, AgentHook, HookContext, ModelTurnAction, ModelTurnFinished, OUTPUT_TOOL_NAME,
    OutputMode,
};
use reins::message::{AssistantContent, Message};
use reins::testing::{ScriptedModel, Turn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// A short trip plan: the typed answer.
#[derive(Debug, Deserialize, JsonSchema)]
struct TripPlan {
    /// Destination city.
    city: String,
    /// How many days to stay.
    days: u32,
    /// Things to see, in order.
    highlights: Vec<String>,
}

/// Prints what the model produced on each turn.
struct ShowTurns;

impl AgentHook for ShowTurns {
    async fn on_model_turn_finished(
        &self,
        _ctx: &HookContext,
        event: ModelTurnFinished<'_>,
    ) -> ModelTurnAction {
        for part in event.content.iter() {
            match part {
                AssistantContent::ToolCall(call) => {
                    println!(
                        "[turn {}] tool call {}({})",
                        event.turn, call.name, call.arguments
                    );
                }
                AssistantContent::Text(text) => {
                    println!("[turn {}] text {}", event.turn, text.text)
                }
                AssistantContent::Reasoning(_) => {}
            }
        }
        ModelTurnAction::continue_run()
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let prompt = "Plan a short trip to Porto.";

    println!("== OutputMode::Tool: the model calls `{OUTPUT_TOOL_NAME}` ==");
    let model = ScriptedModel::new([
        // First attempt: `days` is missing, so the answer doesn't fit the schema.
        Turn::tool_call(
            OUTPUT_TOOL_NAME,
            json!({"city": "Porto", "highlights": ["Ribeira"]}),
        ),
        Turn::tool_call(
            OUTPUT_TOOL_NAME,
            json!({
                "city": "Porto",
                "days": 3,
                "highlights": ["Ribeira", "Livraria Lello", "a port cellar in Gaia"],
            }),
        ),
    ]);
    let agent = AgentBuilder::new(model.clone()).add_hook(ShowTurns).build();
    let typed = agent
        .prompt(prompt)
        .output::<TripPlan>()
        .mode(OutputMode::Tool)
        .extended_details()
        .await?;
    let requests = model.requests();
    if let Some(first) = requests.first() {
        let tools: Vec<&str> = first.tool_names().collect();
        println!(
            "request: tools {tools:?}, tool_choice {:?}, output_schema set: {}",
            first.tool_choice,
            first.output_schema.is_some()
        );
    }
    if let Some(Message::Tool(result)) = requests.last().and_then(|r| r.history.last()) {
        println!(
            "the model was told after its first attempt: {}",
            result.content
        );
    }
    println!("typed answer: {:?}", typed.value);
    println!("JSON text of the run's output: {}", typed.response.output);

    println!("\n== OutputMode::Native: the model answers JSON text ==");
    let model = ScriptedModel::new([Turn::text(
        r#"{"city": "Porto", "days": 2, "highlights": ["Ribeira", "Serralves"]}"#,
    )])
    .with_native_output();
    let agent = AgentBuilder::new(model.clone()).add_hook(ShowTurns).build();
    let plan: TripPlan = agent
        .prompt(prompt)
        .output::<TripPlan>()
        .mode(OutputMode::Native)
        .await?;
    if let Some(request) = model.requests().first() {
        let tools: Vec<&str> = request.tool_names().collect();
        let schema = request
            .output_schema
            .as_ref()
            .map(|schema| schema.to_string())
            .unwrap_or_default();
        println!("request: tools {tools:?}, output_schema: {schema}");
    }
    println!("typed answer: {plan:?}");
    println!(
        "-> {} days in {}, starting with {}",
        plan.days,
        plan.city,
        plan.highlights.first().map_or("nothing", String::as_str)
    );
    Ok(())
}
