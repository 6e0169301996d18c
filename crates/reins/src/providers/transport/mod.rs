//! The one HTTP path every protocol shares: credentials, retries, timeouts and a total
//! deadline, size limits, redirects, streaming, and how failures become errors.
//!
//! A protocol ([`Protocol`]) only turns requests into JSON and JSON (or server-sent events)
//! back into responses; everything that touches the network is here, written once, so a fault
//! found against one provider is fixed for all of them.

mod body;
mod builder;
mod client;
mod credentials;
mod echoes;
mod model;
mod percent;
mod protocol;
mod retry;
mod send;
mod settings;
mod sse;
mod stream;

pub use builder::{Provider, ProviderBuilder, ProviderDefaults};
pub(crate) use builder::{optional_env, required_env};
pub use model::HttpModel;
pub(crate) use protocol::{MAX_ANSWER_PARTS, sealed, too_many_parts};
pub use protocol::{Protocol, StreamDecoder};
pub use retry::RetryPolicy;
pub use settings::{ApiKey, Auth, Limits, ProviderError, Redirects, Timeouts};

pub(crate) use client::HttpClient;
pub use echoes::{EchoFilter, Secrets};
pub use sse::{SseDecoder, SseError, SseEvent};

/// The most bytes of a server's text quoted in an error: enough to read what went wrong, never
/// a multi-megabyte message.
pub(crate) const EXCERPT_BYTES: usize = 2_048;

/// What follows the text an excerpt keeps: key scrubbing looks for it.
pub(crate) const EXCERPT_CUT: &str = "… [";

/// The start of `text`, at most [`EXCERPT_BYTES`] long (cut on a character boundary), marked
/// when cut, and [`printable`](crate::text::printable): an error is shown to people, and a
/// server's text must not act on their terminal.
pub(crate) fn excerpt(text: &str) -> String {
    use crate::text::printable;
    if text.len() <= EXCERPT_BYTES {
        return printable(text).into_owned();
    }
    let mut end = EXCERPT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}{EXCERPT_CUT}{} more bytes]",
        printable(&text[..end]),
        text.len() - end
    )
}

/// A JSON value as an excerpt of its text, for error messages that quote what was received.
pub(crate) fn excerpt_json(value: &serde_json::Value) -> String {
    excerpt(&value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_bounded_and_cut_on_a_character() {
        assert_eq!(excerpt("short"), "short");
        let long = "é".repeat(EXCERPT_BYTES);
        let cut = excerpt(&long);
        assert!(cut.len() < EXCERPT_BYTES + 40, "{}", cut.len());
        assert!(cut.ends_with("more bytes]"));
    }

    #[test]
    fn a_server_s_control_sequences_are_quoted_as_text() {
        assert_eq!(
            excerpt("denied\u{1b}]0;pwned\u{7}\u{1b}[2J"),
            "denied\\u001b]0;pwned\\u0007\\u001b[2J"
        );
        let long = format!("{}\u{202e}", "x".repeat(EXCERPT_BYTES - 3));
        assert!(excerpt(&long).ends_with("x\\u202e"), "{}", excerpt(&long));
    }
}
