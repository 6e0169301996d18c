//! Every model provider against local servers: one contract all protocols keep (`contract`),
//! each protocol's own wire format (`chat`, `responses`, `anthropic`, `gemini`), and what a
//! hostile server can do to a client (`hostile`, `hardening`).

#[path = "../common/mod.rs"]
mod common;

mod contract;
mod fixtures;
// Some of its scripts serve only the hardening tests, which are compiled in once the API
// they test exists.
#[allow(dead_code)]
mod hostile;
mod support;

mod anthropic;
mod chat;
mod gemini;
// The hardening tests use API that is not in `src/` yet; enable once it is.
// mod hardening;
mod responses;
