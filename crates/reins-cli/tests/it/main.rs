mod agent_file_once;
mod approval_mcp;
mod cache;
mod chat;
mod check;
mod check_input;
mod check_local;
mod check_mcp;
mod cli_reference;
mod common;
mod decide_commands;
// A dead holder's run is taken over at once only where Linux says which pid namespace and
// boot its pid belongs to; elsewhere its lease is waited out.
#[cfg(target_os = "linux")]
mod crash_kill;
// Processes that left the program's group are ended only where Linux hands them to the
// supervisor.
#[cfg(feature = "local")]
mod demo;
mod demo_ctrl_c;
mod editor_ctrl_c;
mod editor_lines;
#[cfg(target_os = "linux")]
mod escaped_processes;
mod failed_run;
mod hosted;
mod interrupt;
mod interrupt_store_silent;
mod invalid_calls;
mod limits;
mod mcp_http;
mod mcp_names;
mod mcp_resume;
mod missing_programs;
mod model_timeouts;
#[cfg(feature = "local")]
mod offline;
mod otlp;
mod otlp_unreachable;
mod passthrough;
mod pipes;
mod programs;
mod restate;
mod restate_ending;
mod restate_follow;
mod restate_identity;
mod restate_stop;
mod restate_token;
mod run;
mod run_prefix;
mod runs_in_doubt;
mod runs_input;
mod runs_lease;
mod runs_order;
mod runs_unreadable;
mod schema_first;
mod shell_args_output;
mod shell_option_values;
mod store_access;
mod store_path;
mod terminal;
mod terminal_text;
mod tool_choice;
mod tool_env;
mod ui;
mod ui_connections;
mod ui_left_runs;
mod ui_pages;
mod ui_stop;
mod ui_words;
mod uncompilable_schema;
mod usage;
mod warnings;
mod webhook;
