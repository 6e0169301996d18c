//! reins runs LLM agents — model call, tool calls, model call again — and lets your code
//! observe and steer every step through hooks.
//!
//! - [`agent`]: [`Agent`](agent::Agent), [`AgentBuilder`](agent::AgentBuilder), the run loop
//!   and the hook API ([`AgentHook`](agent::AgentHook), [`HookStack`](agent::HookStack),
//!   [`StepEvent`](agent::StepEvent)).
//! - [`completion`]: the [`CompletionModel`](completion::CompletionModel) trait and its
//!   request and response.
//! - [`message`]: chat messages and [`ToolChoice`](message::ToolChoice).
//! - [`tool`]: the [`Tool`](tool::Tool) trait, [`tool_fn`](tool::tool_fn), tool outcomes,
//!   and (feature `schema-check`) arguments checked against a JSON schema.
//! - [`hooks`]: ready-made hooks (approval policy, audit log, budget, model fallback,
//!   response cache, invalid tool calls repaired or answered, loop breaker, guardrails,
//!   redaction, tool choice per turn).
//! - [`providers`]: OpenAI, Anthropic, Gemini, OpenAI-compatible services, and (feature
//!   `local`) an in-process GGUF model.
//! - [`store`]: run stores for durable runs (memory, SQLite, PostgreSQL).
//! - [`prelude`]: the names most programs need, in one import.
//! - [`testing`]: [`ScriptedModel`](testing::ScriptedModel) for offline tests and examples.
//! - [`text`]: a model's or a server's text made safe to show on a terminal.
//!
//! # A first run
//!
//! A tool is a type: its arguments are a struct the model's JSON is read into, their schema
//! derived by `schemars` ([`tool::Tool`], or [`tool::tool_fn`] for a closure). Awaiting
//! [`Agent::prompt`](agent::Agent::prompt) runs the loop and gives the answer;
//! [`extended_details`](agent::PromptRequest::extended_details) gives the whole
//! [`PromptResponse`](agent::PromptResponse), with usage, turns and the run's id:
//!
//! ```
//! use reins::agent::AgentBuilder;
//! use reins::completion::Usage;
//! use reins::testing::{ScriptedModel, Turn};
//! use reins::tool::Tool;
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct AddArgs {
//!     /// The first number.
//!     a: i64,
//!     /// The second number.
//!     b: i64,
//! }
//!
//! /// Adds two integers.
//! struct Add;
//!
//! impl Tool for Add {
//!     type Args = AddArgs;
//!     type Output = i64;
//!     type Error = std::convert::Infallible;
//!
//!     fn name(&self) -> &str {
//!         "add"
//!     }
//!     fn description(&self) -> &str {
//!         "Adds two integers."
//!     }
//!     async fn call(&self, args: AddArgs) -> Result<i64, Self::Error> {
//!         Ok(args.a + args.b)
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), reins::agent::PromptError> {
//! // Offline, scripted; a provider's model (`reins::providers`) takes its place in one line.
//! let model = ScriptedModel::new([
//!     Turn::tool_call("add", json!({"a": 2, "b": 40})).usage(Usage::new(20, 5)),
//!     Turn::text("2 + 40 = 42").usage(Usage::new(30, 4)),
//! ]);
//! let agent = AgentBuilder::new(model).preamble("You do sums.").tool(Add).build();
//! let run = agent.prompt("What is 2 + 40?").extended_details().await?;
//! assert_eq!(run.output, "2 + 40 = 42");
//! assert_eq!(run.turns(), 2);
//! let usage = run.usage(); // summed over the run's model calls
//! assert_eq!((usage.input_tokens, usage.output_tokens), (50, 9));
//! # Ok(())
//! # }
//! ```
//!
//! Then: hooks to steer each step ([`agent::AgentHook`]); the answer as it is written
//! ([`PromptRequest::stream`](agent::PromptRequest::stream),
//! [`AgentHook::on_text_delta`](agent::AgentHook::on_text_delta)); a run that waits for a
//! person in a store and is resumed by another process ([`store`], and
//! `examples/durable_approval.rs`); limits on what a run spends ([`hooks::budget`]).
#![deny(missing_docs)]

pub mod agent;
pub mod completion;
mod hex;
pub mod hooks;
mod json_depth;
mod json_error_path;
mod json_integers;
mod json_text;
pub mod json_weight;
pub mod message;
pub mod observe;
mod panics;
pub mod prelude;
pub mod providers;
/// Run state, beneath the agent (which runs it) and the stores (which keep it); its types are
/// public at `reins::agent`.
mod run;
pub mod store;
pub mod testing;
pub mod text;
pub mod tool;

// The README's Rust examples, compiled and run by `cargo test --doc` like any doc example.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
