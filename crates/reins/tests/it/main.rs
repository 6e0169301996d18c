//! reins's integration tests, in one binary so the crate is linked once: a module per area.
//! `cargo test -p reins --test it durable::` runs one area's tests,
//! `cargo test -p reins --test it providers::contract::anthropic::` one protocol's contract.
//!
//! Every test shares this process: a test never changes the environment or installs
//! process-wide state (see [`common::without_env_var`]).

mod common;

mod approval_denials;
mod approval_escapes;
mod awaited_runs;
mod call_history;
mod cancelled_runs;
mod composition;
mod default_answers;
mod fallback_limit;
mod hooks_evasions;
// The stores' tests run each case on SQLite (and PostgreSQL when enabled).
#[cfg(feature = "sqlite")]
mod durable;
mod fakellm_anthropic;
mod fakellm_openai;
mod hook_actions;
mod invalid_tool_calls;
// Its durable case runs on SQLite.
#[cfg(feature = "sqlite")]
mod masked_failures;
mod model_panics;
mod providers;
mod ready_hooks;
mod redaction;
mod replaced_tools;
mod routing;
mod run_loop;
mod run_state;
mod stream_finish;
mod streaming;
mod structured_output;
mod suspend_resume;
mod terminal_input;
mod tool_result_text;
mod tool_sources;
mod tool_traits;
mod tool_usage;
mod tools;
mod typed_args;
mod typed_stops;
