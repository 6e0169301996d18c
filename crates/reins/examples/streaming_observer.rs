//! Watching a streamed run with `on_text_delta` and `on_event`.
//!
//! `agent.prompt(..).stream()` returns a `PromptStream` of `StreamItem`s: text fragments,
//! tool-call fragments, tool results, and finally `StreamItem::Final` with the whole response.
//! Hooks fire on a streamed run just as on an awaited one, plus the delta events.
//!
//! The `LiveObserver` hook implements two methods:
//!
//! - `on_text_delta`, for each fragment of answer text (with the text aggregated so far) —
//!   the place for live UI updates or a content-policy stop;
//! - `on_event`, the uniform telemetry view, which receives every event the hook doesn't
//!   handle with a typed method (run start, model calls, tool calls and results, the end of
//!   each streamed response, the run's end). Since `on_text_delta` is overridden, text deltas
//!   don't reach `on_event`.
//!
//! Meanwhile `main` consumes the stream with `futures::StreamExt` and prints every item.
//! Hooks run inside the run, before the item they observe is handed to the stream. Items
//! reach the consumer whenever the run waits for the model, and at the latest before tools run
//! or the next model call starts; dropping the stream stops the run there. (`ScriptedModel`
//! never makes the run wait, so here a turn's deltas arrive together after its hook lines.)
//!
//! Runs offline on `ScriptedModel`:
//!
//! ```text
//! cargo run -p reins --example streaming_observer
//! ```

use futures::StreamExt;
use reins::agent::{
    AgentBuilder, AgentHook, Flow, HookContext, ObservationAction, StepEvent, StreamItem,
    TextDeltaEvent,
};
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct WeatherArgs {
    /// The city.
    city: String,
}

/// Prints text deltas as they arrive and one telemetry line per other event.
struct LiveObserver;

impl AgentHook for LiveObserver {
    async fn on_text_delta(
        &self,
        ctx: &HookContext,
        event: TextDeltaEvent<'_>,
    ) -> ObservationAction {
        println!(
            "    [on_text_delta] turn {} delta {:?} (aggregated: {} chars)",
            ctx.turn(),
            event.delta,
            event.aggregated.chars().count()
        );
        ObservationAction::continue_run()
    }

    async fn on_event(&self, ctx: &HookContext, event: StepEvent<'_>) -> Flow {
        let detail = match event {
            StepEvent::CompletionCall { turn, history, .. } => {
                format!("turn {turn}, {} earlier messages", history.len())
            }
            StepEvent::ToolCall {
                tool_name, args, ..
            } => format!("{tool_name}({args})"),
            StepEvent::ToolResult {
                tool_name,
                result,
                outcome,
                ..
            } => format!("{tool_name} -> {result} [{outcome:?}]"),
            StepEvent::StreamResponseFinish { response, .. } => {
                let chars = response.text().chars().count();
                format!("{:?}, {chars} chars", response.finish_reason)
            }
            StepEvent::ToolCallDelta {
                tool_name, delta, ..
            } => format!("{tool_name:?} {delta:?}"),
            StepEvent::CompletionDispatch { model, .. } => format!("model {model:?}"),
            StepEvent::ModelTurnFinished { turn, content, .. } => {
                format!("turn {turn}, {} content part(s)", content.len())
            }
            StepEvent::RunSettled(settled) => format!(
                "{} model call(s), ok: {}",
                settled.turns,
                settled.result.is_ok()
            ),
            _ => String::new(),
        };
        println!(
            "[telemetry] {:?} (streaming: {}) {detail}",
            event.kind(),
            ctx.is_streaming()
        );
        Flow::Continue
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let get_weather = tool_fn(
        "get_weather",
        "Current weather for a city.",
        |args: WeatherArgs| async move {
            Ok::<_, std::convert::Infallible>(
                json!({"city": args.city, "sky": "sunny", "celsius": 21}),
            )
        },
    );
    let model = ScriptedModel::new([
        Turn::tool_call("get_weather", json!({"city": "Lisbon"})),
        Turn::text("It is sunny and 21 °C in Lisbon right now."),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(get_weather)
        .add_hook(LiveObserver)
        .build();

    let mut stream = agent.prompt("What's the weather in Lisbon?").stream();
    let mut streamed_text = String::new();
    while let Some(item) = stream.next().await {
        match item? {
            StreamItem::Text(delta) => {
                println!("  [stream] Text({delta:?})");
                streamed_text.push_str(&delta);
            }
            StreamItem::ToolCallDelta {
                tool_name, delta, ..
            } => println!("  [stream] ToolCallDelta {tool_name:?} {delta:?}"),
            StreamItem::ToolResult {
                tool_name, result, ..
            } => println!("  [stream] ToolResult {tool_name} -> {result}"),
            StreamItem::TurnDiscarded { turn } => {
                println!("  [stream] TurnDiscarded (turn {turn}): withdrawing streamed text");
                streamed_text.clear();
            }
            StreamItem::Final(response) => {
                println!("  [stream] Final:");
                println!("    output:     {}", response.output);
                println!("    model calls: {}", response.turns());
                println!("    messages:   {}", response.history().len());
                println!("    run id:     {}", response.run_id());
            }
            other => println!("  [stream] {other:?}"),
        }
    }
    println!("\ntext assembled from the stream: {streamed_text}");
    Ok(())
}
