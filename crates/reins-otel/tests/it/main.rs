//! reins-otel's integration tests: one binary, modules by subject.

mod attributes;
mod cancel;
mod content;
mod docs;
mod early_stop;
mod errors;
mod harness;
mod metrics;
mod phoenix;
mod resume;
mod spans;
mod usage;
