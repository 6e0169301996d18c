//! reins-otel's integration tests: one binary, modules by subject.

mod harness;
mod metrics;
mod resume;
mod spans;
