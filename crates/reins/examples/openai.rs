//! An agent with a tool and an approval hook on OpenAI: once through the Chat Completions API,
//! once streamed through the Responses API.
//!
//! Needs `OPENAI_API_KEY` (and reads `OPENAI_BASE_URL` when set, e.g. for a compatible
//! server); without a key it says so and exits successfully:
//!
//! ```text
//! OPENAI_API_KEY=sk-... cargo run -p reins --example openai
//! ```

use futures::StreamExt;
use reins::agent::{
    AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext, StreamItem,
};
use reins::providers::ProviderError;
use reins::providers::openai::{self, OpenAI};
use reins::tool::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct ConvertArgs {
    /// Degrees Celsius.
    celsius: f64,
}

/// Prints every tool call before it runs.
struct Audit;

impl AgentHook for Audit {
    async fn on_dispatch(&self, ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if let (Some(name), Some(args)) = (event.tool_name(), event.tool_args()) {
            eprintln!("[audit] turn {}: {name}({args})", ctx.turn());
        }
        DispatchAction::proceed()
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = match OpenAI::from_env() {
        Ok(client) => client,
        Err(ProviderError::MissingEnv(_) | ProviderError::InvalidEnv("OPENAI_API_KEY")) => {
            println!("OPENAI_API_KEY is not set; set it to run this example against the API.");
            return Ok(());
        }
        Err(error) => return Err(error.into()),
    };
    let model = std::env::var("OPENAI_MODEL").unwrap_or_else(|_| openai::GPT_5_MINI.to_owned());
    let convert = || {
        tool_fn(
            "celsius_to_fahrenheit",
            "Converts a temperature exactly.",
            |args: ConvertArgs| async move {
                Ok::<_, std::convert::Infallible>(args.celsius * 9.0 / 5.0 + 32.0)
            },
        )
    };

    let chat = AgentBuilder::new(client.completion(&model))
        .preamble("Use the tool for conversions. Answer in one sentence.")
        .tool(convert())
        .add_hook(Audit)
        .build();
    let answer = chat
        .prompt("What is 21.5 °C in Fahrenheit?")
        .max_turns(4)
        .await?;
    println!("Chat Completions: {answer}");

    let responses = AgentBuilder::new(client.responses(&model))
        .preamble("Use the tool for conversions. Answer in one sentence.")
        .tool(convert())
        .add_hook(Audit)
        .build();
    print!("Responses (streamed): ");
    let mut stream = responses.prompt("And -40 °C?").max_turns(4).stream();
    while let Some(item) = stream.next().await {
        match item? {
            StreamItem::Text(delta) => print!("{delta}"),
            StreamItem::Final(response) => println!("\n({} tokens)", response.usage().total_tokens),
            _ => {}
        }
    }
    Ok(())
}
