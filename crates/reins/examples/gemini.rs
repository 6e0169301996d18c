//! An agent with a tool on Google's Gemini API: one awaited run, then one streamed run.
//!
//! Needs a key from Google AI Studio in `GEMINI_API_KEY` (and optionally `GEMINI_BASE_URL`,
//! e.g. for a proxy); without it the example says so and exits. `GEMINI_MODEL` picks another
//! model than `gemini-2.5-flash`.
//!
//! ```text
//! GEMINI_API_KEY=... cargo run -p reins --example gemini
//! ```

use futures::StreamExt;
use reins::agent::{AgentBuilder, StreamItem};
use reins::providers::gemini::{GEMINI_2_5_FLASH, Gemini};
use reins::tool::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;
use std::io::Write;

#[derive(Deserialize, JsonSchema)]
struct ConvertArgs {
    /// The temperature in degrees Celsius.
    celsius: f64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::var_os("GEMINI_API_KEY").is_none() {
        println!(
            "GEMINI_API_KEY is not set; set it to a Gemini API key (from Google AI Studio) to \
             run this example against the real API."
        );
        return Ok(());
    }
    let model_name = std::env::var("GEMINI_MODEL").unwrap_or_else(|_| GEMINI_2_5_FLASH.into());
    let model = Gemini::from_env()?.completion(model_name.as_str());

    let to_fahrenheit = tool_fn(
        "celsius_to_fahrenheit",
        "Converts a temperature from degrees Celsius to degrees Fahrenheit.",
        |args: ConvertArgs| async move {
            Ok::<_, std::convert::Infallible>(args.celsius * 9.0 / 5.0 + 32.0)
        },
    );
    let agent = AgentBuilder::new(model)
        .preamble("You are concise. Use the tool for every conversion; never convert yourself.")
        .tool(to_fahrenheit)
        .max_tokens(1_024)
        .build();

    println!("== awaited run on {model_name} ==");
    let response = agent
        .prompt("What are 21.5 °C and -40 °C in Fahrenheit?")
        .extended_details()
        .await?;
    println!("{}", response.output);
    println!(
        "({} model calls, {} input and {} output tokens)",
        response.turns(),
        response.usage().input_tokens,
        response.usage().output_tokens
    );

    println!("\n== streamed run ==");
    let mut stream = agent.prompt("What is 100 °C in Fahrenheit?").stream();
    while let Some(item) = stream.next().await {
        match item? {
            StreamItem::Text(delta) => {
                print!("{delta}");
                std::io::stdout().flush()?;
            }
            StreamItem::ToolResult {
                tool_name, result, ..
            } => println!("[{tool_name} -> {result}]"),
            StreamItem::Final(response) => {
                println!("\n({} model calls)", response.turns());
            }
            _ => {}
        }
    }
    Ok(())
}
