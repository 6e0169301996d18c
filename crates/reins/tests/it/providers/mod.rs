//! Every model provider against local servers: one contract all protocols keep (`contract`),
//! each protocol's own wire format (`chat`, `responses`, `anthropic`, `gemini`), and what a
//! hostile server can do to a client (`hostile`, `hardening`, `answer_metadata`), and what a
//! broken one sends that must still mean the same (`object_arguments`), and what a stream shows
//! that the run must then act on (`streamed_final`).

mod contract;
mod fixtures;
mod hostile;
mod support;

mod answer_metadata;
mod anthropic;
mod cache_endpoints;
mod chat;
mod gemini;
mod hardening;
mod not_found;
mod object_arguments;
mod presets;
mod responses;
mod retry_logs;
mod streamed_final;
