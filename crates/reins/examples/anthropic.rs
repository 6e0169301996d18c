//! An agent with a tool on Anthropic's Messages API, awaited and then streamed.
//!
//! Needs `ANTHROPIC_API_KEY` (and reads `ANTHROPIC_BASE_URL` when set); without a key it says
//! so and exits successfully, so it can run in CI:
//!
//! ```text
//! ANTHROPIC_API_KEY=sk-ant-... cargo run -p reins --example anthropic
//! ```

use futures::StreamExt;
use reins::agent::{AgentBuilder, StreamItem};
use reins::providers::ProviderError;
use reins::providers::anthropic::{self, Anthropic};
use reins::tool::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct MultiplyArgs {
    /// The first factor.
    a: f64,
    /// The second factor.
    b: f64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = match Anthropic::from_env() {
        Ok(client) => client,
        Err(ProviderError::MissingEnv(_) | ProviderError::InvalidEnv("ANTHROPIC_API_KEY")) => {
            println!("ANTHROPIC_API_KEY is not set; set it to run this example against the API.");
            return Ok(());
        }
        Err(error) => return Err(error.into()),
    };
    let multiply = tool_fn(
        "multiply",
        "Multiplies two numbers exactly.",
        |args: MultiplyArgs| async move { Ok::<_, std::convert::Infallible>(args.a * args.b) },
    );
    let agent = AgentBuilder::new(client.completion(anthropic::CLAUDE_HAIKU_4_5))
        .preamble("Use the multiply tool for arithmetic. Answer in one sentence.")
        .max_tokens(1024)
        .tool(multiply)
        .build();

    let response = agent
        .prompt("What is 12.5 times 7.25?")
        .extended_details()
        .await?;
    println!("awaited: {}", response.output);
    println!(
        "  {} model call(s), {} input and {} output tokens",
        response.turns(),
        response.usage().input_tokens,
        response.usage().output_tokens
    );

    println!("streamed:");
    let mut stream = agent.prompt("And 3.5 times 4?").stream();
    while let Some(item) = stream.next().await {
        match item? {
            StreamItem::Text(delta) => print!("{delta}"),
            StreamItem::ToolResult {
                tool_name, result, ..
            } => println!("  [{tool_name} -> {result}]"),
            StreamItem::Final(response) => {
                println!("\n  ({} model call(s))", response.turns());
            }
            _ => {}
        }
    }
    Ok(())
}
