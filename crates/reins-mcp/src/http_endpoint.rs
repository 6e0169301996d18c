//! An MCP server reached over streamable HTTP, as [`McpServer::http`](crate::McpServer::http)
//! names it: its URL, headers and token, and what of them must never be shown (the URL's
//! query and user info, the header values, the token) with what is shown instead.

use crate::echoes::MIN_ECHOED_SECRET_LEN;
use crate::hidden::Redacted;

#[derive(Clone)]
pub(crate) struct HttpEndpoint {
    /// The URL as given; its query and user information may hold secrets.
    pub(crate) url: String,
    /// The URL without query, fragment or user information: what errors and `Debug` show.
    pub(crate) shown_url: String,
    pub(crate) headers: Vec<(String, Redacted<String>)>,
    pub(crate) bearer_token: Option<Redacted<String>>,
}

impl std::fmt::Debug for HttpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpEndpoint")
            .field("url", &self.shown_url)
            .field("headers", &self.headers)
            .field("bearer_token", &self.bearer_token)
            .finish()
    }
}

impl HttpEndpoint {
    pub(crate) fn new(url: String) -> Self {
        HttpEndpoint {
            shown_url: reins::text::url_without_credentials(&url),
            url,
            headers: Vec::new(),
            bearer_token: None,
        }
    }

    /// What must not appear in error messages, each with what to show instead: the full URL
    /// (an HTTP library's error quotes it), then the keys it carries (its query's values and
    /// its user info's password, or the user info when it is a token alone, as a server or a
    /// proxy quotes them without the rest: `Cannot POST /mcp?token=…`), header values and the
    /// token. A key shorter than [`MIN_ECHOED_SECRET_LEN`] is not looked for: `?format=json`
    /// would mask an ordinary word everywhere.
    pub(crate) fn secrets(&self) -> Vec<(String, String)> {
        let mut secrets = Vec::new();
        if self.url != self.shown_url {
            secrets.push((self.url.clone(), self.shown_url.clone()));
        }
        let keys = url_keys(&self.url)
            .into_iter()
            .filter(|key| key.len() >= MIN_ECHOED_SECRET_LEN);
        let values = self
            .headers
            .iter()
            .map(|(_, value)| value.0.as_str())
            .chain(self.bearer_token.as_ref().map(|token| token.0.as_str()))
            .filter(|secret| !secret.is_empty());
        secrets.extend(
            keys.chain(values)
                .map(|secret| (secret.to_owned(), "[redacted]".to_owned())),
        );
        secrets
    }
}

/// The values in `url` that may be keys: each of its query's values, and its user info's
/// password (the user info whole when it has none: `https://TOKEN@host`).
fn url_keys(url: &str) -> Vec<&str> {
    let without_fragment = url.split('#').next().unwrap_or_default();
    let (base, query) = without_fragment
        .split_once('?')
        .unwrap_or((without_fragment, ""));
    let mut keys: Vec<&str> = query
        .split('&')
        .filter_map(|pair| pair.split_once('=').map(|(_, value)| value))
        .collect();
    let authority = base
        .split_once("://")
        .map_or("", |(_, rest)| rest.split('/').next().unwrap_or_default());
    if let Some((user_info, _)) = authority.rsplit_once('@') {
        keys.push(
            user_info
                .split_once(':')
                .map_or(user_info, |(_, password)| password),
        );
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hidden::scrub;

    /// A server or proxy may quote only the request's path and query (`Cannot POST
    /// /mcp?token=…`), or the user info, in an error page or a tool's result.
    #[test]
    fn a_key_in_the_query_or_user_info_is_scrubbed_when_quoted_alone() {
        let secrets = HttpEndpoint::new(
            "https://alice:pass-5e1d2@host/mcp?token=query-key-c04f&format=json&code=code-77a1b"
                .into(),
        )
        .secrets();
        let quoted = "HTTP 404: not found /mcp?token=query-key-c04f&format=json&code=code-77a1b \
                      for alice:pass-5e1d2";
        let errors = scrub(quoted, &secrets);
        let echoes =
            crate::echoes::redaction(&secrets).map(|echoes| echoes.redact(quoted).into_owned());
        for shown in [errors, echoes.unwrap_or_default()] {
            for secret in ["query-key-c04f", "code-77a1b", "pass-5e1d2"] {
                assert!(!shown.contains(secret), "{shown}");
            }
            // A short value is an ordinary word, not looked for.
            assert!(shown.contains("format=json"), "{shown}");
        }
    }

    #[test]
    fn scrub_replaces_every_secret() {
        let endpoint = HttpEndpoint {
            headers: vec![("a".into(), Redacted("s3cr3t".into()))],
            bearer_token: Some(Redacted("k3y".into())),
            ..HttpEndpoint::new("https://u:pw@host:8/mcp?t=q".into())
        };
        assert_eq!(
            scrub(
                "sent s3cr3t and k3y and s3cr3t to https://u:pw@host:8/mcp?t=q",
                &endpoint.secrets()
            ),
            "sent [redacted] and [redacted] and [redacted] to https://host:8/mcp"
        );
        assert_eq!(
            reins::text::url_without_credentials("http://h/p#f"),
            "http://h/p"
        );
        assert_eq!(
            reins::text::url_without_credentials("http://u@h"),
            "http://h"
        );
    }
}
