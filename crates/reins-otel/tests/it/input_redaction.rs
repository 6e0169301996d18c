//! A `chat` span's input holds the history again, within a budget: only the messages kept
//! on it are given to the redactor, so a long part left out costs no redaction on every
//! later span.

use crate::harness::{NamedModel, Recorded, attr_str, span};
use reins::agent::AgentBuilder;
use reins::message::Message;
use reins::testing::Turn;
use reins_otel::{ContentKind, DEFAULT_CONTENT_PART_LIMIT, Telemetry};
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// How each earlier message starts: `message 07: xxx…`.
const LABEL_BYTES: usize = "message 07".len();

#[tokio::test]
async fn only_the_input_messages_kept_on_a_span_are_redacted() {
    let redacted = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&redacted);
    // A part too long is given to the redactor on its own (a message's text), the whole
    // input after (a JSON array).
    let telemetry = Telemetry::new().capture_content(move |kind, text| {
        if kind == ContentKind::InputMessages && text.starts_with("message ") {
            seen.lock().unwrap().push(text[..LABEL_BYTES].to_owned());
        }
        Some(text)
    });
    let recorded = Recorded::start(telemetry);
    // 30 messages of 100 KB, each cut to 64 KiB: the 1 MiB budget holds 15 of them.
    let earlier: Vec<Message> = (0..30)
        .map(|n| Message::user(format!("message {n:02}: {}", "x".repeat(100_000))))
        .collect();
    let agent = AgentBuilder::new(NamedModel::new([Turn::text("Done.")])).build();
    agent.prompt("go").with_history(earlier).await.unwrap();
    let spans = recorded.spans();

    let input: Vec<Value> = serde_json::from_str(&attr_str(
        span(&spans, "chat gpt-test"),
        "gen_ai.input.messages",
    ))
    .unwrap();
    let mut kept: Vec<String> = input
        .iter()
        .filter_map(|message| message["parts"][0]["content"].as_str())
        .filter(|text| text.starts_with("message "))
        .map(|text| {
            assert!(
                text.len() < DEFAULT_CONTENT_PART_LIMIT + 64,
                "a kept part is cut"
            );
            text[..LABEL_BYTES].to_owned()
        })
        .collect();
    assert!(
        !kept.is_empty() && kept.len() < 30,
        "some earlier messages are left out: {kept:?}"
    );
    kept.sort();
    let mut redacted = redacted.lock().unwrap().clone();
    redacted.sort();
    assert_eq!(redacted, kept, "the parts redacted are those kept");
}
