//! The key, echoed in an answer: a server (a hostile gateway, a proxy that quotes the request)
//! can write the client's own key into the text, reasoning or tool-call arguments it answers.
//! From there it would reach the run's history, the store a durable run is kept in, traces,
//! a hook that logs the stream, and the tools the model calls. Every answer is scrubbed before
//! anything sees it: the assembled response whole, and the streamed fragments as they pass,
//! holding back the end of a fragment that could be the start of the key until the next one
//! shows whether it is (so a key split across fragments is caught too, and no fragment shows
//! its start).
//!
//! An answer is scrubbed of the same spellings as an error is: the key as it is, with JSON
//! escapes, and with percent-escapes (a URL or query string the server quotes), read by the
//! code errors use ([`percent`](super::percent)). A fragment without a backslash, a `%` or
//! the start of a secret, as nearly every one is, passes after a few byte searches.

use crate::completion::{CompletionResponse, FinishReason, RawResponse, StreamChunk};
use crate::hooks::redaction::Redaction;
use crate::message::{AssistantContent, OneOrMany};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;

mod spelled;

use super::percent;

/// What a secret is replaced with.
const REDACTED: &str = "<redacted>";

/// Secrets shorter than this are not looked for in answers: a placeholder key (`EMPTY` for a
/// local server, `k` in a test) would mask ordinary words everywhere, and hold back every
/// fragment that ends like it begins. Real keys and tokens are far longer.
pub(crate) const MIN_ECHOED_SECRET_LEN: usize = 8;

/// The secrets an answer must not hold (the key, and query and header values that look like
/// credentials), and the redaction that replaces them (written once: the ready-made hook's).
#[derive(Clone)]
pub struct Secrets {
    texts: Vec<String>,
    redaction: Redaction,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} hidden)", self.texts.len())
    }
}

impl Secrets {
    /// `secrets`, those shorter than [`MIN_ECHOED_SECRET_LEN`] left out; `None` when none is
    /// left.
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Option<Self> {
        let texts: Vec<String> = secrets
            .into_iter()
            .filter(|secret| secret.len() >= MIN_ECHOED_SECRET_LEN)
            .collect();
        let redaction = Redaction::empty().secrets(&texts).replacement(REDACTED);
        (!texts.is_empty()).then_some(Secrets { texts, redaction })
    }

    /// Replaces the secrets in `text`, also where JSON escapes or percent-escapes spell them.
    pub(crate) fn scrub(&self, text: &mut String) {
        if let Cow::Owned(redacted) = self.redaction.redact(text) {
            *text = redacted;
        }
        self.scrub_percent_escaped(text);
    }

    /// Replaces the secrets in `text` where percent-escapes spell them: those of any byte,
    /// where the redaction's reading decodes only escapes of ASCII. Text without a `%` is not
    /// read further.
    fn scrub_percent_escaped(&self, text: &mut String) {
        if memchr::memchr(b'%', text.as_bytes()).is_none() {
            return;
        }
        for secret in &self.texts {
            if let Cow::Owned(scrubbed) = percent::replace_spelled(text, secret, REDACTED) {
                *text = scrubbed;
            }
        }
    }

    /// `value` with the secrets replaced in every string and object key (see [`scrub`]).
    fn scrub_value(&self, value: &mut Value) {
        if let Some(redacted) = self.redaction.redact_json(value) {
            *value = redacted;
        }
        self.scrub_percent_escaped_json(value);
    }

