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
//! - [`hooks`]: ready-made hooks (approval policy, audit log, budget, loop breaker,
//!   guardrails, redaction).
//! - [`providers`]: OpenAI, Anthropic, Gemini, OpenAI-compatible services, and (feature
//!   `local`) an in-process GGUF model.
//! - [`store`]: run stores for durable runs (memory, SQLite, PostgreSQL).
//! - [`prelude`]: the names most programs need, in one import.
//! - [`testing`]: [`ScriptedModel`](testing::ScriptedModel) for offline tests and examples.
//! - [`text`]: a model's or a server's text made safe to show on a terminal.
#![deny(missing_docs)]

pub mod agent;
pub mod completion;
mod hex;
pub mod hooks;
mod json_depth;
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
