//! The key, echoed in an answer: a server (a hostile gateway, a proxy that quotes the request)
//! can write the client's own key into the text, reasoning or tool-call arguments it answers.
//! From there it would reach the run's history, the store a durable run is kept in, traces,
//! a hook that logs the stream, and the tools the model calls. Every answer is scrubbed before
//! anything sees it: the assembled response whole, and the streamed fragments as they pass,
//! holding back the end of a fragment that could be the start of the key until the next one
//! shows whether it is (so a key split across fragments is caught too, and no fragment shows
//! its start).

use crate::completion::{CompletionResponse, RawResponse, StreamChunk};
use crate::hooks::redaction::Redaction;
use crate::message::AssistantContent;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;

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

    fn scrub(&self, text: &mut String) {
        if let Cow::Owned(redacted) = self.redaction.redact(text) {
            *text = redacted;
        }
    }

    fn scrub_value(&self, value: &mut Value) {
        if let Some(redacted) = self.redaction.redact_json(value) {
            *value = redacted;
        }
    }

    /// Whether `text` cannot hold a secret nor end with the start of one, found cheaply: no
    /// JSON escape (which could hide one), none of the secrets' first three bytes in it, and
    /// it does not end with the first one or two. Most fragments pass, and are handed on as
    /// they are.
    fn plainly_clear(&self, text: &str) -> bool {
        let bytes = text.as_bytes();
        memchr::memchr(b'\\', bytes).is_none()
            && self.texts.iter().all(|secret| {
                let start = &secret.as_bytes()[..secret.len().min(3)];
                memchr::memmem::find(bytes, start).is_none()
                    && (1..start.len()).all(|len| !bytes.ends_with(&start[..len]))
            })
    }

    /// How many bytes at the end of `text` could be the start of a secret (and so must wait
    /// for the next fragment).
    fn open_end(&self, text: &str) -> usize {
        let bytes = text.as_bytes();
        self.texts
            .iter()
            .map(|secret| {
                let secret = secret.as_bytes();
                // The earliest start, among the last `len - 1` bytes, of a suffix the secret
                // begins with. It starts with the secret's first byte, so on a character.
                let from = bytes.len().saturating_sub(secret.len() - 1);
                (from..bytes.len())
                    .find(|&at| bytes[at] == secret[0] && secret.starts_with(&bytes[at..]))
                    .map_or(0, |at| bytes.len() - at)
            })
            .max()
            .unwrap_or(0)
    }

    /// `response` with the secrets replaced in its text, reasoning, tool calls, id and raw
    /// JSON.
    pub fn scrub_response(&self, response: &mut CompletionResponse) {
        for part in response.content.iter_mut() {
            match part {
                AssistantContent::Text(text) => self.scrub(&mut text.text),
                AssistantContent::Reasoning(reasoning) => self.scrub(&mut reasoning.text),
                AssistantContent::ToolCall(call) => {
                    self.scrub(&mut call.name);
                    self.scrub_value(&mut call.arguments);
                }
            }
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
    /// The end of the last fragment that could start a secret, not handed out yet.
    held: Option<(Strand, String)>,
}

impl EchoFilter {
    /// A filter for `secrets`.
    pub fn new(secrets: Arc<Secrets>) -> Self {
        EchoFilter {
            secrets,
            held: None,
        }
    }

    /// Hands `chunk` on to `out`, scrubbed: a fragment less what it holds back, the held
    /// piece of another strand first, and the assembled response after everything held.
    pub fn pass(&mut self, chunk: StreamChunk, out: &mut VecDeque<StreamChunk>) {
        if self.held.is_none() {
            let clear = match &chunk {
                StreamChunk::Text(text) | StreamChunk::Reasoning(text) => {
                    self.secrets.plainly_clear(text)
                }
                StreamChunk::ToolCall { name, delta, .. } => {
                    self.secrets.plainly_clear(delta)
                        && name
                            .as_deref()
                            .is_none_or(|name| self.secrets.plainly_clear(name))
                }
                StreamChunk::Done(_) => false,
            };
            if clear {
                out.push_back(chunk);
                return;
            }
        }
        let (strand, name, fragment) = match chunk {
            StreamChunk::Done(mut response) => {
                self.release(out);
                self.secrets.scrub_response(&mut response);
                out.push_back(StreamChunk::Done(response));
                return;
            }
            StreamChunk::Text(text) => (Strand::Text, None, text),
            StreamChunk::Reasoning(text) => (Strand::Reasoning, None, text),
            StreamChunk::ToolCall { id, name, delta } => (
                Strand::Call(id),
                name.map(|mut name| {
                    self.secrets.scrub(&mut name);
                    name
                }),
                delta,
            ),
        };
        let mut joined = match self.held.take() {
            Some((held, mut piece)) if held == strand => {
                piece.push_str(&fragment);
                piece
            }
            Some(other) => {
                out.push_back(chunk_of(other.0, None, other.1));
                fragment
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
            self.held = Some((strand, kept));
        }
    }

    /// Hands out what is held: the stream goes on with something else, or ends.
    fn release(&mut self, out: &mut VecDeque<StreamChunk>) {
        if let Some((strand, piece)) = self.held.take() {
            out.push_back(chunk_of(strand, None, piece));
        }
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
mod tests {
    use super::*;
    use crate::message::OneOrMany;
    use serde_json::json;

    const KEY: &str = "sk-live-0123456789";

    fn secrets() -> Arc<Secrets> {
        Arc::new(Secrets::new([KEY.to_owned(), String::new(), "EMPTY".to_owned()]).unwrap())
    }

    #[test]
    fn a_placeholder_key_is_not_looked_for() {
        assert!(Secrets::new(["EMPTY".to_owned(), "k".to_owned()]).is_none());
        // Ordinary words are left alone even beside a real key.
        let mut text = "EMPTY k".to_owned();
        secrets().scrub(&mut text);
        assert_eq!(text, "EMPTY k");
    }

    fn filter() -> EchoFilter {
        EchoFilter::new(secrets())
    }

    fn pass_all(filter: &mut EchoFilter, chunks: Vec<StreamChunk>) -> Vec<StreamChunk> {
        let mut out = VecDeque::new();
        for chunk in chunks {
            filter.pass(chunk, &mut out);
        }
        out.into()
    }

    #[test]
    fn a_key_split_across_fragments_is_replaced_and_no_fragment_shows_its_start() {
        let pieces = ["key: sk-", "live-01", "23456789 done", " sk"];
        let chunks = pieces.map(|p| StreamChunk::Text(p.to_owned())).to_vec();
        let mut filter = filter();
        let mut out = pass_all(&mut filter, chunks);
        let mut end = VecDeque::new();
        filter.release(&mut end);
        out.extend(end);
        let texts: Vec<String> = out
            .iter()
            .map(|chunk| match chunk {
                StreamChunk::Text(text) => text.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(texts, ["key: ", "<redacted> done", " ", "sk"]);
    }

    #[test]
    fn only_fragments_that_cannot_hold_the_key_skip_the_scrub() {
        let secrets = secrets();
        assert!(secrets.plainly_clear("ordinary words, nothing like it"));
        for text in [
            "ends with s",
            "ends with sk",
            "has sk-l in it",
            "esc\\u0073k-live",
        ] {
            assert!(!secrets.plainly_clear(text), "{text}");
        }
        // A key hidden by a JSON escape is still found.
        let escaped = format!("key {}", KEY.replacen('s', "\\u0073", 1));
        let out = pass_all(&mut filter(), vec![StreamChunk::Text(escaped)]);
        assert!(!format!("{out:?}").contains("k-live-0123456789"), "{out:?}");
    }

    #[test]
    fn tool_call_fragments_are_held_per_call_and_keep_their_name() {
        let call = |id: &str, name: Option<&str>, delta: &str| StreamChunk::ToolCall {
            id: id.to_owned(),
            name: name.map(str::to_owned),
            delta: delta.to_owned(),
        };
        let mut filter = filter();
        let out = pass_all(
            &mut filter,
            vec![
                call("a", Some("fetch"), r#"{"url":"https://x/?k=sk-live"#),
                call("a", None, r#"-0123456789"}"#),
                call("b", Some("other"), "s"),
                StreamChunk::Text("k".to_owned()),
            ],
        );
        let expected = [
            call("a", Some("fetch"), r#"{"url":"https://x/?k="#),
            call("a", None, r#"<redacted>"}"#),
            call("b", Some("other"), ""),
            call("b", None, "s"),
            StreamChunk::Text("k".to_owned()),
        ];
        assert_eq!(format!("{out:?}"), format!("{expected:?}"));
        // A name echoing the key is scrubbed as it streams, too.
        let named = pass_all(
            &mut EchoFilter::new(secrets()),
            vec![call("c", Some(&format!("x{KEY}")), "{}")],
        );
        let expected = [call("c", Some("x<redacted>"), "{}")];
        assert_eq!(format!("{named:?}"), format!("{expected:?}"));
    }

    #[test]
    fn the_assembled_response_is_scrubbed_everywhere() {
        let content = OneOrMany::many(vec![
            AssistantContent::text(format!("echo {KEY}")),
            AssistantContent::tool_call(
                "c1",
                "send",
                json!({"to": "x", "body": [format!("k={KEY}")], KEY: 1}),
            ),
        ]);
        let mut response = CompletionResponse::new(content.unwrap());
        response.response_id = Some(format!("resp-{KEY}"));
        response.raw = RawResponse::new(json!({"model": KEY, "choices": []}));
        let mut out = VecDeque::new();
        filter().pass(StreamChunk::Done(response.clone()), &mut out);
        secrets().scrub_response(&mut response);
        let Some(StreamChunk::Done(streamed)) = out.pop_front() else {
            panic!("the response: {out:?}")
        };
        assert!(out.is_empty(), "{out:?}");
        for response in [streamed, response] {
            let shown = format!("{response:?}");
            assert!(!shown.contains(KEY), "{shown}");
            assert_eq!(response.raw.json().unwrap()["model"], "<redacted>");
            assert_eq!(response.text(), "echo <redacted>");
            let AssistantContent::ToolCall(call) = &response.content.iter().nth(1).unwrap() else {
                panic!("a call")
            };
            assert_eq!(
                call.arguments,
                json!({"to": "x", "body": ["k=<redacted>"], "<redacted>": 1})
            );
        }
    }
}
