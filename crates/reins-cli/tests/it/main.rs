mod approval_mcp;
mod cache;
mod check;
mod check_input;
mod common;
#[cfg(feature = "local")]
mod demo;
mod failed_run;
mod interrupt;
mod limits;
mod mcp_http;
mod mcp_names;
mod mcp_resume;
#[cfg(feature = "local")]
mod offline;
mod otlp;
mod programs;
mod restate;
mod run;
mod runs_input;
mod terminal;
mod tool_choice;
mod ui;
mod ui_pages;
mod ui_stop;
mod ui_words;
mod usage;
mod webhook;
