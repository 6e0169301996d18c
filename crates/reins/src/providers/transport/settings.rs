//! What a client is configured with: the key that never shows, how it is sent, timeouts,
//! size limits and redirects.

use super::percent;
use std::fmt;
use std::time::Duration;

/// An API key. Its `Debug` and `Display` never show it, and errors that echo it back have it
/// replaced.
///
/// ```
/// use reins::providers::ApiKey;
///
/// let key = ApiKey::new("sk-live-1234");
/// assert_eq!(format!("{key:?} {key}"), "ApiKey(<redacted>) <redacted>");
/// // Only a request's header ever reads it.
/// assert_eq!(key.expose(), "sk-live-1234");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key itself, for building a request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// How the API key travels with each request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Auth {
    /// `Authorization: Bearer <key>` (OpenAI and most servers speaking its API).
    Bearer,
    /// The key as the whole value of a header: `x-api-key` (Anthropic), `x-goog-api-key`
    /// (Gemini), `api-key` (Azure OpenAI).
    Header(String),
    /// No credential is sent, even when a key is set (e.g. a gateway that adds its own).
    None,
}

impl Auth {
    /// The key in the header `name`.
    pub fn header(name: impl Into<String>) -> Self {
        Auth::Header(name.into())
    }
}

/// Timeouts of one model call. `Duration::MAX` means no limit (a century, in effect).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Establishing the connection.
    pub connect: Duration,
    /// From sending the request to the response's headers (the first byte).
    ///
    /// A call that passes it is tried again under the [`RetryPolicy`](super::RetryPolicy),
    /// as is one whose connection drops before the headers arrive. The request was sent:
    /// the server may still be working on it, so it may answer both (the same model call
    /// made, and billed, twice; the first answer is never read). A model call changes
    /// nothing but the bill, and a slow server is what the retry is for, so it is retried
    /// all the same; where a duplicate matters (a provider that stores responses, a costly
    /// model), set a first-byte timeout above the server's own, or
    /// [`RetryPolicy::none`](super::RetryPolicy::none).
    pub first_byte: Duration,
    /// The longest silence between two reads of a response body, streamed or not.
    pub idle: Duration,
    /// The whole call: every attempt, the waits between them and the whole body or stream.
    /// A server that keeps a stream alive with comments cannot hold a call past it.
    pub total: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            first_byte: Duration::from_secs(120),
            idle: Duration::from_secs(120),
            total: Duration::from_secs(600),
        }
    }
}

/// Size limits on what a server may send; each one crossed is a
/// [`CompletionError::TooLarge`](crate::completion::CompletionError::TooLarge), and memory
/// stays bounded by them. JSON is also weighed before it is parsed: a body or an event whose
/// structure would take more than 32 MiB beyond its text once parsed (millions of small
/// objects fit in a few megabytes on the wire) is `TooLarge` too, and so refused before it
/// takes that memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A whole (non-streamed) response body, in bytes; and the answer a stream assembles
    /// (its text, reasoning and tool calls, counted as they arrive, with what the decoder
    /// keeps beside them: signatures, call ids, blocks it does not stream), however many
    /// events carry it. A tool call's id counts with each fragment of its arguments, as each
    /// [`StreamChunk::ToolCall`](crate::completion::StreamChunk::ToolCall) carries it.
    pub body: usize,
    /// One server-sent event's data, in bytes.
    pub event: usize,
    /// One line of an event stream, in bytes.
    pub line: usize,
}

impl Default for Limits {
    /// 32 MiB for a body, 16 MiB for an event or a line: far above any model's answer (images
    /// included), far below what would hurt a server.
    fn default() -> Self {
        Limits {
            body: 32 << 20,
            event: 16 << 20,
            line: 16 << 20,
        }
    }
}

/// Whether HTTP redirects are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Redirects {
    /// Never (the default): a redirect is a
    /// [`CompletionError::Redirected`](crate::completion::CompletionError::Redirected) naming
    /// where the server tried to send the request.
    #[default]
    None,
    /// Up to `max` redirects to the same origin (scheme, host and port) are followed, with
    /// the credential; a redirect to another origin is an error, and the credential never
    /// leaves for it.
    SameOrigin {
        /// The most redirects followed for one request.
        max: usize,
    },
}

/// Why a provider could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// An environment variable the provider needs is not set.
    #[error("{0} is not set")]
    MissingEnv(&'static str),
    /// An environment variable is set but empty or not Unicode.
    #[error("{0} is set but empty or not valid Unicode")]
    InvalidEnv(&'static str),
    /// A header name or value is not valid in HTTP.
    #[error("invalid header `{0}`")]
    InvalidHeader(String),
    /// The base URL is not a valid absolute URL.
    #[error("invalid base URL `{0}`")]
    InvalidBaseUrl(String),
    /// The HTTP client could not be built.
    #[error("the HTTP client could not be built: {0}")]
    Client(String),
}

/// The shortest start of the key that is scrubbed where an excerpt cuts the text: fewer
/// characters tell nothing of a key, and would make ordinary text look like one.
const MIN_CUT_KEY: usize = 4;

/// Replaces every occurrence of the key in `text`, and its start where an excerpt cut the
/// text inside it (see [`scrub_secret`]).
pub(crate) fn scrub_key(text: &str, key: Option<&ApiKey>) -> String {
    match key {
        Some(key) if !key.expose().is_empty() => scrub_secret(text, key.expose()),
        _ => text.to_owned(),
    }
}

/// Replaces every occurrence of `key` (the API key, or another credential: a header's or a
/// query's value) in `text`, also spelled with percent-escapes (a URL or query string the
/// server echoes, see [`percent`](super::percent)), and the start of it where an excerpt
/// ([`excerpt`](super::excerpt)) cut the text inside it: errors quote a server's text before
/// it is scrubbed, so a secret straddling the cut would otherwise show in part.
pub(crate) fn scrub_secret(text: &str, key: &str) -> String {
    let text = text.replace(key, "<redacted>");
    let text = percent::replace_spelled(&text, key, "<redacted>").into_owned();
    let marker = super::EXCERPT_CUT;
    if !text.contains(marker) {
        return text;
    }
    let mut scrubbed = String::with_capacity(text.len());
    let mut pieces = text.split(marker).peekable();
    while let Some(piece) = pieces.next() {
        if pieces.peek().is_none() {
            scrubbed.push_str(piece);
            break;
        }
        match percent::spelled_start_at_end(piece, key, MIN_CUT_KEY) {
            Some(len) => {
                scrubbed.push_str(&piece[..piece.len() - len]);
                scrubbed.push_str("<redacted>");
            }
            None => scrubbed.push_str(piece),
        }
        scrubbed.push_str(marker);
    }
    scrubbed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_cut_by_an_excerpt_is_scrubbed_in_part_too() {
        let key = ApiKey::new("sk-live-0123456789");
        let text = format!(
            "{}{}",
            "x".repeat(super::super::EXCERPT_BYTES - 6),
            key.expose()
        );
        let quoted = scrub_key(&super::super::excerpt(&text), Some(&key));
        assert!(!quoted.contains("sk-li"), "{quoted}");
        assert!(quoted.contains("<redacted>… ["), "{quoted}");
        // Text that merely ends like a key's first characters is left alone.
        assert_eq!(
            scrub_key("ask… [3 more bytes]", Some(&key)),
            "ask… [3 more bytes]"
        );
        assert_eq!(
            scrub_key("a sk-live-0123456789 b", Some(&key)),
            "a <redacted> b"
        );
    }
}