    fn scrub_percent_escaped_json(&self, value: &mut Value) {
        match value {
            Value::String(text) => self.scrub_percent_escaped(text),
            Value::Array(items) => items
                .iter_mut()
                .for_each(|item| self.scrub_percent_escaped_json(item)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (mut key, mut item) in entries {
                    self.scrub_percent_escaped(&mut key);
                    self.scrub_percent_escaped_json(&mut item);
                    // Two keys scrubbed alike: the later is kept apart, as the redaction does.
                    let mut unique = key.clone();
                    for count in 2.. {
                        if !map.contains_key(&unique) {
                            break;
                        }
                        unique = format!("{key}#{count}");
                    }
                    map.insert(unique, item);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// Whether `text` cannot hold a secret nor end with the start of one, found cheaply: no
    /// JSON escape nor percent-escape (which could hide one), none of the secrets' first
    /// three bytes in it, and it does not end with the first one or two. Most fragments
    /// pass, and are handed on as they are.
    fn plainly_clear(&self, text: &str) -> bool {
        let bytes = text.as_bytes();
        memchr::memchr2(b'\\', b'%', bytes).is_none()
            && self.texts.iter().all(|secret| {
                let start = &secret.as_bytes()[..secret.len().min(3)];
                memchr::memmem::find(bytes, start).is_none()
                    && (1..start.len()).all(|len| !bytes.ends_with(&start[..len]))
            })
    }

    /// How many bytes at the end of `text` could be the start of a secret (and so must wait
    /// for the next fragment): spelled as it is, with JSON escapes (see [`spelled`]), or with
    /// percent-escapes, an escape cut short included.
    fn open_end(&self, text: &str) -> usize {
        let percent = memchr::memchr(b'%', text.as_bytes()).is_some();
        self.texts
            .iter()
            .map(|secret| {
                let escaped = spelled::open_end(text.as_bytes(), secret.as_bytes());
                let percent_escaped = if percent {
                    percent::spelled_start_at_end(text, secret, 0).unwrap_or(0)
                } else {
                    0
                };
                escaped.max(percent_escaped)
            })
            .max()
            .unwrap_or(0)
    }

    /// `response` with the secrets replaced in its text, reasoning (and its signature), tool
    /// calls (ids included: they reach traces, the history and the store), finish reason, id
    /// and raw JSON.
    pub fn scrub_response(&self, response: &mut CompletionResponse) {
        for part in response.content.iter_mut() {
            match part {
                AssistantContent::Text(text) => self.scrub(&mut text.text),
                AssistantContent::Reasoning(reasoning) => {
                    self.scrub(&mut reasoning.text);
                    if let Some(signature) = &mut reasoning.signature {
                        self.scrub(signature);
                    }
                }
                AssistantContent::ToolCall(call) => {
                    // The scrubbed id is the one the history sends back with the result.
                    self.scrub(&mut call.id);
                    self.scrub(&mut call.name);
                    self.scrub_value(&mut call.arguments);
                }
            }
        }
        self.scrub_across_parts(&mut response.content);
        if let Some(FinishReason::Other(reason)) = &mut response.finish_reason {
            self.scrub(reason);
        }
        if let Some(id) = &mut response.response_id {
            self.scrub(id);
        }
        // The provider's JSON, which `Debug` output shows and traces read the model from.
        if let Some(redacted) = response
            .raw
            .json()
            .and_then(|raw| self.redaction.redact_json(raw))
        {
            response.raw = RawResponse::new(redacted);
        }
    }

    /// A secret split across two parts of one answer shows whole where their text is
    /// joined ([`CompletionResponse::text`], a view of the reasoning): when the joined text or
    /// reasoning holds a secret no single part holds, those parts are merged into the first
    /// of them, scrubbed. (Never so for an honest answer, so the copy is no cost to one.)
    fn scrub_across_parts(&self, content: &mut OneOrMany<AssistantContent>) {
        for reasoning in [false, true] {
            let texts: Vec<&str> = content
                .iter()
                .filter_map(|part| text_of(part, reasoning))
                .collect();
            if texts.len() < 2 {
                continue;
            }
            let Cow::Owned(scrubbed) = self.redaction.redact(&texts.concat()) else {
                continue;
            };
            let mut merged = Some(scrubbed);
            let mut parts = Vec::with_capacity(content.len());
            for part in content.iter() {
                if text_of(part, reasoning).is_none() {
                    parts.push(part.clone());
                } else if let Some(text) = merged.take() {
                    let mut first = part.clone();
                    match &mut first {
                        AssistantContent::Text(part) => part.text = text,
                        AssistantContent::Reasoning(part) => part.text = text,
                        AssistantContent::ToolCall(_) => {}
                    }
                    parts.push(first);
                }
            }
            if let Some(rebuilt) = OneOrMany::many(parts) {
                *content = rebuilt;
            }
        }
    }
}

/// The text of a text part (or, with `reasoning`, of a reasoning part).
fn text_of(part: &AssistantContent, reasoning: bool) -> Option<&str> {
    match part {
        AssistantContent::Text(text) if !reasoning => Some(&text.text),
        AssistantContent::Reasoning(thought) if reasoning => Some(&thought.text),
        _ => None,
    }
}

/// Which stream of fragments a held piece belongs to.
#[derive(Debug, Clone, PartialEq)]
enum Strand {
    Text,
    Reasoning,
    Call(String),
}

/// The streamed fragments of one answer, scrubbed as they pass (see the module docs).
#[derive(Debug)]
pub struct EchoFilter {
    secrets: Arc<Secrets>,
    /// Per strand, the end of its last fragment that could start a secret, not handed out
    /// yet, in the order they were held. Held until the same strand goes on or the answer
    /// ends, not when another strand comes between: the answer joins a strand's pieces
    /// across what came between (two text parts in [`CompletionResponse::text`], a call's
    /// arguments across text), so a secret split around another strand would show there.
    held: Vec<(Strand, String)>,
    /// The fragments, as the server sent them, that ended a secret begun in a held piece:
    /// the answer's provider JSON (for Chat and Gemini its last event alone) may quote one,
    /// a piece of the secret no whole-secret scrub finds, so `Done` masks them there.
    spilled: Vec<String>,
}

impl EchoFilter {
    /// A filter for `secrets`.
    pub fn new(secrets: Arc<Secrets>) -> Self {
        EchoFilter {
            secrets,
            held: Vec::new(),
            spilled: Vec::new(),
        }
    }

    /// Hands `chunk` on to `out`, scrubbed: a fragment less what it holds back, and the
    /// assembled response after everything held.
    pub fn pass(&mut self, chunk: StreamChunk, out: &mut VecDeque<StreamChunk>) {
        if self.passes_as_it_is(&chunk) {
            out.push_back(chunk);
            return;
        }
        let (strand, name, fragment) = match chunk {
            StreamChunk::Done(mut response) => {
                self.release(out);
                self.secrets.scrub_response(&mut response);
                if !self.spilled.is_empty() {
                    mask_spilled(&mut response.raw, &self.spilled);
                }
                out.push_back(StreamChunk::Done(response));
                return;
            }
            StreamChunk::Text(text) => (Strand::Text, None, text),
            StreamChunk::Reasoning(text) => (Strand::Reasoning, None, text),
            StreamChunk::ToolCall {
                mut id,
                name,
                delta,
            } => (
                Strand::Call({
                    // Whole in every fragment, so scrubbed alike in each and in `Done`.
                    self.secrets.scrub(&mut id);
                    id
                }),
                name.map(|mut name| {
                    self.secrets.scrub(&mut name);
                    name
                }),
                delta,
            ),
        };
        let mut joined = match self.held.iter().position(|(held, _)| *held == strand) {
            Some(at) => {
                let (_, mut piece) = self.held.remove(at);
                let held_len = piece.len();
                piece.push_str(&fragment);
                let sent = piece.clone();
                self.secrets.scrub(&mut piece);
                // The held start and this fragment made a secret (rare: never in an honest
                // answer, so the copy costs it nothing).
                if piece != sent {
                    self.spilled.push(sent[held_len..].to_owned());
                }
                piece
            }
            None => fragment,
        };
        self.secrets.scrub(&mut joined);
        let open = self.secrets.open_end(&joined);
        let kept = joined.split_off(joined.len() - open);
        if !joined.is_empty() || name.is_some() {
            out.push_back(chunk_of(strand.clone(), name, joined));
        }
        if !kept.is_empty() {
            self.held.push((strand, kept));
        }
    }

    /// Whether `chunk` goes on untouched: it cannot hold a secret nor end with the start of
    /// one, and its strand holds nothing back (what it holds joins the chunk).
    fn passes_as_it_is(&self, chunk: &StreamChunk) -> bool {
        let secrets = &self.secrets;
        match chunk {
            StreamChunk::Text(text) => {
                secrets.plainly_clear(text) && !self.holds(|held| *held == Strand::Text)
            }
            StreamChunk::Reasoning(text) => {
                secrets.plainly_clear(text) && !self.holds(|held| *held == Strand::Reasoning)
            }
            StreamChunk::ToolCall { id, name, delta } => {
                secrets.plainly_clear(delta)
                    && secrets.plainly_clear(id)
                    && name
                        .as_deref()
                        .is_none_or(|name| secrets.plainly_clear(name))
                    && !self.holds(|held| matches!(held, Strand::Call(call) if call == id))
            }
            StreamChunk::Done(_) => false,
        }
    }

    /// Whether a piece of a strand that `is_it` picks is held back.
    fn holds(&self, is_it: impl Fn(&Strand) -> bool) -> bool {
        self.held.iter().any(|(strand, _)| is_it(strand))
    }

    /// Hands out what is held: the answer ends.
    fn release(&mut self, out: &mut VecDeque<StreamChunk>) {
        for (strand, piece) in self.held.drain(..) {
            out.push_back(chunk_of(strand, None, piece));
        }
    }
}

/// Masks in `raw`'s strings each of `fragments` (the non-empty ones): pieces of a secret split
/// across a stream's events, which the provider JSON of its last event may quote.
fn mask_spilled(raw: &mut RawResponse, fragments: &[String]) {
    fn mask(value: &mut Value, fragments: &[String]) {
        match value {
            Value::String(text) => {
                for fragment in fragments.iter().filter(|fragment| !fragment.is_empty()) {
                    if text.contains(fragment.as_str()) {
                        *text = text.replace(fragment.as_str(), REDACTED);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| mask(item, fragments)),
            Value::Object(fields) => fields.values_mut().for_each(|item| mask(item, fragments)),
            _ => {}
        }
    }
    if let Some(json) = raw.json() {
        let mut json = json.clone();
        mask(&mut json, fragments);
        *raw = RawResponse::new(json);
    }
}

fn chunk_of(strand: Strand, name: Option<String>, text: String) -> StreamChunk {
    match strand {
        Strand::Text => StreamChunk::Text(text),
        Strand::Reasoning => StreamChunk::Reasoning(text),
        Strand::Call(id) => StreamChunk::ToolCall {
            id,
            name,
            delta: text,
        },
    }
}

#[cfg(test)]
mod tests;
