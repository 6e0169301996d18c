//! The ready-made hooks against a model (or a tool's content) trying to slip something past
//! them: a secret in another spelling past the redaction, a denied phrase past a
//! tool-argument guardrail, a line break that a log reader honours into the audit log.

use reins::agent::AgentBuilder;
use reins::hooks::audit::AuditLog;
use reins::hooks::guardrail::{DenyList, Guardrails};
use reins::hooks::redaction::Redaction;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[test]
fn a_percent_encoded_address_or_secret_is_masked() {
    // A URL's query string spells `@` as `%40` (and `/`, `+` and `!` alike): an HTTP tool's
    // answer or error quoting the URL would otherwise carry them to the model.
    let redaction = Redaction::new().secret("p@ss/w+rd!");
    assert_eq!(
        redaction.redact("GET https://x.test/u?email=ada%40example.com&pw=p%40ss%2Fw%2Brd%21 404"),
        "GET https://x.test/u?email=[REDACTED:email]&pw=[REDACTED:secret] 404"
    );
    // Lower-case hex, and encoded twice (`%25` is `%`).
    assert_eq!(
        redaction.redact("next=%2Fu%3Femail%3Dbob%2540example.com"),
        "next=%2Fu%3Femail%3D[REDACTED:email]"
    );
    // A percent sign that encodes nothing is text as it is.
    assert_eq!(redaction.redact("up 5%40 today"), "up 5%40 today");
}
