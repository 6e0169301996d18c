//! Masking a request: its history, preamble and documents. A copy is made only from the
//! first message (or document) that needs masking, and every one before it is cloned, never
//! rescanned.

use super::Redaction;
use crate::agent::RequestPatch;
use crate::completion::CompletionRequest;
use crate::message::{AssistantContent, Document, Message, OneOrMany, Reasoning, Text, ToolCall};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// Numbers below this have fewer than 13 digits, so cannot be card numbers: they are not
/// formatted for scanning.
const SMALLEST_CARD_NUMBER: u64 = 1_000_000_000_000;

/// The patch that sends a masked copy of what `request` says to the model (its history,
/// preamble and documents), or `None` when nothing in it needs masking.
pub(super) fn redact_request(
    redaction: &Redaction,
    request: &CompletionRequest,
) -> Option<RequestPatch> {
    let mut patch = RequestPatch::new();
    if let Some(history) = redact_history(redaction, &request.history) {
        patch = patch.history(history);
    }
    if let Some(preamble) = request.preamble.as_deref() {
        if let Some(masked) = owned(redaction.redact(preamble)) {
            patch = patch.preamble(masked);
        }
    }
    // The documents are replaced, not added to: the list sent is the masked one.
    if let Some(documents) = redact_all(&request.documents, |d| redact_document(redaction, d)) {
        patch = patch.documents(documents);
    }
    (!patch.is_empty()).then_some(patch)
}

/// A document with its id and text masked (both are sent), or `None` when neither matches.
fn redact_document(redaction: &Redaction, document: &Document) -> Option<Document> {
    let id = owned(redaction.redact(&document.id));
    let text = owned(redaction.redact(&document.text));
    if id.is_none() && text.is_none() {
        return None;
    }
    Some(Document {
        id: id.unwrap_or_else(|| document.id.clone()),
        text: text.unwrap_or_else(|| document.text.clone()),
    })
}

/// A masked copy of `history`, or `None` when nothing in it needs masking.
fn redact_history(redaction: &Redaction, history: &[Message]) -> Option<Vec<Message>> {
    redact_all(history, |message| redact_message(redaction, message))
}

/// `items` with `redact` applied, or `None` when it changes none: the copy starts at the
/// first changed item, and the items before it are cloned, never redacted twice.
fn redact_all<T: Clone>(items: &[T], mut redact: impl FnMut(&T) -> Option<T>) -> Option<Vec<T>> {
    let mut masked: Option<Vec<T>> = None;
    for (index, item) in items.iter().enumerate() {
        match (redact(item), &mut masked) {
            (Some(changed), Some(masked)) => masked.push(changed),
            (Some(changed), None) => {
                let mut copy = Vec::with_capacity(items.len());
                copy.extend_from_slice(&items[..index]);
                copy.push(changed);
                masked = Some(copy);
            }
            (None, Some(masked)) => masked.push(item.clone()),
            (None, None) => {}
        }
    }
    masked
}

fn owned(text: Cow<'_, str>) -> Option<String> {
    match text {
        Cow::Borrowed(_) => None,
        Cow::Owned(text) => Some(text),
    }
}

fn redact_message(redaction: &Redaction, message: &Message) -> Option<Message> {
    match message {
        Message::System { content } => {
            owned(redaction.redact(content)).map(|content| Message::System { content })
        }
        Message::User { content } => {
            owned(redaction.redact(content)).map(|content| Message::User { content })
        }
        Message::Tool(result) => owned(redaction.redact(&result.content)).map(|content| {
            let mut result = result.clone();
            result.content = content;
            Message::Tool(result)
        }),
        Message::Assistant { content } => {
            let masked = redact_all(content.as_slice(), |part| redact_part(redaction, part))?;
            // `masked` has as many parts as `content`, which is never empty.
            OneOrMany::many(masked).map(|content| Message::Assistant { content })
        }
    }
}

