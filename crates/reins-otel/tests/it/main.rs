//! reins-otel's integration tests: one binary, modules by subject.

mod arguments;
mod attributes;
mod cancel;
mod collector_answers;
mod compression;
mod console;
mod content;
mod credentials;
mod cut_off;
mod docs;
mod early_stop;
mod endpoint_logs;
mod errors;
mod harness;
mod input_redaction;
mod metrics;
mod phoenix;
mod recovered;
mod requests;
mod resume;
mod setup;
mod spans;
mod unreachable;
mod usage;