fn redact_part(redaction: &Redaction, part: &AssistantContent) -> Option<AssistantContent> {
    match part {
        AssistantContent::Text(text) => {
            owned(redaction.redact(&text.text)).map(|text| AssistantContent::Text(Text { text }))
        }
        AssistantContent::ToolCall(call) => {
            redact_json(redaction, &call.arguments).map(|arguments| {
                AssistantContent::ToolCall(ToolCall {
                    arguments,
                    ..call.clone()
                })
            })
        }
        // A provider verifies signed reasoning when it is sent back: leave it as it was.
        AssistantContent::Reasoning(reasoning) if reasoning.signature.is_some() => None,
        AssistantContent::Reasoning(reasoning) => {
            owned(redaction.redact(&reasoning.text)).map(|text| {
                AssistantContent::Reasoning(Reasoning {
                    text,
                    signature: None,
                })
            })
        }
    }
}

/// `value` with its strings, object keys included, (and numbers long enough to be card
/// numbers, floats included) masked, or `None` when nothing matches.
pub(super) fn redact_json(redaction: &Redaction, value: &Value) -> Option<Value> {
    match value {
        Value::String(text) => owned(redaction.redact(text)).map(Value::String),
        Value::Number(number) => {
            let text = card_sized_number(number)?;
            // A masked number can only be written back as a string.
            owned(redaction.redact(&text)).map(Value::String)
        }
        Value::Array(items) => {
            redact_all(items, |item| redact_json(redaction, item)).map(Value::Array)
        }
        Value::Object(fields) => {
            let mut masked: Option<Map<String, Value>> = None;
            for (index, (key, field)) in fields.iter().enumerate() {
                // Keys are sent as text too: a map keyed by addresses would show them.
                let (new_key, new_field) =
                    (owned(redaction.redact(key)), redact_json(redaction, field));
                let masked = match (&mut masked, &new_key, &new_field) {
                    (Some(masked), _, _) => masked,
                    (None, None, None) => continue,
                    (None, _, _) => masked.insert(
                        fields
                            .iter()
                            .take(index)
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect(),
                    ),
                };
                insert_apart(
                    masked,
                    new_key.unwrap_or_else(|| key.clone()),
                    new_field.unwrap_or_else(|| field.clone()),
                );
            }
            masked.map(Value::Object)
        }
        Value::Null | Value::Bool(_) => None,
    }
}

/// `number` written out whole when it could be a card number: an integer, or a float
/// holding a whole number, of at least 13 digits (and under 20, for a float); `None` for
/// any other. A float is written in full (`4111111111111111`, not `4.111111111111111e15`
/// as JSON would), so the card scan reads its digits. Past 2^53 a float no longer holds
/// every digit of a number: one that was a card number of 17 to 19 digits comes out with
/// other digits, and is masked only if those happen to pass the card check.
fn card_sized_number(number: &serde_json::Number) -> Option<String> {
    let smallest = SMALLEST_CARD_NUMBER;
    if let Some(n) = number.as_u64() {
        return (n >= smallest).then(|| n.to_string());
    }
    if let Some(n) = number.as_i64() {
        return (n.unsigned_abs() >= smallest).then(|| n.to_string());
    }
    let float = number.as_f64()?;
    let whole = float.is_finite() && float.fract() == 0.0;
    (whole && (smallest as f64..1e19).contains(&float.abs())).then(|| format!("{float:.0}"))
}

/// Inserts `value` under `key`, or under `key#2`, `key#3`… when `key` is taken: two keys
/// masked alike (two addresses become `[REDACTED:email]`) keep both entries, where one
/// would otherwise overwrite the other in the copy the model is sent.
fn insert_apart(map: &mut Map<String, Value>, key: String, value: Value) {
    if !map.contains_key(&key) {
        map.insert(key, value);
        return;
    }
    // Ends: the map has finitely many keys.
    let mut n = 2usize;
    loop {
        let candidate = format!("{key}#{n}");
        if !map.contains_key(&candidate) {
            map.insert(candidate, value);
            return;
        }
        n += 1;
    }
}
